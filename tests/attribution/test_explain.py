"""``explain`` says what a job spent on the machines a provider created: its own time on them as
VM-minutes, the money at each machine's rate, and those machines' whole use, from what the run
stored (the job's start and end, and ``machine_use`` as ``run`` records it at its end)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from diskbench import api
from diskbench.attribution.explain import spent
from diskbench.schemas import schema
from diskbench.store import Store

from ..conftest import diskbench
from ..synth import result

# vm1 was held 12 minutes for $0.24 ($1.20 an hour); c1 and c2 (a client group's) 10 minutes each,
# c2 without a price. As ``run`` stores it (MachineUse.to_json).
USES = [{"machine": "vm1", "size": "Standard_E8ds_v4", "vm_minutes": 12.0, "usd": 0.24},
        {"machine": "c1", "size": "Standard_D2s_v5", "vm_minutes": 10.0, "usd": 0.05},
        {"machine": "c2", "size": "Standard_D2s_v5", "vm_minutes": 10.0, "usd": None}]


def _store(db: Path, uses: list[dict[str, Any]] | None = USES) -> tuple[Store, str]:
    """A run with a job on vm1 that took 90 s, one on the client group g (c1, c2) that took 30 s."""
    store = Store(db)
    run_id = store.create_run(profile="p", profile_path=None, profile_text="name: p\n", options={})
    jobs = [("vm1/temp/randread", "vm1", {}), ("g/shared/mixed", "g", {"clients": ["c1", "c2"]})]
    store.add_jobs(run_id, [{"key": k, "workload": k.rsplit("/", 1)[-1], "target": "temp", "host": h,
                             "base_key": k, "params": p} for k, h, p in jobs])
    times = {"vm1/temp/randread": ("2026-01-01T10:00:00+00:00", "2026-01-01T10:01:30+00:00"),
             "g/shared/mixed": ("2026-01-01T10:02:00+00:00", "2026-01-01T10:02:30+00:00")}
    for key, host, _ in jobs:
        store.update_job(run_id, key, status="done", started=times[key][0], finished=times[key][1])
        store.add_results(run_id, key, result(1000.0), workload=key.rsplit("/", 1)[-1], target="temp", host=host)
    store.update_run(run_id, status="completed", pid=None, facts={"machine_use": uses} if uses else {})
    return store, run_id


def test_a_job_spends_its_own_time_at_its_machines_rate(db: Path) -> None:
    store, run_id = _store(db)
    try:
        by_job = {e.result.workload: e for e in api.explain(run_id, store=store)}
    finally:
        store.close()
    one = by_job["randread"].spent
    assert one is not None and one.machines == ["vm1"]
    # 90 s = 1.5 VM-minutes; $1.20 an hour for 90 s = $0.03
    assert (one.seconds, one.vm_minutes, one.usd) == (90.0, 1.5, pytest.approx(0.03))
    assert (one.total_vm_minutes, one.total_usd) == (12.0, 0.24)
    assert "  spent: 1.50 VM-min (90 s on vm1), $0.03; vm1 in all: 12.0 VM-min, $0.24" in by_job["randread"].lines
    # the client group held both clients for 30 s: 1 VM-minute; c2 has no price, so neither has the job
    group = by_job["mixed"].spent
    assert group is not None and group.machines == ["c1", "c2"] and group.vm_minutes == 1.0
    assert group.usd is None and group.total_usd is None and group.total_vm_minutes == 20.0
    assert "  spent: 1.00 VM-min (30 s on 2 machines); 2 machines in all: 20.0 VM-min" in by_job["mixed"].lines


def test_the_cli_prints_it_in_80_columns_and_json_has_it(db: Path) -> None:
    _store(db)[0].close()
    text = diskbench("explain", "last", db=db)
    assert text.returncode == 0, text.stderr
    assert "  spent: 1.50 VM-min (90 s on vm1), $0.03; vm1 in all: 12.0 VM-min, $0.24\n" in text.stdout
    assert all(len(line) <= 80 for line in text.stdout.splitlines())
    doc = json.loads(diskbench("explain", "last", "--format", "json", db=db).stdout)
    jsonschema.validate(doc, schema("explain"), cls=jsonschema.Draft202012Validator)
    by_job = {r["workload"]: r["spent"] for r in doc["results"]}
    assert by_job["randread"] == {"seconds": 90.0, "machines": ["vm1"], "vm_minutes": 1.5, "usd": 0.03,
                                  "machine_vm_minutes": 12.0, "machine_usd": 0.24}
    assert by_job["mixed"]["usd"] is None and by_job["mixed"]["vm_minutes"] == 1.0


def test_machines_no_provider_created_cost_nothing_said(db: Path) -> None:
    """This machine and SSH hosts that exist: diskbench does not count what they cost, and says nothing."""
    store, run_id = _store(db, uses=None)
    try:
        explained = api.explain(run_id, store=store)
    finally:
        store.close()
    assert all(e.spent is None and not any("spent:" in line for line in e.lines) for e in explained)


def test_a_job_without_both_times_is_not_guessed() -> None:
    job = {"key": "vm1/temp/r", "host": "vm1", "params": {}, "started": "2026-01-01T10:00:00+00:00", "finished": None}
    assert spent(job, USES) is None and spent(None, USES) is None
    free = spent({**job, "finished": "2026-01-01T10:00:30+00:00"}, [{**USES[0], "usd": 0.0}])
    assert free is not None and free.usd == 0.0  # a machine that cost nothing costs its jobs nothing
