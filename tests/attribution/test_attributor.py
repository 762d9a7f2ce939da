"""The runner's attribution step on real fio results: fio's own rate limit stands for a platform cap."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from diskbench.attribution.attributor import Attributor
from diskbench.attribution.limit import Limit
from diskbench.engines.base import Place
from diskbench.engines.fio.logs import attach_series
from diskbench.engines.fio.parse import parse_fio_output
from diskbench.engines.fio.render import render_fio
from diskbench.errors import DiskbenchError
from diskbench.expand import build_plan
from diskbench.model import DirectionResult, GroupResult, Series
from diskbench.plan import Unit
from diskbench.profile import load_profile

from ..conftest import needs_fio

RATE = 40  # IOPS per job; 5 jobs -> 200 IOPS, the "cap"


def _job(tmp_path: Path) -> Unit:
    plan = build_plan(load_profile("local"), target_dir=str(tmp_path))
    job = next(j for j in plan.units if j.workload.name == "randread-4k")
    w = job.workload.model_copy(update={"size": "4M", "runtime": "4s", "ramp_time": None, "time_based": True,
                                        "numjobs": 5, "iodepth": 1, "ioengine": "psync", "rate_iops": RATE,
                                        "deliberate": None})  # the bundled profile's reasons would quiet them
    return replace(job, workload=w)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Unit, list[GroupResult], Path]:
    tmp_path = tmp_path_factory.mktemp("fio")
    job = _job(tmp_path)
    (tmp_path / "job.fio").write_text(render_fio(job, str(tmp_path), logs=True))
    out = subprocess.run(["fio", "--output-format=json+", "--output=out.json", "job.fio"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    groups = parse_fio_output((tmp_path / "out.json").read_text())
    attach_series(tmp_path, groups)
    return job, groups, tmp_path


def _attribute(measured: tuple[Unit, list[GroupResult], Path], limits: list[Limit]) -> DirectionResult:
    job, groups, tmp_path = measured
    fresh = [replace(g, directions=[replace(d) for d in g.directions]) for g in groups]
    Attributor(lambda _t: limits, cpus=2).unit(job, [Place(job.workload, job.target_label, str(tmp_path))], fresh)
    return fresh[0].directions[0]


@needs_fio
def test_a_result_at_a_cap_is_bound_by_it(measured: tuple[Unit, list[GroupResult], Path]) -> None:
    cap = Limit("disk_iops", 5 * RATE, "P-lab", "lab table (fio rate_iops)")
    d = _attribute(measured, [cap, Limit("vm_uncached_iops", 10 * 5 * RATE, "VM-lab", "lab table")])
    assert d.bound is not None
    assert (d.bound["kind"], d.bound["limit"], d.bound["limit_kind"]) == ("disk", 200, "disk_iops"), d.bound["text"]
    assert 0.9 <= d.bound["ratio"] <= 1.1
    assert d.bound["text"].startswith("read ") and "of P-lab 200 IOPS: bound by the disk" in d.bound["text"]
    assert [lim["scope"] for lim in d.bound["limits"]] == ["P-lab", "VM-lab"]  # stored with the result
    assert d.series is not None and len(d.series.iops) >= 2


@needs_fio
def test_no_bound_is_claimed_well_below_every_limit(measured: tuple[Unit, list[GroupResult], Path]) -> None:
    d = _attribute(measured, [Limit("disk_iops", 20 * 5 * RATE, "P-lab", "lab table")])
    assert d.bound is not None and d.bound["kind"] == "none"
    assert "below every limit (highest: 5% of the P-lab 4,000 IOPS)" in d.bound["text"]


@needs_fio
def test_without_limits_there_is_no_bound(measured: tuple[Unit, list[GroupResult], Path]) -> None:
    d = _attribute(measured, [])
    assert d.bound is None
    assert any("working set 20.0MiB" in w for w in d.warnings)


def test_a_provider_that_cannot_tell_costs_the_bound_not_the_run(tmp_path: Path) -> None:
    job = _job(tmp_path)

    def broken(_target: object) -> list[Limit]:
        raise DiskbenchError("Standard_X9 is not in diskbench's size data")

    d = DirectionResult("read", 100.0, 409600.0, 400, 1638400, 4.0, None)
    group = GroupResult("randread-4k", ["randread-4k"], 1, "fio", "3", [d])
    Attributor(broken).unit(job, [Place(job.workload, job.target_label, str(tmp_path))], [group])
    assert d.bound is None
    assert f"no limits for {job.target_label}: Standard_X9 is not in diskbench's size data" in d.warnings


def test_a_burst_series_is_split_and_the_baseline_checked_for_steady_state(tmp_path: Path) -> None:
    job = _job(tmp_path)
    rates = [350.0] * 4 + [50.0] * 8
    d = DirectionResult("read", sum(rates) / len(rates), sum(rates) / len(rates) * 4096, 1500, 1500 * 4096, 12.0, None,
                        series=Series(1.0, rates))
    group = GroupResult("randread-4k", ["randread-4k"], 5, "fio", "3", [d])
    limits = [Limit("disk_iops", 50, "P10 x0.1", "t"), Limit("disk_burst_iops", 350, "P10 x0.1 burst", "t",
                                                             burst=True, minutes=30)]
    Attributor(lambda _t: limits).unit(job, [Place(job.workload, job.target_label, str(tmp_path))], [group])
    assert d.bound is not None and d.bound["kind"] == "burst"
    assert d.bound["phases"]["burst"]["mean"] == 350 and d.bound["phases"]["baseline"]["start_s"] == 4
    assert "burst 350 IOPS = 100.0% of the P10 x0.1 burst 350 IOPS" in d.bound["text"]
    assert "baseline 50 IOPS = 100.0% of the P10 x0.1 50 IOPS" in d.bound["text"]
    assert not any(w.startswith("not steady") for w in d.warnings)
