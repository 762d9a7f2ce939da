"""The store on SQLite and on PostgreSQL: schema versions, immediate commits, run lookup, crash detection."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from diskbench.engines.fio.parse import parse_fio_output
from diskbench.errors import StoreError
from diskbench.store import SCHEMA_VERSION, Store

from .conftest import Server, scalar


def _group(fio_fixtures: Path):  # type: ignore[no-untyped-def]
    return parse_fio_output((fio_fixtures / "randrw-70-30-8k.json").read_text())[0]


def version(store: Store) -> int:
    sql = "PRAGMA user_version" if store.dialect == "sqlite" else "SELECT version FROM diskbench_schema"
    return int(scalar(store, sql))


def test_new_store_is_migrated(store_at: str) -> None:
    store = Store(store_at)
    assert version(store) == SCHEMA_VERSION
    store.close()
    Store(store_at).close()  # reopening is a no-op


def test_newer_schema_is_refused(store_at: str) -> None:
    store = Store(store_at)
    if store.dialect == "sqlite":
        store.close()
        conn = sqlite3.connect(store_at)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        conn.close()
    else:
        store.db.execute(f"UPDATE diskbench_schema SET version = {SCHEMA_VERSION + 1}")
        store.close()
    with pytest.raises(StoreError, match="upgrade diskbench"):
        Store(store_at)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_text("this is not sqlite" * 100)
    with pytest.raises(StoreError, match="is not a diskbench store"):
        Store(path)


def test_a_database_of_someone_else_is_refused(pg_schema: str, pg_server: Server) -> None:
    import psycopg

    with psycopg.connect(pg_schema, autocommit=True) as conn:
        conn.execute("CREATE TABLE runs (id int)")
    with pytest.raises(StoreError, match="is not a diskbench store.*table runs"):
        Store(pg_schema)


def test_results_are_visible_to_another_connection_at_once(store_at: str, fio_fixtures: Path) -> None:
    store = Store(store_at)
    run_id = store.create_run(profile="p", profile_path=None, profile_text="x", options={})
    job = {"key": "local/scratch/a", "workload": "a", "target": "scratch", "host": "local"}
    store.add_jobs(run_id, [job])
    store.add_results(run_id, "local/scratch/a", _group(fio_fixtures), workload="a", target="scratch",
                      host="local")
    other = Store(store_at)  # as if the first process had crashed right now
    results = other.get_results(run_id)
    assert [r.result.direction for r in results] == ["read", "write", "total"]
    assert results[0].result.clat is not None
    assert results[0].result.clat.percentiles["p99.99"] > 0
    assert other.result_keys(run_id) == {"local/scratch/a"}


def test_run_lookup_by_prefix_and_last(store_at: str) -> None:
    store = Store(store_at)
    a, b = (store.create_run(profile="p", profile_path=None, profile_text=None, options={}, run_id=rid)
            for rid in ("20260101-000000-aaaa", "20260102-000000-bbbb"))
    assert store.get_run("20260101")["id"] == a
    assert store.get_run("last")["id"] == b
    assert store.get_run("last~1")["id"] == a  # the run before the last
    assert store.get_run("bbbb")["id"] == b and store.get_run("aaa")["id"] == a  # the end of an id
    with pytest.raises(StoreError, match="no run 'last~2'"):
        store.get_run("last~2")
    with pytest.raises(StoreError, match="ambiguous"):
        store.get_run("2026")
    with pytest.raises(StoreError, match="no run 'zzz'"):
        store.get_run("zzz")


def test_running_run_of_a_dead_process_shows_as_interrupted(store_at: str) -> None:
    store = Store(store_at)
    run_id = store.create_run(profile="p", profile_path=None, profile_text=None, options={})
    assert store.get_run(run_id)["status"] == "running"  # this process is alive
    store.update_run(run_id, pid=2**22 + 12345)  # no such process
    assert store.get_run(run_id)["status"] == "interrupted"


def test_segments_are_kept_in_order_replaced_copied_and_deleted_with_their_run(store_at: str, tmp_path: Path) -> None:
    """A segmented stop: job's segments (DiskSpd): each stored as it ends, read back in order, an earlier
    attempt's row of the same number replaced, carried by ``store copy``, gone with the run."""
    from diskbench.store.copy import copy_store

    src = Store(tmp_path / "src.sqlite")
    run_id = src.create_run(profile="p", profile_path=None, profile_text=None, options={})
    for number in (2, 1, 2):
        src.add_segment(run_id, "win1/data/mix", number, seconds=5, started=f"t{number}", finished="f",
                        groups=[{"name": f"g{number}", "directions": []}])
    src.add_segment(run_id, "win1/data/other", 1, seconds=3, started="t", finished="f", groups=[])
    got = src.segments(run_id, "win1/data/mix")
    assert [(s["number"], s["seconds"], s["groups"][0]["name"]) for s in got] == [(1, 5, "g1"), (2, 5, "g2")]
    src.finish_run(run_id)
    dst = Store(store_at)
    assert copy_store(src, dst).counts["segments"] == 3
    assert dst.segments(run_id, "win1/data/mix") == got
    dst.delete_run(run_id)
    assert dst.segments(run_id, "win1/data/mix") == [] and dst.segments(run_id, "win1/data/other") == []
