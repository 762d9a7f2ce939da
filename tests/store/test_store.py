"""The SQLite store: schema versions, immediate commits, run lookup, crash detection."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from diskbench.engines.fio.parse import parse_fio_output
from diskbench.errors import StoreError
from diskbench.store import SCHEMA_VERSION, Store


def _group(fio_fixtures: Path):  # type: ignore[no-untyped-def]
    return parse_fio_output((fio_fixtures / "randrw-70-30-8k.json").read_text())[0]


def test_new_store_is_migrated(db: Path) -> None:
    store = Store(db)
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    store.close()
    Store(db).close()  # reopening is a no-op


def test_newer_schema_is_refused(db: Path) -> None:
    Store(db).close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="upgrade diskbench"):
        Store(db)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_text("this is not sqlite" * 100)
    with pytest.raises(StoreError, match="is not a diskbench store"):
        Store(path)


def test_results_are_visible_to_another_connection_at_once(db: Path, fio_fixtures: Path) -> None:
    store = Store(db)
    run_id = store.create_run(profile="p", profile_path=None, profile_text="x", options={})
    job = {"key": "local/scratch/a", "workload": "a", "target": "scratch", "host": "local"}
    store.add_jobs(run_id, [job])
    store.add_results(run_id, "local/scratch/a", _group(fio_fixtures), workload="a", target="scratch",
                      host="local")
    other = Store(db)  # as if the first process had crashed right now
    results = other.get_results(run_id)
    assert [r.result.direction for r in results] == ["read", "write", "total"]
    assert results[0].result.clat is not None
    assert results[0].result.clat.percentiles["p99.99"] > 0
    assert other.result_keys(run_id) == {"local/scratch/a"}


def test_run_lookup_by_prefix_and_last(db: Path) -> None:
    store = Store(db)
    a, b = (store.create_run(profile="p", profile_path=None, profile_text=None, options={}, run_id=rid)
            for rid in ("20260101-000000-aaaa", "20260102-000000-bbbb"))
    assert store.get_run("20260101")["id"] == a
    assert store.get_run("last")["id"] == b
    with pytest.raises(StoreError, match="ambiguous"):
        store.get_run("2026")
    with pytest.raises(StoreError, match="no run 'zzz'"):
        store.get_run("zzz")


def test_running_run_of_a_dead_process_shows_as_interrupted(db: Path) -> None:
    store = Store(db)
    run_id = store.create_run(profile="p", profile_path=None, profile_text=None, options={})
    assert store.get_run(run_id)["status"] == "running"  # this process is alive
    store.update_run(run_id, pid=2**22 + 12345)  # no such process
    assert store.get_run(run_id)["status"] == "interrupted"
