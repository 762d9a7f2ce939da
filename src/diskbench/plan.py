"""profile -> plan: which job runs where, and how long it should take, before anything runs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import ProviderUnavailable
from .profile import LoadedProfile, Target, Workload
from .units import parse_duration, parse_size

LOCAL = "local"
_ASSUMED_LAYOUT_BYTES_PER_S = 200 * 1024**2  # a cautious guess for laying out test files
_STARTUP_S = 1.0


@dataclass
class PlannedJob:
    seq: int
    profile: str
    workload: Workload
    machine: str
    provider: str
    target: Target
    expected_s: float

    @property
    def target_label(self) -> str:
        return self.target.label

    @property
    def key(self) -> str:
        """Stable identity of a job within a run; resume matches on it."""
        return f"{self.machine}/{self.target_label}/{self.workload.name}"

    @property
    def slug(self) -> str:
        raw = self.workload.name if self.machine == LOCAL else f"{self.machine}-{self.workload.name}"
        return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)


@dataclass
class Plan:
    profile: LoadedProfile
    jobs: list[PlannedJob] = field(default_factory=list)

    @property
    def expected_s(self) -> float:
        return sum(j.expected_s for j in self.jobs)

    @property
    def providers(self) -> set[str]:
        return {j.provider for j in self.jobs}

    def require_local(self) -> None:
        """Refuse plans whose machines need a provider this build does not have."""
        remote = sorted({j.machine for j in self.jobs if j.provider != LOCAL})
        if remote:
            raise ProviderUnavailable(
                f"profile {self.profile.profile.name!r}: machines {', '.join(remote)} need the "
                "Azure provider, which this diskbench does not have yet",
                hint=f"`diskbench plan --profile {self.profile.profile.name}` shows what would run",
            )


def expected_seconds(w: Workload) -> float:
    runtime = parse_duration(w.runtime or 0)
    ramp = parse_duration(w.ramp_time or 0)
    layout_bytes = parse_size(w.size or 0) * (w.numjobs or 1)
    return _STARTUP_S + ramp + runtime + layout_bytes / _ASSUMED_LAYOUT_BYTES_PER_S


def build_plan(loaded: LoadedProfile, *, target_dir: str | None = None) -> Plan:
    profile = loaded.profile
    plan = Plan(profile=loaded)
    resolved = {w.name: profile.resolved(w) for w in profile.workloads}
    if not profile.machines:
        target = Target(dir=target_dir) if target_dir else profile.target
        for w in resolved.values():
            plan.jobs.append(PlannedJob(len(plan.jobs), profile.name, w, LOCAL, LOCAL, target,
                                        expected_seconds(w)))
        return plan
    for machine in profile.machines:
        for name in machine.workloads or list(resolved):
            w = resolved[name]
            plan.jobs.append(PlannedJob(len(plan.jobs), profile.name, w, machine.name,
                                        machine.provider, machine.target, expected_seconds(w)))
    return plan
