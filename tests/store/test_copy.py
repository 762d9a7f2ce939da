"""``diskbench store copy``: a 1,000-run SQLite history to PostgreSQL and back reads the same, run
by run (``show --format json``), with its journal, histograms and raw outputs; counts checked."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from diskbench import api
from diskbench.engines.fio.parse import parse_fio_output
from diskbench.errors import StoreError
from diskbench.model import GroupResult, Series
from diskbench.reports.formats import format_results
from diskbench.store import Store
from diskbench.store.copy import copy_store

from ..conftest import diskbench
from ..synth import result

RICH = ("randrw-70-30-8k.json", "randread-4k-numjobs4-group-reporting.jsonplus.json", "fio-2.21-randread-4k-qd16.json")


def _rich_groups(fio_fixtures: Path) -> list[GroupResult]:
    """Real fio results with histograms, attribution and per-second series, as a run stores them."""
    out = []
    for n, name in enumerate(RICH):
        group = parse_fio_output((fio_fixtures / name).read_text())[0]
        dirs = [dataclasses.replace(d, bound={"kind": "vm", "ratio": 0.97 + n / 100, "text": "VM cap"},
                                    warnings=[f"short run ({n} s)"],
                                    series=Series(1.0, [1000.0 + n, 1001.5], [4.1e6, 4.2e6], [80.25, None],
                                                  "fio interval logs"))
                for d in group.directions]
        out.append(dataclasses.replace(group, directions=dirs))
    return out


def history(store: Store, runs: int, fio_fixtures: Path) -> list[str]:
    """``runs`` runs of every kind: completed, failed, partial, interrupted, imported, gated,
    several machines, repeats, journal entries and raw outputs."""
    rich = _rich_groups(fio_fixtures)
    ids = []
    for n in range(runs):
        run_id = f"2026{n // 400 + 1:02d}{n % 28 + 1:02d}-{n:06d}-{n % 65536:04x}"
        origin = "import" if n % 50 == 7 else "run"
        store.create_run(profile=f"p{n % 4}", profile_path=f"/profiles/p{n % 4}.yaml", profile_text="name: p\n",
                         options={"repeats": 2, "n": n}, origin=origin, run_id=run_id,
                         facts={"source_file": "/x.json"} if origin == "import" else None)
        jobs = [{"key": f"m{m}/t/w{w}#{r}", "workload": f"w{w}", "target": "t", "host": f"m{m}",
                 "base_key": f"m{m}/t/w{w}", "repeat": r, "params": {"bs": f"{4 << w}k"}, "rendered": f"[w{w}]\n"}
                for m in range(1 + n % 2) for w in range(2) for r in (1, 2)]
        store.add_jobs(run_id, jobs)
        for m in range(1 + n % 2):
            store.add_host_facts(run_id, f"m{m}", {"hostname": f"vm-{m}", "cpus": 2 + m, "fio_version": "3.33"})
        failed = {0: set(), 1: {jobs[0]["key"]}, 2: {j["key"] for j in jobs}}[n % 9 if n % 9 < 3 else 0]
        for i, job in enumerate(jobs):
            if job["key"] in failed:
                store.update_job(run_id, job["key"], status="failed", message="fio: exit 1 \u2013 no space",
                                 exit_code=1)
                continue
            store.update_job(run_id, job["key"], status="done", testbed=f"tb-{n % 4}-{job['base_key']}",
                             facts={"path": f"/mnt/{n}", "fstype": "xfs"}, started="2026-01-01T00:00:00+00:00",
                             exit_code=0)
            group = rich[(n + i) % 3] if n % 10 == 0 else result(1000.0 + n + i / 3, p99=400.0 + n % 7)
            store.add_results(run_id, job["key"], group, workload=job["workload"], target="t", host=job["host"],
                              repeat=job["repeat"])
        if n % 10 == 0:
            entry = store.add_prepared(run_id, "m0", "mount", f"/mnt/diskbench-{n}", {"device": "/dev/sdb"})
            if n % 20 == 0:
                store.release_prepared(entry)
            unit = store.run_artifacts(run_id) / "00-w0"
            unit.mkdir(parents=True, exist_ok=True)
            (unit / "job.fio").write_text(f"[w0]\nsize={n}M\n")
            (unit / "output.json.gz").write_bytes(b"\x1f\x8b" + bytes(range(256)) * 4)
        store.finish_run(run_id, "interrupted" if n % 9 == 3 else "partial" if origin == "import" else None)
        if n % 5 == 0:
            store.set_verdict(run_id, "REGRESSED" if n % 15 == 0 else "PASS", n % 15 != 0)
        store.update_run(run_id, started=f"2026-{n // 400 + 1:02d}-{n % 28 + 1:02d}T{n % 24:02d}:00:00+00:00")
        ids.append(run_id)
    return ids


def shown(store: Store, run_id: str) -> str:
    """``diskbench show RUN --format json``, in this process."""
    found = api.results(run_id, store=store)
    text = format_results("json", found.run, found.stored)
    assert isinstance(text, str)
    return text


def test_a_thousand_runs_to_postgresql_and_back_read_the_same(tmp_path: Path, pg_schema: str,
                                                              fio_fixtures: Path) -> None:
    sqlite_a = Store(tmp_path / "a" / "db.sqlite")
    ids = history(sqlite_a, 1000, fio_fixtures)
    pg = Store(pg_schema)
    there = copy_store(sqlite_a, pg)
    assert len(there.copied) == 1000 and there.counts["raw outputs"] == 200
    back = Store(tmp_path / "b" / "db.sqlite")
    copy_store(pg, back)
    for run_id in ids:
        before = shown(sqlite_a, run_id)
        assert shown(pg, run_id) == before, run_id
        assert shown(back, run_id) == before, run_id
    sample = ids[::97]
    for run_id in sample:
        assert back.latency_bins(run_id) == sqlite_a.latency_bins(run_id)
        assert [{**e, "id": 0} for e in back.prepared(run_id)] == [{**e, "id": 0} for e in sqlite_a.prepared(run_id)]
        assert back.artifact_names(run_id) == sqlite_a.artifact_names(run_id)
        for name in sqlite_a.artifact_names(run_id):
            assert back.read_artifact(run_id, name) == sqlite_a.read_artifact(run_id, name)
    assert [r["id"] for r in back.list_runs()] == [r["id"] for r in sqlite_a.list_runs()]


def test_the_command_both_ways_again_and_a_difference(tmp_path: Path, pg_schema: str, fio_fixtures: Path) -> None:
    src = tmp_path / "src.sqlite"
    ids = history(Store(src), 12, fio_fixtures)
    out = diskbench("store", "copy", str(src), pg_schema)
    assert out.returncode == 0, out.stderr
    assert "copied 12 run(s) (" in out.stdout and "4 raw outputs" in out.stdout
    assert "checked: the same rows and raw outputs for all 12 run(s)" in out.stdout
    again = diskbench("store", "copy", str(src), pg_schema)
    assert "copied 0 run(s)" in again.stdout and "12 run(s) were there already" in again.stdout
    back = tmp_path / "back.sqlite"
    assert diskbench("store", "copy", pg_schema, str(back)).returncode == 0
    assert diskbench("show", ids[3], "--format", "json", db=back).stdout == \
        diskbench("show", ids[3], "--format", "json", db=src).stdout
    with sqlite3.connect(back) as conn:  # DST's copy of a run differs from SRC's: said, exit 1
        conn.execute("DELETE FROM results WHERE id = (SELECT MIN(id) FROM results WHERE run_id = ?)", (ids[0],))
    differ = diskbench("store", "copy", pg_schema, str(back))
    assert differ.returncode == 1 and "1 run(s) differ" in differ.stderr and f"{ids[0]}: results" in differ.stderr
    assert diskbench("store", "copy", str(src), str(src)).returncode == 1


def test_a_running_run_is_left_out(store_at: str, tmp_path: Path) -> None:
    src = Store(tmp_path / "src.sqlite")
    live = src.create_run(profile="p", profile_path=None, profile_text=None, options={})  # this process: alive
    done = copy_store(src, Store(store_at))
    assert done.running == [live] and done.copied == []


def test_a_store_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    out = diskbench("store", "copy", str(tmp_path / "a.sqlite"), "postgresql://u:secret@127.0.0.1:1/x")
    assert out.returncode == 1 and "cannot reach PostgreSQL" in out.stderr and "secret" not in out.stderr
    with pytest.raises(StoreError):
        copy_store(Store(tmp_path / "a.sqlite"), Store(tmp_path / "a.sqlite"))
    assert json.loads(diskbench("store", "--format", "json", db=tmp_path / "a.sqlite").stdout)["runs"] == 0
