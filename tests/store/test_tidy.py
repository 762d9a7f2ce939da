"""runs delete and runs prune: artifacts go with the run; running runs and baselines stay."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from diskbench.store import Store

from ..conftest import diskbench
from ..synth import add_run
from .conftest import scalar


def _artifact(store: Store, run_id: str) -> Path:
    path = store.run_artifacts(run_id) / "01-job" / "output.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}" * 1000)
    return path


def test_delete_removes_results_and_artifacts_and_dry_run_changes_nothing(store_at: str) -> None:
    store = Store(store_at)
    failed = add_run(store, 0, {"a": [10]}, failed=("a",), status="failed")
    art = _artifact(store, failed)
    dry = diskbench("runs", "delete", failed, "--dry-run", db=store_at)
    assert dry.returncode == 0 and f"would delete {failed}" in dry.stdout and "nothing was changed" in dry.stdout
    assert art.exists() and Store(store_at).get_run(failed)
    out = diskbench("runs", "delete", failed[:12], db=store_at)
    assert out.returncode == 0 and f"deleted {failed}" in out.stdout and "1 run(s) deleted" in out.stdout
    assert not art.parent.parent.exists()
    assert diskbench("show", failed, db=store_at).returncode == 2  # no such run (any more)
    assert scalar(Store(store_at), "SELECT COUNT(*) FROM results") == 0


def test_baselines_stay_unless_forced_and_running_runs_always_stay(store_at: str) -> None:
    store = Store(store_at)
    baseline = add_run(store, 0, {"a": [1000]})
    running = add_run(store, 1, {"a": [1000]}, status="running")
    store.update_run(running, pid=os.getpid(), hostname=os.uname().nodename)
    out = diskbench("runs", "delete", baseline, running, db=store_at)
    assert out.returncode == 1
    assert f"kept {baseline}" in out.stdout and "gate baseline (--force deletes it)" in out.stdout
    assert f"kept {running}" in out.stdout and "still running" in out.stdout
    forced = diskbench("runs", "delete", baseline, running, "--force", db=store_at)
    assert f"deleted {baseline}" in forced.stdout and f"kept {running}" in forced.stdout


def test_prune_failed_older_than(store_at: str) -> None:
    store = Store(store_at)
    old_failed = add_run(store, 0, {"a": [1]}, failed=("a",), status="failed")
    old_partial = add_run(store, 1, {"a": [1], "b": [2]}, failed=("b",), status="partial")
    old_ok = add_run(store, 2, {"a": [1000]})
    new_failed = add_run(store, 21, {"a": [1]}, failed=("a",), status="interrupted")
    for run_id in (old_failed, old_partial, old_ok, new_failed):
        _artifact(store, run_id)
    # the synthetic runs start on 2026-11-01 (+ day); days 0-2 are more than 10 days old
    assert diskbench("runs", "prune", db=store_at).returncode == 2
    days = (datetime.now(timezone.utc) - datetime(2026, 11, 3, tzinfo=timezone.utc)).days
    dry = diskbench("runs", "prune", "--failed", "--older-than", f"{max(days - 1, 1)}d", "--dry-run", db=store_at)
    assert dry.returncode == 0
    assert all(f"would delete {r}" in dry.stdout for r in (old_failed, old_partial))
    assert old_ok not in dry.stdout and new_failed not in dry.stdout
    out = diskbench("runs", "prune", "--failed", db=store_at)
    assert out.returncode == 0 and "3 run(s) deleted" in out.stdout
    left = {r["id"] for r in Store(store_at).list_runs()}
    assert left == {old_ok}
    assert not (store.artifacts_root / old_failed).exists() and (store.artifacts_root / old_ok).exists()
    assert "kept" in diskbench("runs", "prune", "--older-than", "1d", db=store_at).stdout  # the baseline stays
    assert diskbench("runs", db=store_at).stdout.count(old_ok) == 1  # the listing still works
