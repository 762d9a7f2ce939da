"""A unit on one machine: its engine on that machine's executor, with the passes before it.

What the machine's part prepared comes in (the targets, the engine's version, the targets'
facts, which files are laid out so far); the engine runs on the host (preconditioning, warming,
flushing the caches and draining first where the target or the workload asks, round after round
for a steady state; segment after segment for a stop: job its engine cannot end early), and its
output comes back parsed, with how the rounds or the draining ended noted on the results. The raw
output is kept gzip'd once the results are committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..attribution.attributor import Attributor
from ..attribution.drain import Verdict
from ..attribution.limit import Limit
from ..attribution.steady_state import SteadyState
from ..attribution.stop_rule import NOT_STEADY, Decision, Watcher
from ..engines.base import Engine, Place
from ..executors.base import Executor
from ..model import GroupResult
from ..plan import LOCAL, Unit
from ..store.raw import compress
from .drive import Drive, Outcome, Share
from .knee import Kept, Searched, Step, search_knee
from .progress import JobTracker
from .segments import Segmented, SegmentLog, run_segments
from .unit import data_passes, drain_burst, run_engine, steady_rounds


@dataclass
class OneMachine(Drive):
    """One unit's engine on one machine."""

    ex: Executor
    engine: Engine
    version: str | None
    places: list[Place]
    attributor: Attributor
    target_facts: dict[str, Any]
    laid_out: set[str]  # targets whose files an engine laid out this run (shared by the machine's units)
    line: Callable[[str], None]
    stopped: Callable[[], bool]
    limits: Callable[[Unit], list[Limit] | None]  # the unit's caps, for draining
    flush: Callable[[Unit, Path], None] | None = None  # flush_cache: the platform's step on the unit's targets
    steady: SteadyState | None = None
    drained: Verdict | None = None
    watcher: Watcher | None = None  # a stop: job's, while and after it runs
    searched: Searched | None = None  # iodepth: auto: how the knee search ended
    segment_log: SegmentLog | None = None  # where a segmented stop: job keeps its segments
    segmented: Segmented | None = None  # a stop: job the engine ran as short runs: how it ended

    def label(self, job: Unit) -> str:
        return f"{job.workload.name} on {job.target_label}" + ("" if job.machine == LOCAL else f" @ {job.machine}")

    def render(self, job: Unit, art: Path) -> str:
        return self.engine.render(job, self.places, purpose="measure")

    def facts(self) -> dict[str, Any]:
        return self.target_facts

    def prepare(self, job: Unit, art: Path, label: str) -> None:
        data_passes(self.ex, self.engine, job, self.places, art, label, self.line, self.laid_out)
        if job.workload.flush_cache and self.flush is not None:  # after the passes: they may lay files out
            self.flush(job, art)
        if job.workload.drain_burst:
            self.drained = drain_burst(self.ex, self.engine, job, self.places, art, label, self.line, self.stopped,
                                       self.limits(job))

    def measure(self, job: Unit, rendered: str, art: Path, tracker: JobTracker) -> int:
        if job.workload.protocol != "steady_state":
            rule = job.workload.stop_rule
            parts = self.engine.segments() if rule is not None and self.engine.live(0) is None else None
            if rule is not None and parts is not None:
                # each segment ends on its own (its output holds its drain), and the engine's warm-up
                # leaves its start out of the first (no head)
                rule = replace(rule, in_flight=0, head=False)
            self.watcher = Watcher(rule) if rule is not None else None
            if parts is not None and self.watcher is not None and self.segment_log is not None:
                self.segmented = run_segments(self.ex, self.engine, parts, job, self.places, art, tracker,
                                              self.watcher, self.segment_log, self.line, self.label(job), self.stopped)
                rc = self.segmented.rc
            else:
                rc = run_engine(self.ex, self.engine, job, rendered, art, tracker, watcher=self.watcher)
            if self.watcher is not None:
                self.line(f"{self.label(job)}: {self.watcher.final().text()}")
            return rc
        rc, self.steady = steady_rounds(self.ex, self.engine, job, rendered, art, tracker, self.line,
                                        self.label(job), self.stopped)
        return rc

    def knee(self, job: Unit, art: Path, tracker: JobTracker, record: Callable[[Step], None],
             kept: dict[int, Kept]) -> Searched:
        self.searched = search_knee(self.ex, self.engine, job, self.places, art, tracker, self.attributor, self.line,
                                    self.label(job), self.stopped, record,
                                    lambda groups, watcher: stop_verdict(groups, watcher.final()), kept)
        return self.searched

    def results(self, job: Unit, art: Path, rc: int) -> Outcome:
        """The parsed output, and for sections also the engine's exact merge of their jobs; for a knee
        search, the knee's step (already attributed: each step was as it ended)."""
        if self.searched is not None:
            found = self.searched
            return Outcome([Share(job.machine, found.groups, None, self.places)] if found.groups else [],
                           found.groups, found.message)
        stopped_early = self.watcher is not None and self.watcher.confident is not None
        if self.segmented is not None:  # the segments' merge; each one's output is in segment-NN/
            groups, message = self.segmented.groups, self.segmented.message
        else:
            groups, message = self.engine.outcome(art, rc, stopped_early=stopped_early)
        if self.steady is not None:
            steady_verdict(groups, self.steady)
        if self.drained is not None:
            drain_verdict(groups, self.drained)
        if self.watcher is not None:
            stop_verdict(groups, self.watcher.final())
        shares = [Share(job.machine, groups, self.attributor, self.places)]
        whole = job.sections and len(groups) > 1 and self.segmented is None
        combined = self.engine.combine(art / self.engine.output_name) if whole else None
        if combined is not None:
            shares.append(Share(job.machine, [combined], None, whole=True))
        return Outcome(shares, groups, message)

    def kept(self, art: Path) -> None:
        compress(art / self.engine.output_name)  # committed: the raw output is kept gzip'd


def steady_verdict(groups: list[GroupResult], state: SteadyState) -> None:
    """The steady-state determination goes with the result (the last round's): a note when achieved,
    a warning on every figure when not, so the last round never passes for a steady one."""
    for g in groups:
        g.notes.append(state.text())
        if not state.achieved:
            for d in g.directions:
                d.warnings.append(f"{state.text()}; precondition the target, or run longer rounds")


def stop_verdict(groups: list[GroupResult], decision: Decision) -> None:
    """How an adaptive stop ended goes with every result of the run: the decision itself (the table,
    JSON, report and explain show it), a note, and a warning on every figure when the series showed
    a trend (the figure is a moving average, not an answer)."""
    for g in groups:
        g.stop = decision.to_json()
        g.notes.append(decision.text())
        if decision.reason == NOT_STEADY:
            for d in g.directions:
                d.warnings.append(f"{decision.text()}; precondition the target, or give the job longer")


def drain_verdict(groups: list[GroupResult], verdict: Verdict) -> None:
    """How draining ended goes with the result: a note when the burst was spent, a warning on every
    figure when the time allowed ran out first (the result may still be a burst)."""
    for g in groups:
        g.notes.append(f"burst drained before measuring: {verdict.why}" if verdict.drained
                       else f"drain_burst: {verdict.why}")
        if not verdict.drained:
            for d in g.directions:
                d.warnings.append(f"drain_burst: {verdict.why}")
