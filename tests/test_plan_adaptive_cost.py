"""plan's VM-minutes and money for the fixed plan and, with a workload's stop: block, the adaptive plan's range."""

from __future__ import annotations

import pytest

from diskbench import api
from diskbench.engines.segments import START_S
from diskbench.profile import LoadedProfile, parse_profile
from diskbench.reports.plan_view import cost_tables, plan_json

PROFILE = """\
name: p
defaults: {size: 1G, runtime: 2m, ramp_time: 0s}
workloads:
  - {name: fixed, rw: randread, bs: 4k}
  - {name: adaptive, rw: randread, bs: 8k, stop: {min: 20s}}
  - {name: longer, rw: randwrite, bs: 8k, stop: {min: 30s, max: 5m}}
machines:
  - {name: vm1, region: westeurope, size: Standard_E8ds_v4, target: temp}
"""


def _report(text: str):  # type: ignore[no-untyped-def]
    return api.plan(LoadedProfile(profile=parse_profile(text), path="p.yaml", text=text))


def test_the_adaptive_plan_runs_from_each_stop_min_to_the_fixed_plan() -> None:
    report = _report(PROFILE)
    cost = report.costs[0]
    # stop.max replaces the runtime: the fixed plan is the adaptive plan's longest; at its shortest each
    # stop: job ends at its min (100 s and 270 s sooner); the job without one runs its whole runtime
    assert cost.shortest_vm_minutes == pytest.approx(cost.vm_minutes - (100 + 270) / 60)
    assert cost.shortest_usd == pytest.approx(cost.usd * cost.shortest_vm_minutes / cost.vm_minutes, rel=0.01)
    doc = plan_json(report)["costs"][0]["adaptive"]
    assert doc["max_vm_minutes"] == cost.vm_minutes and doc["min_vm_minutes"] == cost.shortest_vm_minutes
    rows = [r.cells[0] for r in cost_tables(report)[0].rows if r.cells]
    assert rows[-3:] == ["total", "adaptive max", "adaptive min"]
    assert all(len(line) <= 80 for line in cost_tables(report)[0].lines(80))


def test_without_a_stop_block_there_is_one_plan() -> None:
    text = PROFILE.replace(", stop: {min: 20s}", "").replace(", stop: {min: 30s, max: 5m}", "")
    cost = _report(text).costs[0]
    assert cost.shortest is None and plan_json(_report(text))["costs"][0]["adaptive"] is None
    assert [r.cells[0] for r in cost_tables(_report(text))[0].rows if r.cells][-1] == "total"


WINDOWS = """\
name: w
defaults: {size: 1G, runtime: 2m, ramp_time: 0s}
workloads:
  - {name: short-min, rw: randread, bs: 4k, stop: {min: 10s}}
  - {name: long-min, rw: randread, bs: 8k, stop: {min: 60s}}
machines:
  - name: win1
    region: westeurope
    size: Standard_D8ds_v4
    os: windows
    data_disks: [{type: Premium_LRS, size_gb: 1024, caching: None}]
    targets: {data: {lun: 0}}
"""


def test_a_job_run_as_segments_takes_at_least_five_of_them() -> None:
    """DiskSpd runs a stop: job as segments, and the stop rule judges none before five (its batches):
    with min 10 s, 5 s segments end at 25 s, not 10 s; with min 60 s, five 12 s segments end at min.
    Either way only the starts of the segments run count (2 s each after the first), of the 24 and 10
    the plan counts for 120 s."""
    report = _report(WINDOWS)
    assert [u.engine for u in report.plan.units] == ["diskspd", "diskspd"]
    cost = report.costs[0]
    counted = (120 + 23 * START_S) + (120 + 9 * START_S)
    least = (25 + 4 * START_S) + (60 + 4 * START_S)
    assert cost.shortest_vm_minutes == pytest.approx(cost.vm_minutes - (counted - least) / 60)
