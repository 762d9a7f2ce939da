"""``iodepth: auto`` on one machine: the knee search's steps, each one engine run inside the unit.

The search (``attribution/knee.py``) names each queue depth to measure; each step is the unit's
job at that depth, named as an ``iodepth`` sweep names its jobs (``NAME-iodepthQ``), run as the
measured run is (with the workload's adaptive stop when it has one: a step ends once its IOPS and
MB/s are known, and its p99 too when the search has a ``p99_under``, since what the search decides
on is the IOPS, and the p99 only against a limit), its output parsed and
attributed, and its files set aside in ``step-NN-qdQ/`` (the raw output gzip'd). Each step is
handed to ``record`` as it ends (the pipeline stores it as a job and result of its own), so that
what a long search measured is kept whatever ends it. The unit's own result is then the knee's
step (or, with no knee, the highest IOPS measured), with the curve in its note.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..attribution.attributor import Attributor
from ..attribution.knee import MAX_DEPTH, NOTE, Curve, Point, Search
from ..attribution.stop_rule import Watcher
from ..engines.base import Engine, Place
from ..executors.base import Executor
from ..model import GroupResult
from ..plan import Unit
from ..store import now_iso
from ..store.raw import compress
from .progress import JobTracker
from .unit import run_engine


@dataclass
class Step:
    """One measured depth: the step as a unit of its own, what it ran and gave, where its files are."""

    unit: Unit
    number: int
    rendered: str
    groups: list[GroupResult]
    message: str | None
    rc: int
    folder: Path
    started: str
    finished: str


@dataclass
class Searched:
    """How a search ended: the exit code of its last step, the curve (None before any step gave a
    result), the groups of the unit's own result, and why it failed (None: it did not)."""

    rc: int
    curve: Curve | None
    groups: list[GroupResult]
    message: str | None


def step_unit(job: Unit, depth: int) -> Unit:
    """The unit's job at one queue depth, named and declared as an ``iodepth`` sweep's job would be."""
    w = job.workload.model_copy(update={"iodepth": depth, "knee": None, "name": f"{job.workload.name}-iodepth{depth}"})
    return replace(job, workload=w, sweep=("iodepth", depth), expected_s=job.expected_s / max(1, job.workload.rounds))


def point_of(depth: int, groups: list[GroupResult]) -> Point:
    """A step's figures: IOPS of every direction together, the worst direction's p50 and p99."""
    iops = 0.0
    p50: list[float] = []
    p99: list[float] = []
    seconds = 0.0
    stop = None
    for g in groups:
        both = [d for d in g.directions if d.direction == "total"]
        iops += sum(d.iops for d in (both or g.directions))
        for d in g.directions:
            seconds = max(seconds, d.runtime_s)
            if d.direction != "total" and d.clat is not None:
                p50 += [v for k, v in d.clat.percentiles.items() if k == "p50"]
                p99 += [v for k, v in d.clat.percentiles.items() if k == "p99"]
        if g.stop:
            stop = str(g.stop.get("reason") or "") or None
    return Point(depth, iops, max(p50) if p50 else None, max(p99) if p99 else None, seconds or None, stop)


def search_knee(ex: Executor, engine: Engine, job: Unit, places: list[Place], art: Path, tracker: JobTracker,
                attributor: Attributor, line: Callable[[str], None], label: str, stopped: Callable[[], bool],
                record: Callable[[Step], None],
                verdict: Callable[[list[GroupResult], Watcher], None]) -> Searched:
    """Measure the depths the search asks for, one engine run each; ``verdict`` puts a step's adaptive
    stop on its results, ``record`` keeps each step as it ends."""
    knee = job.workload.knee
    assert knee is not None
    search = Search(knee.rule())
    measured: dict[int, list[GroupResult]] = {}
    rc, number = 0, 0
    while (depth := search.next_depth()) is not None:
        number += 1
        step = step_unit(job, depth)
        at = [Place(step.workload, p.target_label, p.directory, p.filename) for p in places]
        rendered = engine.render(step, at, purpose="measure")
        rule = step.workload.stop_rule
        if rule is not None and knee.p99_under is None:  # the search decides on IOPS: it waits for those
            rule = replace(rule, percentile=False)
        watcher = Watcher(rule) if rule is not None else None
        started = now_iso()
        rc = run_engine(ex, engine, step, rendered, art, tracker, watcher=watcher)
        if stopped():  # Ctrl-C: the unit is interrupted; its earlier steps are kept
            return Searched(rc, _curve(search), [], None)
        groups, message = engine.outcome(art, rc, stopped_early=watcher is not None and watcher.confident is not None)
        if watcher is not None and groups:
            verdict(groups, watcher)
        stderr_file = art / "stderr.txt"
        if groups:
            attributor.unit(step, at, groups, stderr_file.read_text(errors="replace") if stderr_file.exists() else "")
        folder = _set_aside(art, engine, rendered, f"step-{number:02d}-qd{depth}")
        record(Step(step, number, rendered, groups, message, rc, folder, started, now_iso()))
        if message is not None:
            return Searched(rc, _curve(search), [], f"at QD {depth}: {message}; see {folder}")
        measured[depth] = groups
        search.add(point := point_of(depth, groups))
        line(f"{label}: step {number}, {point.text()}"
             + (f" ({point.stop} after {point.seconds:.0f} s)" if point.stop and point.seconds else ""))
    curve = search.curve()
    line(f"{label}: {curve.text()}")
    chosen = curve.knee or curve.peak
    groups = copy.deepcopy(measured[chosen.depth])
    for g in groups:
        g.notes.append(NOTE + curve.text())
        if curve.knee is None and curve.reason == MAX_DEPTH:
            for d in g.directions:
                d.warnings.append(f"{curve.text().split(';')[0]}; raise knee.max_iodepth")
    return Searched(rc, curve, groups, None)


def _curve(search: Search) -> Curve | None:
    return search.curve() if search.points else None


def _set_aside(art: Path, engine: Engine, rendered: str, name: str) -> Path:
    """A step's files, out of the way of the next: into ``name/`` (``name-2`` when a folder of that name
    is left from an earlier attempt), its raw output gzip'd."""
    folder = next(f for i in range(1, 1000) if not (f := art / (name if i == 1 else f"{name}-{i}")).exists())
    folder.mkdir()
    for file in [engine.output_name, f"job{engine.job_suffix}", "stdout.txt", "stderr.txt", "exit_code",
                 *engine.log_files(rendered)]:
        if (art / file).exists():
            (art / file).rename(folder / file)
    compress(folder / engine.output_name)
    return folder
