"""profile -> plan: which job runs where, and how long it should take, before anything runs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import ProfileError, ProviderUnavailable
from .profile import Host, LoadedProfile, Target, Workload
from .units import parse_duration, parse_size

LOCAL = "local"
SSH = "ssh"
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
    target_name: str = ""
    host: Host | None = None

    @property
    def target_label(self) -> str:
        return self.target_name or self.target.label

    @property
    def key(self) -> str:
        """Stable identity of a job within a run; resume matches on it."""
        return f"{self.machine}/{self.target_label}/{self.workload.name}"

    @property
    def slug(self) -> str:
        parts = [self.workload.name] if self.machine == LOCAL else [self.machine, self.workload.name]
        if self.host is not None and len(self.host.targets) > 1:
            parts.insert(1, self.target_label)
        return re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(parts))


@dataclass
class Plan:
    profile: LoadedProfile
    jobs: list[PlannedJob] = field(default_factory=list)
    destroy_data_on: list[str] = field(default_factory=list)

    @property
    def expected_s(self) -> float:
        """Wall time: machines run in parallel, the jobs of one machine one after another."""
        per_machine: dict[str, float] = {}
        for j in self.jobs:
            per_machine[j.machine] = per_machine.get(j.machine, 0.0) + j.expected_s
        return max(per_machine.values(), default=0.0)

    @property
    def machines(self) -> list[str]:
        return list(dict.fromkeys(j.machine for j in self.jobs))

    def require_runnable(self) -> None:
        """Refuse plans whose machines need a provider this build does not have."""
        remote = sorted({j.machine for j in self.jobs if j.provider not in (LOCAL, SSH)})
        if remote:
            raise ProviderUnavailable(
                f"profile {self.profile.profile.name!r}: machines {', '.join(remote)} need the "
                "Azure provider, which this diskbench does not have yet",
                hint=f"`diskbench plan --profile {self.profile.profile.name}` shows what would run",
            )


def expected_seconds(w: Workload, target: Target | None = None) -> float:
    runtime = parse_duration(w.runtime or 0)
    ramp = parse_duration(w.ramp_time or 0)
    layout_bytes = parse_size(w.size or 0) * (w.numjobs or 1)
    extra = 0.0
    if target is not None and target.precondition:
        extra += layout_bytes / _ASSUMED_LAYOUT_BYTES_PER_S
    if target is not None and isinstance(target.warmup, str):
        extra += parse_duration(target.warmup)
    return _STARTUP_S + ramp + runtime + layout_bytes / _ASSUMED_LAYOUT_BYTES_PER_S + extra


def build_plan(loaded: LoadedProfile, *, target_dir: str | None = None,
               hosts: list[Host] | None = None, destroy_data_on: list[str] | None = None) -> Plan:
    """Expand a profile into jobs. ``hosts`` runs a profile without hosts on the given ones."""
    profile = loaded.profile
    plan = Plan(profile=loaded, destroy_data_on=[*profile.destroy_data_on, *(destroy_data_on or [])])
    resolved = {w.name: profile.resolved(w) for w in profile.workloads}

    def add(w: Workload, machine: str, provider: str, target: Target, target_name: str = "",
            host: Host | None = None) -> None:
        plan.jobs.append(PlannedJob(len(plan.jobs), profile.name, w, machine, provider, target,
                                    expected_seconds(w, target), target_name, host))

    if hosts and (profile.machines or profile.hosts):
        raise ProfileError(f"profile {profile.name!r} names its own machines or hosts; "
                           "--host applies to profiles without them")
    if hosts:
        target = Target(dir=target_dir) if target_dir else profile.target
        hosts = [h.model_copy(update={"targets": {target.label: target}}) for h in hosts]
    for host in hosts or profile.hosts:
        for target_name, target in host.targets.items():
            for name in host.workloads or list(resolved):
                w = resolved[name]
                if w.targets is None or target_name in w.targets:
                    add(w, host.name, SSH, target, target_name, host)
    for machine in profile.machines:
        for name in machine.workloads or list(resolved):
            add(resolved[name], machine.name, machine.provider, machine.target)
    if not plan.jobs and not (profile.machines or profile.hosts or hosts):
        target = Target(dir=target_dir) if target_dir else profile.target
        for w in resolved.values():
            add(w, LOCAL, LOCAL, target)
    return plan
