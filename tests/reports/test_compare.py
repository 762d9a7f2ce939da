"""compare and history through the CLI, on synthetic runs in a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diskbench.store import Store

from ..conftest import diskbench
from ..synth import add_run


def test_compare_marks_noise_and_significance(db: Path) -> None:
    store = Store(db)
    a = add_run(store, 0, {"a": [1000, 1010, 990], "b": [500, 505, 495]})
    b = add_run(store, 1, {"a": [1400, 1390, 1410], "b": [502, 498, 500]})
    out = diskbench("compare", a, b, "--format", "json", db=db)
    assert out.returncode == 0, out.stderr
    rows = {(r["job"], r["metric"]): r for r in json.loads(out.stdout)["rows"]}
    assert rows[("local/scratch/a", "iops")]["ratios"][1] == 1.4
    assert rows[("local/scratch/a", "iops")]["significant"] == [False, True]
    assert rows[("local/scratch/b", "iops")]["significant"] == [False, False]
    assert rows[("local/scratch/a", "iops")]["samples"] == [3, 3]
    assert rows[("local/scratch/a", "iops")]["changes"][1] == pytest.approx(0.4)
    assert rows[("local/scratch/a", "p99")]["better"] == "lower"
    table = diskbench("compare", a, b, db=db, env={"COLUMNS": "80"}).stdout
    assert "+40.0% better *" in table and " ~" in table and "IOPS ↑" in table and "p99 ↓" in table
    assert table.count("local/scratch/a read") == 1  # one line per job, its metrics below it
    assert max(len(line) for line in table.splitlines()) <= 80
    md = diskbench("compare", a, b, "--format", "markdown", db=db).stdout
    assert md.startswith("| job | dir | metric | run 1 | run 2 | change 2/1 | n |")
    assert "| 3/3 |" in md and "| 1,400 |" in md


def test_compare_matches_jobs_by_configuration_when_names_differ(db: Path, tmp_path: Path,
                                                                 fio_fixtures: Path) -> None:
    """Two imports of hand-made fio files with different job names line up by rw, bs, iodepth."""
    doc = json.loads((fio_fixtures / "randread-4k-qd16.json").read_text())
    renamed = json.loads(json.dumps(doc))
    for job in renamed["jobs"]:
        job["jobname"] = "my-random-reads"
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps(doc))
    second.write_text(json.dumps(renamed))
    ids = [json.loads(diskbench("import", str(f), "--format", "json", db=db).stdout)["run"]["id"]
           for f in (first, second)]
    out = json.loads(diskbench("compare", *ids, "--format", "json", db=db).stdout)
    iops = [r for r in out["rows"] if r["metric"] == "iops"]
    assert len(iops) == 1 and iops[0]["values"][0] == iops[0]["values"][1]
    assert iops[0]["names"] == [doc["jobs"][0]["jobname"], "my-random-reads"]
    table = diskbench("compare", *ids, db=db).stdout
    assert "matched by configuration" in table and "+0.0% same" in table


def test_compare_fail_on(db: Path) -> None:
    store = Store(db)
    a = add_run(store, 0, {"a": [1000]})
    b = add_run(store, 1, {"a": [850]})
    assert diskbench("compare", a, b, db=db).returncode == 0  # exploratory by default
    out = diskbench("compare", a, b, "--fail-on", "iops:10", db=db)
    assert out.returncode == 1 and "local/scratch/a read iops run 2 worse by 15.0%" in out.stderr
    assert diskbench("compare", a, b, "--fail-on", "iops:20", db=db).returncode == 0
    bad = diskbench("compare", a, b, "--fail-on", "speed:10", db=db)
    assert bad.returncode == 2 and "one of iops, bw, p50, p99" in bad.stderr
    assert diskbench("compare", a, db=db).returncode == 2


def test_history(db: Path) -> None:
    store = Store(db)
    ids = [add_run(store, d, {"a": [1000 + d], "b": [500]}) for d in range(3)]
    out = diskbench("history", "--workload", "a", db=db)
    assert out.returncode == 0
    assert "local/scratch/a read" in out.stdout and "local/scratch/b" not in out.stdout
    assert all(i in out.stdout for i in ids) and "1,002" in out.stdout and "400 µs" in out.stdout
    assert diskbench("history", "--workload", "zzz", db=db).returncode == 1


def test_a_raw_temp_disk_and_a_formatted_one_are_different_configurations() -> None:
    """``{temp: true, raw: true}`` runs on the block device: it lines up with raw jobs, not file system ones."""
    from types import SimpleNamespace
    from typing import Any, cast

    from diskbench.reports.compare import config_key

    def kind(target: dict[str, Any]) -> str:
        row = SimpleNamespace(params={"workload": {"rw": "randread", "bs": "4k"}, "target": target},
                              result=SimpleNamespace(direction="read"))
        found = config_key(cast(Any, row))
        assert found is not None
        return found[4]

    assert kind({"temp": True}) == "fs" and kind({"lun": 0, "fs": "xfs"}) == "fs"
    assert kind({"temp": True, "raw": True}) == "raw" == kind({"device": "/dev/nvme1n1", "raw": True})
