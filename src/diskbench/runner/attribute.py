"""After a unit's results are parsed: which limit bound each, and which pitfalls may make it lie.

The runner asks the machine's provider for the limits of each job's target (Azure: the size and disk
tables; a host that exists has none), sets each direction's measured rates, block size, queue and fio's
CPU against them (attribution.bound), and stores the verdict and the warnings with the result. A
provider that cannot tell (a size missing from its tables) costs the result its bound, never the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..attribution.limit import Limit
from ..attribution.pitfalls import JobFacts, pitfalls
from ..attribution.record import bound_json, decide, steady
from ..engines.base import Place
from ..errors import DiskbenchError
from ..model import GroupResult
from ..plan import PlannedJob, PlannedSection
from ..profile import writes
from ..profile.targets import TargetModel
from ..units import parse_size


@dataclass
class Attributor:
    """One machine's attribution: its limits per target (asked once), and which targets hold written data."""

    limits_of: Callable[[TargetModel], list[Limit]]
    cpus: int | None = None
    written: set[str] = field(default_factory=set)
    _limits: dict[str, list[Limit] | str] = field(default_factory=dict)

    def limits(self, part: PlannedSection) -> list[Limit] | str:
        """The target's limits, or why there are none (the provider's error)."""
        if part.target_label not in self._limits:
            try:
                self._limits[part.target_label] = self.limits_of(part.target)
            except DiskbenchError as exc:
                self._limits[part.target_label] = f"no limits for {part.target_label}: {exc.message}"
        return self._limits[part.target_label]

    def unit(self, job: PlannedJob, places: list[Place], groups: list[GroupResult], stderr: str = "") -> None:
        parts = job.parts
        for group in groups:
            index = next((i for i, p in enumerate(parts) if p.workload.name in group.job_names), 0)
            if index < len(parts):
                self.group(parts[index], places[index] if index < len(places) else None, group, stderr)
        self.written.update(p.target_label for p in parts if writes(p.workload.rw))
        self.written.update(p.target_label for p in parts if p.target.precondition)

    def group(self, part: PlannedSection, place: Place | None, group: GroupResult, stderr: str) -> None:
        w = part.workload
        found = self.limits(part)
        limits = found if isinstance(found, list) else []
        bs = _size(w.bs) or 4096
        jobs = w.numjobs or 1
        size = _size(w.size)
        raw = place.filename if place is not None and place.filename else None
        facts = JobFacts(direct=w.direct is not False, working_set_bytes=size if raw else size * jobs,
                         raw_device=raw, written=part.target_label in self.written or part.target.precondition,
                         hosts=max(1, len(group.hosts)),
                         randrepeat=str((w.extra or {}).get("randrepeat", 1)) not in ("0", "False", "false"),
                         stderr=stderr, rate_limited=bool(w.rate_iops))
        for d in group.directions:
            bound = None
            if limits or group.cpu_pct is not None:
                verdict = decide(d, limits, bs_bytes=bs, iodepth=w.iodepth or 1, jobs=jobs, cpu_pct=group.cpu_pct,
                                 cpus=self.cpus)
                # without published limits only the client's own CPU is a verdict worth showing
                bound = bound_json(verdict, limits) if limits or verdict.kind == "cpu" else None
            d.bound = bound
            d.warnings = pitfalls(d, facts, limits, bound)
            if isinstance(found, str):
                d.warnings.append(found)
            if d.series is not None:
                state = steady(d.series, bound.get("phases") if bound else None)
                if state is not None and not state.achieved:
                    d.warnings.append(f"not steady: {state.text()}; run longer, or precondition the target")


def _size(value: str | int | None) -> int:
    if value is None:
        return 0
    try:
        return parse_size(str(value).split(",")[0].split(":")[0])
    except ValueError:
        return 0
