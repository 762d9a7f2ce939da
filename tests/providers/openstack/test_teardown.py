"""One machine given back while its run goes on (``release_machine``), then the run's teardown: the real
openstacksdk against the fake cloud, asserted from the requests the fake received."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from diskbench.errors import DiskbenchError
from diskbench.providers.openstack.journal import Journal
from diskbench.providers.openstack.provision import provision
from diskbench.providers.openstack.session import Waits
from diskbench.providers.openstack.spec import VolumeSpec
from diskbench.providers.openstack.teardown import release_machine, teardown
from tests.fake_openstack import FakeOpenStack

from .conftest import FAST, public_key, spec

RUN = "20261122-101500-cd34"


def _two(fake: FakeOpenStack, conn: Any, waits: Waits, journal: Journal) -> dict[str, tuple[str, list[str]]]:
    """db01 (two volumes) and db02 (one) of one run: machine -> (server id, volume ids)."""
    login = public_key()
    for name, count in (("db01", 2), ("db02", 1)):
        provision(conn, RUN, spec(name=name, flavor="b2-7", volumes=(VolumeSpec(10, "classic", count),)),
                  "203.0.113.7", login, journal=journal, waits=waits)
    return {name: (sid, [v["id"] for v in fake.volumes.values() if v["metadata"]["diskbench-machine"] == name])
            for sid, s in fake.servers.items() for name in [s["name"].rsplit("-", 1)[-1]]}


def _touching(fake: FakeOpenStack, ids: list[str], after: float) -> list[str]:
    """Requests that named one of ``ids`` in their path after ``after``."""
    return [f"{r.method} {r.path}" for r in fake.requests if r.at > after and any(i in r.path for i in ids)]


def _released(journal: Journal) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, journal.path.read_text().splitlines()) if e["event"] == "released"]


def test_a_released_machine_takes_its_server_and_volumes_and_leaves_the_run_s_shared_resources(
        fake: FakeOpenStack, conn: Any, waits: Waits, tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.jsonl")
    made = _two(fake, conn, waits, journal)
    lines: list[str] = []
    deleted = release_machine(conn, RUN, "db01", cloud="fake", journal=journal, waits=waits, line=lines.append)
    assert deleted == [f"server diskbench-{RUN}-db01", f"volume diskbench-{RUN}-db01-vol0",
                       f"volume diskbench-{RUN}-db01-vol1"]
    server, volumes = made["db01"]
    assert list(fake.servers) == [made["db02"][0]] and list(fake.volumes) == made["db02"][1]
    assert list(fake.keypairs) == [f"diskbench-{RUN}"] and len(fake.security_groups) == 1  # db02 uses them
    assert not fake.calls("DELETE", r"/os-keypairs|/security-groups")
    (entry,) = _released(journal)
    assert (entry["run"], entry["machine"], entry["cloud"], entry["ids"]) == (RUN, "db01", "fake", [server, *volumes])
    assert RUN in journal.open_runs()  # the run itself is open until its teardown
    released_at = fake.requests[-1].at

    assert teardown(conn, RUN, journal=journal, waits=waits) == [
        f"server diskbench-{RUN}-db02", f"volume diskbench-{RUN}-db02-vol0", f"keypair diskbench-{RUN}",
        f"security group diskbench-{RUN}"]
    assert fake.empty() and journal.open_runs() == {}
    assert _touching(fake, [server, *volumes], released_at) == []  # the teardown never named them again


def test_a_machine_whose_server_failed_gives_back_what_it_got(fake: FakeOpenStack, conn: Any, waits: Waits,
                                                              tmp_path: Path) -> None:
    """Found by name and labels: a server in ERROR and volumes never attached go as well."""
    fake.no_valid_host = True
    with pytest.raises(DiskbenchError, match="went to ERROR"):
        provision(conn, RUN, spec(flavor="b2-7"), "203.0.113.7", public_key(), waits=waits,
                  teardown_on_error=False)
    assert len(fake.servers) == 1 and len(fake.volumes) == 2
    release_machine(conn, RUN, "db01", waits=waits)
    assert not fake.servers and not fake.volumes and fake.keypairs and fake.security_groups
    teardown(conn, RUN, waits=waits)
    assert fake.empty()


def test_a_release_stopped_half_way_is_left_to_the_teardown(fake: FakeOpenStack, conn: Any, waits: Waits,
                                                            tmp_path: Path) -> None:
    """Ctrl-C while the server is being deleted: the release stops, the journal does not call it released,
    and the teardown deletes the server and volumes with the rest of the run."""
    journal = Journal(tmp_path / "journal.jsonl")
    made = _two(fake, conn, waits, journal)
    fake.deletes_hang = True
    stop = threading.Event()
    stopping = Waits(**{**FAST, "stop": stop})  # type: ignore[arg-type]
    threading.Timer(0.3, stop.set).start()
    with pytest.raises(DiskbenchError, match="interrupted while waiting for server"):
        release_machine(conn, RUN, "db01", journal=journal, waits=stopping)
    assert _released(journal) == [] and made["db01"][0] in fake.servers and len(fake.volumes) == 3
    fake.deletes_hang = False
    teardown(conn, RUN, journal=journal, waits=waits)
    assert fake.empty() and journal.open_runs() == {}
