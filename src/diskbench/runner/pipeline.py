"""One unit's path, the same wherever it runs: render, run, parse, attribute, store, finish.

A machine and a client group prepare differently; once a unit's targets are ready, its ``Drive``
answers for where it runs and everything else happens here, once for both: the unit is recorded
running before its engine starts, every host's results (and a client group's merge) are set
against their limits and committed in one transaction, and the unit is counted done, failed
or interrupted exactly once.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..attribution.knee import FACTS as KNEES
from ..attribution.knee import Curve
from ..model import GroupResult
from ..plan import Unit
from ..store import now_iso
from ..units import human_bytes, latency
from .drive import Drive, Outcome, Share
from .knee import Cut, Step, kept_steps
from .progress import JobTracker
from .recorder import unit_dir
from .state import RunState
from .testbed import testbed_key

_FACTS = threading.Lock()  # the machines' threads add their knees to the run's facts one at a time


def run_unit(state: RunState, job: Unit, drive: Drive) -> bool:
    """Run ``job`` with ``drive`` and count it; whether it gave a whole result."""
    ok, why = _run(state, job, drive)
    state.tally(ok, why)
    state.unit_ended(job)
    return ok


def _run(state: RunState, job: Unit, drive: Drive) -> tuple[bool, str | None]:
    art = unit_dir(state.store, state.run_id, job)
    art.mkdir(parents=True, exist_ok=True)
    rendered = drive.render(job, art)
    state.store.update_job(state.run_id, job.key, status="running", started=now_iso(), rendered=rendered,
                           message=None, facts=drive.facts(),
                           testbed=testbed_key(job, drive.engine.testbed_text(rendered), drive.engine.name,
                                               drive.version))
    label = drive.label(job)
    index = state.next_index()
    drive.prepare(job, art, label)
    rc = 130
    with state.ui.job(index, state.total, label, job.expected_s, 0.0) as tracker:
        if state.stopped:  # while preparing: the measured run never starts
            state.ui.line(f"{label}: stopped before measuring")
        elif job.workload.knee is not None:  # iodepth: auto: the search's steps, each kept as it ends
            rc = _search(state, job, drive, art, tracker)
        else:
            rc = drive.measure(job, rendered, art, tracker)
    if state.stopped:
        state.store.update_job(state.run_id, job.key, status="interrupted", finished=now_iso(), exit_code=rc)
        return False, None
    outcome = drive.results(job, art, rc)
    _attribute(job, outcome, art)
    state.store.add_results_many(state.run_id, job.key, [row for share in outcome.shares for row in rows(job, share)])
    drive.kept(art)
    return _finish(state, job, label, tracker, outcome, rc)


def _search(state: RunState, job: Unit, drive: Drive, art: Path, tracker: JobTracker) -> int:
    """The knee search, resumed from the steps an earlier attempt stored; its record kept however it
    ended (an error that ends the machine's part, a host gone, is raised again after it); its exit code."""
    searched = drive.knee(job, art, tracker, lambda step: knee_step(state, job, drive, step),
                          kept_steps(state.store, state.run_id, job))
    if searched.curve is not None:
        knee_record(state, job, searched.curve, searched.cut)
    if searched.error is not None:
        raise searched.error
    return searched.rc


def knee_step(state: RunState, job: Unit, drive: Drive, step: Step) -> None:
    """One step of a knee search, stored as a job of its own (named and declared as an ``iodepth``
    sweep's job, so reports draw the curve and the gate compares each depth with its own testbed) with
    its results, the moment it ends; an earlier attempt's rows of it make way."""
    unit = step.unit
    state.store.add_jobs(state.run_id, [{
        "key": unit.key, "seq": job.seq, "workload": unit.workload.name, "target": unit.target_label,
        "host": unit.machine, "base_key": unit.base_key, "repeat": unit.repeat,
        "params": {**unit.params(), "knee": {"job": job.key, "step": step.number}}}])
    state.store.drop_results(state.run_id, unit.key)
    state.store.update_job(state.run_id, unit.key, status="done" if step.message is None else "failed",
                           started=step.started, finished=step.finished, rendered=step.rendered, exit_code=step.rc,
                           message=step.message, facts=drive.facts(),
                           testbed=testbed_key(unit, drive.engine.testbed_text(step.rendered), drive.engine.name,
                                               drive.version))
    if step.groups:
        state.store.add_results_many(state.run_id, unit.key, rows(unit, Share(unit.machine, step.groups, None)))


def knee_record(state: RunState, job: Unit, curve: Curve, cut: Cut | None) -> None:
    """What a knee search found, in the run's facts (``knees``: one record per unit, replaced when the
    unit runs again): its curve, the knee, the highest IOPS, the highest under the p99 limit, and where
    a failure or Ctrl-C cut it short (``cut``; ``complete`` false), so the curve is not read as whole."""
    record = {"job": job.key, "base_key": job.base_key, "workload": job.workload.name, "target": job.target_label,
              "host": job.machine, "repeat": job.repeat, "complete": cut is None, **curve.to_json(),
              "cut": cut.to_json() if cut is not None else None}
    if cut is not None:
        record["text"] = f"{record['text']}; {cut.text()}"
    with _FACTS:
        known = [k for k in state.store.get_run(state.run_id).get("facts", {}).get(KNEES) or [] if k["job"] != job.key]
        state.store.merge_facts(state.run_id, {KNEES: [*known, record]})


def _attribute(job: Unit, outcome: Outcome, art: Path) -> None:
    """Each host's results against its own limits; a client group's merge against all of theirs."""
    stderr_file = art / "stderr.txt"
    stderr = stderr_file.read_text(errors="replace") if stderr_file.exists() else ""
    for share in outcome.shares:
        if share.attributor is not None:
            share.attributor.unit(job, share.places, share.groups, stderr)


def rows(job: Unit, share: Share) -> list[tuple[GroupResult, dict[str, Any]]]:
    """The stored rows of one share: named after the unit, or after each of its sections' jobs."""
    where = {"workload": job.workload.name, "target": job.target_label, "host": share.host, "repeat": job.repeat}
    if not job.sections or share.whole:
        return [(group, where) for group in share.groups]
    targets = {s.workload.name: s.target_label for s in job.sections}
    out = []
    for group in share.groups:
        name = group.job_names[0] if group.job_names else group.name
        out.append((group, {**where, "workload": f"{job.workload.name}/{name}",
                            "target": targets.get(name, job.target_label)}))
    return out


def _finish(state: RunState, job: Unit, label: str, tracker: JobTracker, outcome: Outcome,
            rc: int) -> tuple[bool, str | None]:
    message = outcome.message
    state.store.update_job(state.run_id, job.key, status="done" if message is None else "failed",
                           finished=now_iso(), exit_code=rc, message=message)
    if message is None:
        state.ui.job_done(tracker, "done, " + summary(outcome.shown))
        return True, None
    state.ui.line(f"{tracker.label}: FAILED: {message}")
    return False, f"{label}: {message}"


def summary(groups: list[GroupResult]) -> str:
    """A unit's figures in one line: each direction's IOPS, bandwidth and p99."""
    parts = []
    for g in groups:
        for d in g.directions:
            p99 = d.clat.percentiles.get("p99") if d.clat else None
            lat = f", p99 {latency(p99)}" if p99 is not None else ""  # the result table's formatter
            parts.append(f"{d.direction} {d.iops:,.0f} IOPS {human_bytes(d.bw_bytes_per_s)}/s{lat}")
    return "; ".join(parts)
