"""Schema 3: histograms gzip'd in new rows, plain JSON rows of older stores still read, and the
gate's baseline picked in SQL (same testbed, newest N, window, rejected runs left out); on SQLite
and PostgreSQL alike."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from diskbench.engines.fio.parse import parse_fio_output
from diskbench.store import Store
from diskbench.store.schema import statements
from diskbench.store.store import MIGRATIONS

from .conftest import scalar


def _group(fio_fixtures: Path):  # type: ignore[no-untyped-def]
    return parse_fio_output((fio_fixtures / "randread-4k-numjobs4-group-reporting.jsonplus.json").read_text())[0]


def _run(store: Store, group, testbed: str = "tb1", status: str = "completed") -> str:  # type: ignore[no-untyped-def]
    run_id = store.create_run(profile="p", profile_path=None, profile_text="x", options={})
    store.add_jobs(run_id, [{"key": "h/t/a", "workload": "a", "target": "t", "host": "h"}])
    store.update_job(run_id, "h/t/a", status="done" if status == "completed" else "failed", testbed=testbed)
    store.add_results(run_id, "h/t/a", group, workload="a", target="t", host="h")
    store.finish_run(run_id, status)
    return run_id


def _schema_2(store_at: str) -> None:
    """A store as diskbench left it at schema version 2."""
    if store_at.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store_at, autocommit=True) as conn:
            for index in range(2):
                for statement in statements(index, "postgresql"):
                    conn.execute(statement)  # type: ignore[arg-type]
            conn.execute("CREATE TABLE diskbench_schema (version INTEGER NOT NULL)")
            conn.execute("INSERT INTO diskbench_schema VALUES (2)")
            _old_rows(conn, "%s")
        return
    Path(store_at).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(store_at)
    for step in MIGRATIONS[:2]:
        assert isinstance(step, str)
        conn.executescript(step)
    conn.execute("PRAGMA user_version = 2")
    _old_rows(conn, "?")
    conn.commit()
    conn.close()


def _old_rows(conn, mark: str) -> None:  # type: ignore[no-untyped-def]
    conn.execute("INSERT INTO runs (id, profile, started, status) VALUES ('r1', 'p', '2026-01-01T00:00:00+00:00',"
                 " 'completed')")
    conn.execute("INSERT INTO jobs (run_id, key, seq, workload, target, host) VALUES ('r1', 'k', 0, 'a', 't', 'h')")
    conn.execute("INSERT INTO results (run_id, job_key, workload, target, host, engine, engine_version, direction,"
                 " iops, bw_bytes_per_s, ios, io_bytes, runtime_s, clat, clat_bins, created) VALUES"
                 f" ('r1', 'k', 'a', 't', 'h', 'fio', '3.33', 'read', 1, 1, 1, 1, 1, {mark}, {mark}, 'now')",
                 (json.dumps({"min": 1, "mean": 2, "max": 3, "stdev": 0, "p99": 3.0}), json.dumps({"100": 7})))


def test_schema_2_rows_stay_readable(store_at: str, fio_fixtures: Path) -> None:
    _schema_2(store_at)
    store = Store(store_at)
    (old,) = store.get_results("r1")
    assert old.result.clat is not None and old.result.clat.percentiles == {"p99": 3.0}
    assert list(store.histograms("r1").values()) == [{100: 7}]
    assert scalar(store, "SELECT COUNT(*) FROM results_view") == 1  # the view of schema 6 reads old rows too


def test_new_rows_keep_histograms_compressed_and_small(store_at: str, fio_fixtures: Path) -> None:
    store = Store(store_at)
    group = _group(fio_fixtures)
    run_id = _run(store, group)
    bins = next(d.clat.bins for d in group.directions if d.clat and d.clat.bins)
    assert bins in store.histograms(run_id).values()
    sizes = [(r["size"], r["packed"], r["clat_bins"]) for r in store.backend.rows(
        "SELECT length(clat) + length(errors) + length(notes) + 200 AS size, length(clat_bins_z) AS packed, clat_bins"
        " FROM results WHERE run_id = ?", (run_id,))]
    for row_bytes, packed, plain in sizes:
        assert row_bytes <= 4096 and plain is None
        assert packed is None or packed < len(json.dumps(bins))


def test_baseline_is_the_newest_runs_of_the_same_testbed(store_at: str, fio_fixtures: Path) -> None:
    store = Store(store_at)
    group = _group(fio_fixtures)
    runs = [_run(store, group) for _ in range(4)]
    other = _run(store, group, testbed="tb2")
    rejected = _run(store, group)
    store.set_verdict(rejected, "REGRESSED", False)
    failed = _run(store, group, status="failed")
    current = _run(store, group)
    picked = store.baseline_results(current, "tb1", "2000-01-01T00:00:00+00:00", "2999-01-01T00:00:00+00:00", 3)
    assert len(picked) == 3 and {rid for rid, _ in picked} <= set(runs)  # (same second: any 3)
    assert all(r.testbed == "tb1" for _, results in picked for r in results)
    assert other not in [rid for rid, _ in picked] and failed not in [rid for rid, _ in picked]
    assert store.job_seen(current, "h/t/a", "2000-01-01T00:00:00+00:00", "2999-01-01T00:00:00+00:00")
    assert not store.job_seen(current, "h/t/a", "2999-01-01T00:00:00+00:00", "2999-01-02T00:00:00+00:00")
