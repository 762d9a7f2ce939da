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

**Resuming.** The search is deterministic given its steps' figures, so a resumed unit feeds the
steps an earlier attempt stored (``kept_steps``: their stored results, in the order they ran) back
to it instead of measuring them again: each one the search asks for at its own place is taken as
stored (its folder moves back from the earlier attempt's), and only the steps after the last
stored one run.

**Cut short.** A step that fails (the engine's error, or the host gone) or Ctrl-C ends the search
where it is: the steps before stay stored, and ``Searched.cut`` says at which step and depth and why.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..attribution.attributor import Attributor
from ..attribution.knee import MAX_DEPTH, NOTE, Curve, Point, Search
from ..attribution.stop_rule import Watcher
from ..engines.base import Engine, Place
from ..errors import DiskbenchError
from ..executors.base import Executor
from ..model import GroupResult
from ..plan import Unit
from ..profile.knee import step_name
from ..store import Store, StoredResult, now_iso
from .progress import JobTracker
from .recorder import Recorder
from .unit import run_engine, set_run_aside

INTERRUPTED = "interrupted"  # why a search stopped by Ctrl-C was cut short


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


@dataclass(frozen=True)
class Cut:
    """Where a search was cut short: the step (its number and depth) that did not give a result, and why
    (the failure, or ``interrupted``); the knee record keeps it, so a reader knows the curve is partial."""

    step: int
    depth: int
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "iodepth": self.depth, "why": self.why}

    def text(self) -> str:
        return f"cut short at step {self.step} (QD {self.depth}): {self.why}"


@dataclass
class Searched:
    """How a search ended: the exit code of its last step, the curve (None before any step gave a
    result), the groups of the unit's own result, why it failed (None: it did not), where it was cut
    short (None: it ended by its rule), and an error that also ends the machine's part (a host gone),
    raised again once the search's record is kept."""

    rc: int
    curve: Curve | None
    groups: list[GroupResult]
    message: str | None
    cut: Cut | None = None
    error: DiskbenchError | None = None


@dataclass(frozen=True)
class Kept:
    """A step an earlier attempt of the run stored: its number (the order it ran in) and its results as
    stored, fed to a resumed search in its place instead of measuring it again."""

    number: int
    depth: int
    groups: list[GroupResult]


def step_unit(job: Unit, depth: int) -> Unit:
    """The unit's job at one queue depth, named and declared as an ``iodepth`` sweep's job would be."""
    w = job.workload.model_copy(update={"iodepth": depth, "knee": None, "name": step_name(job.workload.name, depth)})
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
                verdict: Callable[[list[GroupResult], Watcher], None],
                kept: dict[int, Kept] | None = None) -> Searched:
    """Measure the depths the search asks for, one engine run each; ``verdict`` puts a step's adaptive
    stop on its results, ``record`` keeps each step as it ends, and ``kept`` (by depth) are the steps
    an earlier attempt stored, taken in their place instead of measured again."""
    run = _KneeRun(ex, engine, job, places, art, tracker, attributor, stopped, record, verdict)
    return run.search(line, label, kept or {})


@dataclass
class _KneeRun:
    """One unit's search: what a step needs to run where the unit runs, and the search itself; ``rc``,
    ``error`` and ``folder`` are the last measured step's exit code, error and folder."""

    ex: Executor
    engine: Engine
    job: Unit
    places: list[Place]
    art: Path
    tracker: JobTracker
    attributor: Attributor
    stopped: Callable[[], bool]
    record: Callable[[Step], None]
    verdict: Callable[[list[GroupResult], Watcher], None]
    rc: int = field(default=0, init=False)
    error: DiskbenchError | None = field(default=None, init=False)
    folder: Path | None = field(default=None, init=False)

    def search(self, line: Callable[[str], None], label: str, kept: dict[int, Kept]) -> Searched:
        knee = self.job.workload.knee
        assert knee is not None
        search = Search(knee.rule())
        measured: dict[int, list[GroupResult]] = {}
        number = 0
        while (depth := search.next_depth()) is not None:
            number += 1
            stored = kept.get(depth)
            if stored is not None and stored.number == number:  # in its place: the search asks for it again
                groups, how = copy.deepcopy(stored.groups), " (stored by an earlier attempt)"
                _bring_back(self.art, _folder_name(number, depth))
            else:
                ran = self._measure(number, depth)
                if isinstance(ran, Cut):
                    return Searched(self.rc, _curve(search), [], self._message(ran), ran, self.error)
                groups, how = ran, ""
            measured[depth] = groups
            search.add(point := point_of(depth, groups))
            stop = f" ({point.stop} after {point.seconds:.0f} s)" if point.stop and point.seconds else ""
            line(f"{label}: step {number}, {point.text()}{stop}{how}")
        curve = search.curve()
        line(f"{label}: {curve.text()}")
        return Searched(self.rc, curve, _unit_result(curve, measured), None)

    def _measure(self, number: int, depth: int) -> list[GroupResult] | Cut:
        """Run one step and keep it; its groups, or where and why the search is cut short there."""
        if self.stopped():  # Ctrl-C between two steps: the next one never starts
            self.rc = 130
            return Cut(number, depth, INTERRUPTED)
        step = step_unit(self.job, depth)
        at = [Place(step.workload, p.target_label, p.directory, p.filename) for p in self.places]
        rendered = self.engine.render(step, at, purpose="measure")
        watcher = _watcher(self.job, step)
        started = now_iso()
        try:
            self.rc = run_engine(self.ex, self.engine, step, rendered, self.art, self.tracker, watcher=watcher)
        except DiskbenchError as exc:  # the host gone, the engine refused the job file: the search ends here
            self.rc = 130 if self.stopped() else -1
            if self.stopped():
                return Cut(number, depth, INTERRUPTED)
            self.error = exc
            self._keep(Step(step, number, rendered, [], str(exc), self.rc, self.art, started, now_iso()), depth)
            return Cut(number, depth, str(exc))
        if self.stopped():  # Ctrl-C: the unit is interrupted; its earlier steps are kept
            return Cut(number, depth, INTERRUPTED)
        groups, message = self.engine.outcome(self.art, self.rc,
                                              stopped_early=watcher is not None and watcher.confident is not None)
        if watcher is not None and groups:
            self.verdict(groups, watcher)
        if groups:
            stderr_file = self.art / "stderr.txt"
            self.attributor.unit(step, at, groups,
                                 stderr_file.read_text(errors="replace") if stderr_file.exists() else "")
        self._keep(Step(step, number, rendered, groups, message, self.rc, self.art, started, now_iso()), depth)
        return groups if message is None else Cut(number, depth, message)

    def _keep(self, step: Step, depth: int) -> None:
        """A step's files into ``step-NN-qdQ/`` and the step to ``record``, whether it gave a result or not."""
        name = _folder_name(step.number, depth)
        self.folder = step.folder = set_run_aside(self.art, self.engine, step.rendered, name)
        self.record(step)

    def _message(self, cut: Cut) -> str | None:
        """Why the unit failed, naming the step's folder; None for Ctrl-C (the unit is interrupted)."""
        if cut.why == INTERRUPTED:
            return None
        return f"at QD {cut.depth}: {cut.why}" + (f"; see {self.folder}" if self.folder is not None else "")


def _watcher(job: Unit, step: Unit) -> Watcher | None:
    """A step's adaptive stop: the workload's, waiting for the p99 only when the search has a limit on it
    (the search decides on the IOPS)."""
    rule = step.workload.stop_rule
    knee = job.workload.knee
    if rule is not None and (knee is None or knee.p99_under is None):
        rule = replace(rule, percentile=False)
    return Watcher(rule) if rule is not None else None


def _unit_result(curve: Curve, measured: dict[int, list[GroupResult]]) -> list[GroupResult]:
    """The unit's own result: the knee's step (or the highest IOPS), with the curve in its note and a
    warning when the curve never flattened."""
    chosen = curve.knee or curve.peak
    groups = copy.deepcopy(measured[chosen.depth])
    for g in groups:
        g.notes.append(NOTE + curve.text())
        if curve.knee is None and curve.reason == MAX_DEPTH:
            for d in g.directions:
                d.warnings.append(f"{curve.text().split(';')[0]}; raise knee.max_iodepth")
    return groups


def _curve(search: Search) -> Curve | None:
    return search.curve() if search.points else None


def _folder_name(number: int, depth: int) -> str:
    return f"step-{number:02d}-qd{depth}"


def _bring_back(art: Path, name: str) -> Path | None:
    """A stored step's folder, from the newest earlier attempt's folder that has it (``NN-slug.attempt-N``:
    the runner moved the unit's folder there) back into the unit's, so that the unit's folder holds
    every step of the search; None when no attempt has it (the store's record is what counts)."""
    if (art / name).exists():
        return None
    for earlier in sorted(art.parent.glob(f"{art.name}.attempt-*"), key=_attempt, reverse=True):
        if (earlier / name).is_dir():
            return (earlier / name).rename(art / name)
    return None


def _attempt(folder: Path) -> int:
    suffix = folder.name.rsplit(".attempt-", 1)[-1]
    return int(suffix) if suffix.isdigit() else 0


def kept_steps(store: Recorder, run_id: str, job: Unit) -> dict[int, Kept]:
    """The steps of ``job``'s search an earlier attempt of the run stored whole (status ``done``, with
    results), by depth: what a resumed search takes instead of measuring again. Empty on a new run."""
    numbers: dict[str, tuple[int, int]] = {}  # step's key -> (number, depth)
    for row in store.get_jobs(run_id):
        mark, sweep = row["params"].get("knee") or {}, row["params"].get("sweep") or {}
        if row["status"] == "done" and mark.get("job") == job.key and sweep.get("param") == "iodepth":
            numbers[row["key"]] = (int(mark["step"]), int(sweep["value"]))
    if not numbers:
        return {}
    rows: dict[str, list[StoredResult]] = {}
    for r in store.get_results(run_id):
        if r.job_key in numbers:
            rows.setdefault(r.job_key, []).append(r)
    bins = store.latency_bins(run_id) if isinstance(store, Store) else {}
    out: dict[int, Kept] = {}
    for key, (number, depth) in sorted(numbers.items(), key=lambda kv: kv[1][0]):
        groups = _groups(rows.get(key, []), bins)
        if groups:
            out[depth] = Kept(number, depth, groups)
    return out


def _groups(rows: list[StoredResult], bins: dict[tuple[str, str, int], dict[int, int]]) -> list[GroupResult]:
    """A stored step's rows as the groups its engine run gave (a group's directions are stored one row
    each, in order: a direction seen again starts the next group), with their latency bins, which the
    store keeps apart."""
    out: list[GroupResult] = []
    for r in rows:
        if not out or any(d.direction == r.result.direction for d in out[-1].directions):
            out.append(GroupResult(r.workload, [r.workload], r.jobs, r.engine, r.engine_version, [],
                                   errors=list(r.errors), notes=list(r.notes), stop=r.stop))
        d = copy.deepcopy(r.result)
        if d.clat is not None and (found := bins.get((r.job_key, d.direction, r.repeat))) is not None:
            d.clat.bins = found
        out[-1].directions.append(d)
    return out
