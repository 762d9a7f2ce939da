"""After a unit's results are parsed: which limit bound each, and which pitfalls may make it lie.

The runner asks the machine's provider for the limits of each job's target (Azure: the size and disk
tables; a host that exists has none), sets each direction's measured rates, block size, queue and the
engine's CPU against them (attribution.bound), and stores the verdict and the warnings with the result.
A provider that cannot tell (a size missing from its tables) costs the result its bound, never the run.
A client group's merged result is set against the clients' limits together: a cap every client has
holds for the group as their sum (each client's cap holds its own I/O).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..engines.base import Place
from ..errors import DiskbenchError
from ..model import GroupResult
from ..plan import Job, Unit
from ..profile.targets import TargetModel
from ..profile.workload import Workload, writes
from ..units import parse_size
from .limit import Limit
from .pitfalls import JobFacts, pitfalls
from .record import bound_json, decide, steady

if TYPE_CHECKING:
    from ..profile.machines import MachineBase
    from ..providers.base import Provider, ProviderRun


@dataclass
class Attributor:
    """One machine's attribution: its limits per target (asked once), and which targets hold written data."""

    limits_of: Callable[[TargetModel], list[Limit]]
    cpus: int | None = None
    written: set[str] = field(default_factory=set)
    same_offsets: Callable[[Workload], bool] | None = None  # a merge of hosts: did all hit the same offsets?
    _limits: dict[str, list[Limit] | str] = field(default_factory=dict)

    def limits(self, part: Job) -> list[Limit] | str:
        """The target's limits, or why there are none (the provider's error)."""
        if part.target_label not in self._limits:
            try:
                self._limits[part.target_label] = self.limits_of(part.target)
            except DiskbenchError as exc:
                self._limits[part.target_label] = f"no limits for {part.target_label}: {exc.message}"
        return self._limits[part.target_label]

    def unit(self, job: Unit, places: list[Place], groups: list[GroupResult], stderr: str = "") -> None:
        """Each result of the unit against the limits of the target its job ran on."""
        parts = job.jobs
        for group in groups:
            index = next((i for i, p in enumerate(parts) if p.workload.name in group.job_names), 0)
            if index < len(parts):
                self.group(parts[index], places[index] if index < len(places) else None, group, stderr)
        self.written.update(p.target_label for p in parts if writes(p.workload.rw))
        self.written.update(p.target_label for p in parts if p.target.precondition)

    def group(self, part: Job, place: Place | None, group: GroupResult, stderr: str) -> None:
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
                         same_offsets=self.same_offsets(w) if self.same_offsets else False, stderr=stderr,
                         rate_limited=bool(w.rate_iops))
        for d in group.directions:
            bound = None
            if limits or group.cpu_pct is not None:
                verdict = decide(d, limits, bs_bytes=bs, iodepth=w.iodepth or 1, jobs=jobs, cpu_pct=group.cpu_pct,
                                 cpus=self.cpus)
                # without published limits only the client's own CPU is a verdict worth showing
                bound = bound_json(verdict, limits) if limits or verdict.kind == "cpu" else None
            d.bound = bound
            deliberate = set(w.deliberate or {})
            d.warnings += pitfalls(d, facts, limits, bound, deliberate)  # after what the engine or a pass said
            if isinstance(found, str):
                d.warnings.append(found)
            if d.series is not None and group.stop is None:  # an adaptive stop judged the series itself
                state = steady(d.series, bound.get("phases") if bound else None)
                if state is not None and not state.achieved and "not_steady" not in deliberate:
                    d.warnings.append(f"not steady: {state.text()}; run longer, or precondition the target")


def provider_limits(prun: ProviderRun | None, provider: Provider,
                    entry: MachineBase | None) -> Callable[[TargetModel], list[Limit]]:
    """A machine's limits on a target: what the cloud told the run, else the provider's tables."""
    def limits(target: TargetModel) -> list[Limit]:
        told = prun.limits(entry, target) if prun is not None else None
        return told if told is not None else provider.limits(entry, target)

    return limits


def merged(hosts: Sequence[Attributor], same_offsets: Callable[[Workload], bool] | None = None) -> Attributor:
    """The attribution of a client group's merge: every client's limits, summed."""
    return Attributor(lambda target: summed([h.limits_of(target) for h in hosts]), same_offsets=same_offsets)


def summed(per_host: Sequence[Sequence[Limit]]) -> list[Limit]:
    """The caps that hold for several hosts together: each one every host has, its values added
    (a cap one host lacks does not bound the sum). Burst minutes: the shortest host's."""
    if not per_host:
        return []
    out = []
    for first in per_host[0]:
        same = [next((lim for lim in limits if _same_cap(lim, first)), None) for limits in per_host]
        found = [lim for lim in same if lim is not None]
        if len(found) < len(per_host):
            continue
        scopes = list(dict.fromkeys(lim.scope for lim in found))
        minutes = [lim.minutes for lim in found if lim.minutes is not None]
        out.append(replace(first, value=sum(lim.value for lim in found), minutes=min(minutes) if minutes else None,
                           scope=f"{len(found)} x {scopes[0]}" if len(scopes) == 1 else " + ".join(scopes)))
    return out


def _same_cap(a: Limit, b: Limit) -> bool:
    return (a.kind, a.direction, a.cache_miss_only, a.burst) == (b.kind, b.direction, b.cache_miss_only, b.burst)


def _size(value: str | int | None) -> int:
    if value is None:
        return 0
    try:
        return parse_size(str(value).split(",")[0].split(":")[0])
    except ValueError:
        return 0
