"""A machine's VM-minutes and money, its line at the end of a run, and when it is free to release."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from diskbench.providers.base import MachineUse
from diskbench.reports.documents import run_rows
from diskbench.runner.options import RunOutcome
from diskbench.runner.runner import use_line
from diskbench.runner.state import RunState
from diskbench.units import dollars


def test_minutes_run_from_the_request_to_the_delete_and_money_follows() -> None:
    use = MachineUse("vm1", "Standard_E8ds_v4", requested=1000.0, hourly_usd=0.6, ready=1060.0, last_unit=1300.0,
                     released=1360.0)
    assert use.vm_minutes() == 6.0 and use.usd() == 0.06
    doc = use.to_json()
    assert doc["vm_minutes"] == 6.0 and doc["usd"] == 0.06 and doc["released"] == "1970-01-01T00:22:40+00:00"
    held = MachineUse("vm2", "Standard_D2s_v5", requested=1000.0)  # still held, no price
    assert held.vm_minutes(now=1120.0) == 2.0 and held.usd(now=1120.0) is None
    assert held.to_json(now=1120.0)["released"] is None


def test_the_end_of_run_line_fits_80_columns() -> None:
    use = MachineUse("short", "Standard_E8ds_v4", requested=1000.0, hourly_usd=0.7, ready=1060.0, last_unit=1300.0,
                     released=1360.0)
    line = use_line(use, 2000.0)
    assert line.startswith("short: 6.0 VM-min, $0.07; ready ") and "released" in line and len(line) <= 80
    assert "still held" in use_line(MachineUse("vm", "x", requested=1000.0), 1600.0)
    assert "no price" in use_line(MachineUse("vm", "x", requested=1000.0), 1600.0)
    assert dollars(0.004) == "$0.004" and dollars(1.234) == "$1.23" and dollars(0) == "$0.00"


def _unit(machine: str, clients: list[Any] | None = None) -> Any:
    return SimpleNamespace(machine=machine, provider="azure", clients=clients or [])


def test_a_machine_two_parts_use_is_free_when_the_last_ends() -> None:
    state = RunState("r", None, None, 0, RunOutcome("r", "running"), {})  # type: ignore[arg-type]
    a, b = _unit("a"), _unit("b")
    group = _unit("g", clients=[a, b])  # a client group on a and b; a also has units of its own
    state.count_parts([[a, a], [group]])
    assert state.part_done([a, a]) == []  # the group still uses a
    assert state.part_done([group]) == [("azure", "a"), ("azure", "b")]


def test_runs_say_what_their_machines_cost() -> None:
    row = {"id": "r", "profile": "p", "origin": "run", "started": "s", "status": "completed", "job_counts": {},
           "facts": {"machine_use": [{"vm_minutes": 2.5, "usd": 0.03}, {"vm_minutes": 1.0, "usd": 0.01}]}}
    assert run_rows([row])[0]["vm_minutes"] == 3.5 and run_rows([row])[0]["usd"] == 0.04
    unpriced = {**row, "facts": {"machine_use": [{"vm_minutes": 2.5, "usd": None}]}}
    assert run_rows([unpriced])[0]["usd"] is None
    assert run_rows([{**row, "facts": {}}])[0]["vm_minutes"] is None
