"""compare and history through the CLI, on synthetic runs in a real store."""

from __future__ import annotations

import json
from pathlib import Path

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
    table = diskbench("compare", a, b, db=db).stdout
    assert "1.400 *" in table and "(noise)" in table
    md = diskbench("compare", a, b, "--format", "markdown", db=db).stdout
    assert md.startswith("| job | dir | metric | run 1 | run 2 | ratio 2/1 | n |")
    assert "| 3/3 |" in md


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
    assert all(i in out.stdout for i in ids) and "1,002" in out.stdout
    assert diskbench("history", "--workload", "zzz", db=db).returncode == 1
