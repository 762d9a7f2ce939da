"""plan's VM-minutes and money for the fixed plan and, with a workload's stop: block, the adaptive plan's range."""

from __future__ import annotations

import pytest

from diskbench import api
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
