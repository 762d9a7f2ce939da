"""The lifecycle every cloud provider shares: labels, the journal written first, the stale rule."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from diskbench.providers.azure.groups import Journal as AzureJournal
from diskbench.providers.lifecycle import labels, stale, when
from diskbench.providers.openstack.journal import Journal as OpenStackJournal

NOW = datetime(2026, 11, 25, 12, tzinfo=timezone.utc)


def test_one_journal_file_serves_both_providers_and_old_azure_lines(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    # a line Azure wrote before the journal recorded providers, and a line cut short by a crash
    path.write_text(json.dumps({"time": "2026-11-01T00:00:00+00:00", "event": "creating-group",
                                "group": "diskbench-old", "run": "old"}) + "\n" + '{"event": "creat\n')
    azure, openstack = AzureJournal(path), OpenStackJournal(path)
    azure.write("creating-group", group="diskbench-r1", run="r1")
    openstack.write("creating", run="r2", cloud="lab")
    openstack.write("creating", run="r3", cloud="lab")
    openstack.write("deleted", run="r3")
    azure.write("deleted-group", group="diskbench-old")
    assert set(azure.open_groups()) == {"diskbench-r1"}
    assert set(openstack.open_runs()) == {"r2"} and openstack.open_runs()["r2"]["cloud"] == "lab"


def test_labels_and_the_stale_rule() -> None:
    tags = labels("r1", lifetime=timedelta(hours=2), now=NOW)
    assert tags["diskbench"] == "true" and tags["diskbench-run"] == "r1"
    created, expires = when(tags["diskbench-created"]), when(tags["diskbench-expires"])
    assert (created, expires) == (NOW, NOW + timedelta(hours=2))
    assert stale(created, expires, NOW + timedelta(hours=1)) is None
    assert stale(created, expires, NOW + timedelta(hours=2)) == "expired"
    assert stale(created, expires, NOW + timedelta(hours=1), timedelta(minutes=30)) == "older than 0:30:00"
    assert stale(None, None, NOW, timedelta(0)) is None  # nothing known: only the journal or a run id finds it
    assert when("not a time") is None and when(None) is None
