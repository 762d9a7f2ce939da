"""A plan as people read it (a table per machine and target, a cost table per provider) and as
JSON (``diskbench.plan/1``)."""

from __future__ import annotations

from typing import Any

from .. import registry
from ..attribution.knee import ladder
from ..plan import Unit
from ..planning import Cost, PlanReport, longest
from ..profile.workload import Workload
from ..units import human_seconds
from .textable import Col, TextTable

SCHEMA = "diskbench.plan/1"


def _runtime(unit: Unit) -> str | None:
    """The declared runtime as ``plan`` shows it: steady-state rounds, the knee search's most steps,
    draining and flushing said."""
    w = unit.workload
    runtime = f"{w.runtime} x{w.rounds}" if w.rounds > 1 and w.runtime else w.runtime
    runtime = f"{w.runtime} x<={w.rounds} steps" if w.knee is not None and w.runtime else runtime
    runtime = f"{runtime} +drain" if w.drain_burst and runtime else runtime
    return f"{runtime} +flush" if w.flush_cache and runtime else runtime


def _depth(w: Workload) -> int | str | None:
    """The queue depth as ``plan`` shows it: ``auto 1-256`` for the knee search (``iodepth: auto``)."""
    return f"auto {w.knee.min_iodepth}-{w.knee.max_iodepth}" if w.knee is not None else w.iodepth


def plan_table(report: PlanReport) -> TextTable:
    """One line per machine (its size and storage said once) and target, then its units."""
    p = report.plan
    profile = p.profile.profile
    created = {m.name: m for m in profile.machine_entries}
    table = TextTable([Col("#", right=True, min_width=2), Col("workload", shrink=True, min_width=8),
                       Col("rw"), Col("bs", right=True), Col("iodepth", right=True), Col("numjobs", right=True),
                       Col("size", right=True), Col("runtime", right=True), Col("expected", right=True)],
                      title=f"profile {profile.name}: {profile.description}")
    described: set[str] = set()
    last: tuple[str, str] | None = None
    for unit in p.units:
        if (unit.machine, unit.target_label) != last:
            last = (unit.machine, unit.target_label)
            label = f"{unit.machine} · {unit.target_label}"
            if unit.machines:  # a unit on a client group: one engine run on all of them
                label = f"{unit.machine} ({len(unit.machines)} clients) · {unit.target_label}"
            elif created and unit.machine not in described:
                described.add(unit.machine)
                size, storage = registry.providers.get(unit.provider).describe(created[unit.machine])
                label = f"{unit.machine} ({size}; {storage}) · {unit.target_label}"
            table.add_group(label)
        w = unit.workload
        declared = (w.rw, w.bs, _depth(w), w.numjobs, w.size, _runtime(unit))
        table.add_row(unit.seq + 1, w.name, *("-" if v is None else v for v in declared),
                      human_seconds(unit.expected_s))
    table.caption.append(f"{len(p.units)} job(s), expected {human_seconds(p.expected_s)}")
    table.caption += repeat_lines(report)
    table.caption += knee_lines(p.units)
    return table


def repeat_lines(report: PlanReport) -> list[str]:
    """What repeats add, in one line: fixed ones are rows of the table already; automatic ones add rounds
    the plan cannot know, so their upper bound (every job at MAX) is said with its time."""
    least, most = report.repeats
    auto = report.plan.auto
    if auto is None:
        return [f"each job runs {least} times, interleaved (all jobs once, then all again)"] if least > 1 else []
    long = longest(report.plan)
    upper = human_seconds(long.expected_s) if long is not None else "-"
    return [f"--repeats {auto}: the {least} first rounds above; a job the gate cannot decide runs again, "
            f"up to {most} times: expected at most {upper}"]


def knee_lines(units: list[Unit]) -> list[str]:
    """The knee search's upper bound, once per workload: how many depths, of which bisections, how long."""
    out: dict[str, str] = {}
    for unit in units:
        w, knee = unit.workload, unit.workload.knee
        if knee is None or w.name in out:
            continue
        doublings = len(ladder(knee.rule()))
        out[w.name] = (f"{w.name}: iodepth: auto measures at most {w.rounds} depths ({doublings} doubling QD "
                       f"{knee.min_iodepth}-{knee.max_iodepth}, {w.rounds - doublings} bisecting), each at most "
                       f"{w.runtime}: at most {human_seconds(unit.expected_s)}; it ends sooner once the IOPS stop "
                       "growing" + (" or the p99 passes " + knee.p99_under if knee.p99_under else ""))
    return list(out.values())


def cost_tables(report: PlanReport) -> list[TextTable]:
    """Machine-minutes and estimated cost per machine, one table per provider."""
    out = []
    for cost in report.costs:
        table = TextTable([Col("machine", shrink=True), Col("size", shrink=True), Col("VM-minutes", right=True),
                           Col("estimate USD", right=True), Col("note", shrink=True)],
                          title="machines and estimated cost", caption=[cost.source])
        for m in cost.machines:
            table.add_row(m["machine"], m["size"], f"{m['vm_minutes']:.0f}",
                          "-" if m["usd"] is None else f"{m['usd']:.2f}", m["note"])
        for row in _total_rows(report, cost):
            table.add_row(*row)
        out.append(table)
    return out


def _total_rows(report: PlanReport, cost: Cost) -> list[tuple[str, str, str, str, str]]:
    """The total, then the ranges beside it: automatic repeats' upper bound (every job at MAX, since
    the rounds are decided while the run goes) and a stop: block's adaptive least and most."""
    least, most = report.repeats
    # a total that lacks a price says so: a sum over part of the machines is a floor
    missing = f"at least: {cost.unpriced} of {len(cost.machines)} have no price" if cost.unpriced else ""
    repeated = f"{least} repeats of each job" if most > 1 else ""
    rows = [("total", "", f"{cost.vm_minutes:.0f}", f"{cost.usd:.2f}", "; ".join(filter(None, [missing, repeated])))]
    if cost.longest is not None and report.plan.auto is not None:
        rows.append((f"{report.plan.auto} max", "", f"{cost.longest_vm_minutes:.0f}", f"{cost.longest_usd:.2f}",
                     f"{most} repeats of each job"))
    if cost.shortest is not None:  # a stop: block: the adaptive plan's range, the fixed plan its top
        rows.append(("adaptive max", "", f"{cost.vm_minutes:.0f}", f"{cost.usd:.2f}", "= fixed plan"))
        rows.append(("adaptive min", "", f"{cost.shortest_vm_minutes:.0f}", f"{cost.shortest_usd:.2f}",
                     "jobs end at stop.min"))
    return rows


def plan_json(report: PlanReport) -> dict[str, Any]:
    """The plan as a document: its units, expected time, VM-minutes and cost, warnings, problems."""
    p = report.plan
    units = []
    for unit in p.units:
        w = unit.workload
        units.append({"seq": unit.seq + 1, "workload": w.name, "machine": unit.machine, "provider": unit.provider,
                      "target": unit.target_label, "engine": unit.engine, "clients": list(unit.machines),
                      "jobs": [job.workload.name for job in unit.jobs] if unit.sections else [w.name],
                      "rw": w.rw, "bs": w.bs, "iodepth": "auto" if w.knee is not None else w.iodepth,
                      "numjobs": w.numjobs, "size": w.size, "runtime": w.runtime, "rounds": w.rounds,
                      "knee": w.knee.model_dump() if w.knee is not None else None, "drain_s": w.drain_s,
                      "flush_cache": w.flush_cache, "repeat": unit.repeat,
                      "expected_s": round(unit.expected_s, 3)})
    return {"schema": SCHEMA, "profile": p.profile.profile.name, "path": p.profile.path,
            "expected_s": round(p.expected_s, 3), "repeats": _repeats_json(report), "units": units,
            "costs": [{"provider": c.provider, "source": c.source, "vm_minutes": c.vm_minutes, "usd": c.usd,
                       "unpriced": c.unpriced, "machines": c.machines,
                       "adaptive": None if c.shortest is None else {
                           "max_vm_minutes": c.vm_minutes, "max_usd": c.usd,
                           "min_vm_minutes": c.shortest_vm_minutes, "min_usd": c.shortest_usd},
                       "repeats": _cost_repeats_json(report, c)}
                      for c in report.costs],
            "warnings": report.warnings, "notes": report.notes, "problems": report.problems}


def _repeats_json(report: PlanReport) -> dict[str, Any]:
    """How many times each job runs: ``min`` = ``max`` for fixed repeats, the first rounds and the limit for
    ``--repeats auto:MAX`` (``rule``), with the expected time of each end."""
    least, most = report.repeats
    auto = report.plan.auto
    long = longest(report.plan)
    return {"rule": str(auto) if auto is not None else least, "min": least, "max": most,
            "min_expected_s": round(report.expected_s, 3),
            "max_expected_s": round(long.expected_s if long is not None else report.expected_s, 3)}


def _cost_repeats_json(report: PlanReport, cost: Cost) -> dict[str, Any]:
    """A provider's VM-minutes and money at each end of the repeats' range (both the total when fixed)."""
    least, most = report.repeats
    top = cost.longest is not None
    return {"min": least, "max": most, "min_vm_minutes": cost.vm_minutes, "min_usd": cost.usd,
            "max_vm_minutes": cost.longest_vm_minutes if top else cost.vm_minutes,
            "max_usd": cost.longest_usd if top else cost.usd}
