"""profile -> plan: which job runs where, and how long it should take, before anything runs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import ProfileError, ProviderUnavailable
from .profile import Host, LoadedProfile, Machine, Target, Workload
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
    sweep: tuple[str, int | str] | None = None
    repeat: int = 1
    repeats: int = 1
    machine_spec: dict[str, Any] | None = None
    azure: Machine | None = None

    @property
    def target_label(self) -> str:
        return self.target_name or self.target.label

    @property
    def base_key(self) -> str:
        """The job whatever its repetition: what reports, compare and the gate match on."""
        return f"{self.machine}/{self.target_label}/{self.workload.name}"

    @property
    def key(self) -> str:
        """Stable identity of one run of a job; resume matches on it."""
        return self.base_key + (f"#{self.repeat}" if self.repeats > 1 else "")

    @property
    def slug(self) -> str:
        parts = [self.workload.name] if self.machine == LOCAL else [self.machine, self.workload.name]
        if self.host is not None and len(self.host.targets) > 1:
            parts.insert(1, self.target_label)
        if self.repeats > 1:
            parts.append(f"r{self.repeat}")
        return re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(parts))

    def params(self) -> dict[str, Any]:
        """What this job declares: workload settings, sweep, target and machine (no measurements)."""
        out: dict[str, Any] = {
            "workload": self.workload.model_dump(exclude_none=True, exclude={"description", "targets"}),
            "target": self.target.model_dump(exclude_none=True), "machine": self.machine,
            "provider": self.provider,
        }
        if self.sweep:
            out["sweep"] = {"param": self.sweep[0], "value": self.sweep[1],
                            "base": self.workload.name.rsplit(f"-{self.sweep[0]}", 1)[0]}
        if self.machine_spec:
            out["machine_spec"] = self.machine_spec
        if self.host is not None:
            out["host"] = {"address": self.host.address, "port": self.host.port}
        return out


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

    def require_runnable(self, providers: tuple[str, ...] = (LOCAL, SSH)) -> None:
        """Refuse plans whose machines need a provider this run does not have."""
        remote = sorted({j.machine for j in self.jobs if j.provider not in providers})
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
               hosts: list[Host] | None = None, destroy_data_on: list[str] | None = None,
               repeats: int | None = None) -> Plan:
    """Expand a profile into jobs. ``hosts`` runs a profile without hosts on the given ones.

    Sweeps give one job per value; repeats run the whole list N times, interleaved (all jobs
    once, then all again), so a slow drift of the disk spreads over every job alike.
    """
    profile = loaded.profile
    plan = Plan(profile=loaded, destroy_data_on=[*profile.destroy_data_on, *(destroy_data_on or [])])
    resolved = {w.name: profile.expand(w) for w in profile.workloads}
    once: list[PlannedJob] = []

    def add(name: str, machine: str, provider: str, target: Target, target_name: str = "",
            host: Host | None = None, spec: dict[str, Any] | None = None, azure: Machine | None = None) -> None:
        for w, sweep in resolved[name]:
            if w.targets is None or not target_name or target_name in w.targets:
                once.append(PlannedJob(0, profile.name, w, machine, provider, target,
                                       expected_seconds(w, target), target_name, host, sweep,
                                       machine_spec=spec, azure=azure))

    if hosts and (profile.machines or profile.hosts):
        raise ProfileError(f"profile {profile.name!r} names its own machines or hosts; "
                           "--host applies to profiles without them")
    if hosts:
        target = Target(dir=target_dir) if target_dir else profile.target
        hosts = [h.model_copy(update={"targets": {target.label: target}}) for h in hosts]
    for host in hosts or profile.hosts:
        for target_name, target in host.targets.items():
            for name in host.workloads or list(resolved):
                add(name, host.name, SSH, target, target_name, host)
    for machine in profile.machines:
        spec = machine.model_dump(exclude={"name", "description", "workloads", "target"}, exclude_none=True)
        for target_name, target in machine.named_targets().items():
            for name in machine.workloads or list(resolved):
                add(name, machine.name, machine.provider, target, target_name, spec=spec, azure=machine)
    if not (profile.machines or profile.hosts or hosts):
        target = Target(dir=target_dir) if target_dir else profile.target
        for name in resolved:
            add(name, LOCAL, LOCAL, target)
    n = repeats or profile.repeats
    for rep in range(1, n + 1):
        for job in once:
            plan.jobs.append(replace(job, seq=len(plan.jobs), repeat=rep, repeats=n))
    return plan
