"""profile -> plan: the units of work, where they run, and how long they take, before anything runs.

A unit of work (``Unit``) is one engine run. Usually that is one workload on one target
of one machine; a workload with ``sections`` runs several jobs at once on several targets of
one machine (one engine run, like Azure's ``fioreadwrite.ini``), and a unit may span several
machines (one job driven from many clients at once).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import ProfileError
from .profile import Host, LoadedProfile, MachineBase, TargetModel, Workload
from .profile.targets import directory as dir_target
from .units import parse_duration, parse_size

LOCAL = "local"  # the provider of the machine diskbench runs on
STATIC = "static"  # the provider of hosts that already exist (profile hosts:, --host)
_ASSUMED_LAYOUT_BYTES_PER_S = 200 * 1024**2  # a cautious guess for laying out test files
_STARTUP_S = 1.0


@dataclass(frozen=True)
class Job:
    """One job of a unit: the workload it runs and the target it runs on."""

    workload: Workload
    target_name: str
    target: TargetModel

    @property
    def target_label(self) -> str:
        return self.target_name or self.target.label


@dataclass
class Unit:
    """One unit of work: one engine run (see the module docstring)."""

    seq: int
    profile: str
    workload: Workload
    machine: str
    provider: str
    target: TargetModel
    expected_s: float
    target_name: str = ""
    host: Host | None = None
    sweep: tuple[str, int | str] | None = None
    repeat: int = 1
    repeats: int = 1
    machine_spec: dict[str, Any] | None = None
    entry: MachineBase | None = None  # the provider's machine, for machines a provider creates
    sections: list[Job] = field(default_factory=list)  # several jobs at once (else empty)
    machines: list[str] = field(default_factory=list)  # several machines at once (else empty)
    clients: list[Unit] = field(default_factory=list)  # their own jobs: where and how to reach them
    engine: str = ""
    platform: str = "linux"  # the machine's operating system family (registry name)

    @property
    def target_label(self) -> str:
        if self.sections:
            return "+".join(dict.fromkeys(s.target_label for s in self.sections))
        return self.target_name or self.target.label

    @property
    def jobs(self) -> list[Job]:
        """The jobs of this unit: its sections, or the one workload on the one target."""
        return self.sections or [Job(self.workload, self.target_name, self.target)]

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
        if self.machines:
            out["clients"] = list(self.machines)
        if self.sections:
            out["sections"] = [{"name": s.workload.name, "target": s.target_label} for s in self.sections]
        return out


@dataclass
class Plan:
    profile: LoadedProfile
    units: list[Unit] = field(default_factory=list)
    destroy_data_on: list[str] = field(default_factory=list)

    @property
    def expected_s(self) -> float:
        """Wall time: machines run in parallel, the jobs of one machine one after another."""
        per_machine: dict[str, float] = {}
        for j in self.units:
            per_machine[j.machine] = per_machine.get(j.machine, 0.0) + j.expected_s
        return max(per_machine.values(), default=0.0)

    @property
    def machines(self) -> list[str]:
        return list(dict.fromkeys(j.machine for j in self.units))

    def providers(self) -> list[str]:
        return list(dict.fromkeys(j.provider for j in self.units))


def expected_seconds(w: Workload, target: TargetModel | None = None) -> float:
    runtime = parse_duration(w.runtime or 0)
    ramp = parse_duration(w.ramp_time or 0)
    layout_bytes = parse_size(w.size or 0) * (w.numjobs or 1)
    extra = 0.0
    if target is not None and target.precondition:
        extra += layout_bytes / _ASSUMED_LAYOUT_BYTES_PER_S
    if target is not None and isinstance(target.warmup, str):
        extra += parse_duration(target.warmup)
    extra += w.drain_s  # draining a burst: as long as it may take
    rounds = w.rounds  # steady state: as long as it may take
    return (_STARTUP_S + ramp + runtime) * rounds + layout_bytes / _ASSUMED_LAYOUT_BYTES_PER_S + extra


def _sections(w: Workload, targets: dict[str, TargetModel], default: str) -> list[Job]:
    out = []
    for s in w.sections or []:
        name = s.target or default
        if name not in targets:
            raise ProfileError(f"workload {w.name!r}: section {s.name!r} names target {name!r}, which this "
                               f"machine does not have (it has {', '.join(targets) or 'none'})")
        out.append(Job(w.for_section(s), name, targets[name]))
    return out


def _engine_of(job: Unit, allow_exec: bool = False) -> str:
    """The unit's engine, after it has said it can run every job of the unit as written, and
    that the profile gives it nothing that lands I/O elsewhere or runs programs unasked."""
    from . import registry

    name = job.workload.engine or registry.default_engine(job.platform)
    engine = registry.engines.get(name)
    if job.platform not in engine.platforms:
        raise ProfileError(f"workload {job.workload.name!r} runs {name}, which does not run on {job.platform} "
                           f"({job.machine})", hint=f"{name} runs on {', '.join(engine.platforms)}; set engine:")
    problems = [(part.workload.name, key, why) for part in job.jobs
                for key, why in [*engine.check_workload(part.workload),
                                 *engine.refused_options(part.workload, allow_exec=allow_exec)]]
    if problems:
        whys = list(dict.fromkeys(why for _, _, why in problems))  # several keys, one reason: said once
        text = "; ".join(", ".join(k for _, k, w in problems if w == why) + f": {why}" for why in whys)
        raise ProfileError(f"workload {problems[0][0]!r} cannot run with {name}: {text}")
    return name


def _retarget(target: TargetModel, target_dir: str | None) -> TargetModel:
    """``--target DIR``: the profile's target moved to DIR; how it is prepared (precondition,
    warmup) stays as the profile says."""
    if not target_dir:
        return target
    return dir_target(target_dir).model_copy(update={"precondition": target.precondition, "warmup": target.warmup})


def build_plan(loaded: LoadedProfile, *, target_dir: str | None = None,
               hosts: list[Host] | None = None, destroy_data_on: list[str] | None = None,
               repeats: int | None = None, workloads: list[str] | None = None,
               machines: list[str] | None = None, allow_exec: bool = False) -> Plan:
    """Expand a profile into units (see ``_build``); a problem names the profile's file, as every
    other profile error does."""
    try:
        return _build(loaded, target_dir, hosts, destroy_data_on, repeats, workloads, machines, allow_exec)
    except ProfileError as exc:
        if loaded.path and not exc.message.startswith(loaded.path):
            exc.message = f"{loaded.source}: {exc.message}"
        raise


def _build(loaded: LoadedProfile, target_dir: str | None, hosts: list[Host] | None,
           destroy_data_on: list[str] | None, repeats: int | None, workloads: list[str] | None,
           machines: list[str] | None, allow_exec: bool) -> Plan:
    """Expand a profile into units. ``hosts`` runs a profile without hosts on the given ones.

    Sweeps give one unit per value; repeats run the whole list N times, interleaved (all jobs
    once, then all again), so a slow drift of the disk spreads over every job alike.
    ``workloads`` keeps only the named workloads, ``machines`` only the named machines and hosts
    (to run one machine of a profile again, or a few at a time). ``allow_exec`` lets engine
    options that run programs through; only the person running diskbench may give it.
    """
    profile = loaded.profile
    plan = Plan(profile=loaded, destroy_data_on=[*profile.destroy_data_on, *(destroy_data_on or [])])
    unknown = sorted(set(workloads or []) - {w.name for w in profile.workloads})
    if unknown:
        raise ProfileError(f"profile {profile.name!r} has no workload {', '.join(map(repr, unknown))}",
                           hint=f"its workloads: {', '.join(w.name for w in profile.workloads)}")
    names = [m.name for m in profile.machine_entries] + [h.name for h in profile.hosts]
    missing = sorted(set(machines or []) - set(names))
    if missing:
        raise ProfileError(f"profile {profile.name!r} has no machine or host {', '.join(map(repr, missing))}",
                           hint=f"its machines and hosts: {', '.join(names) or 'none'}")
    resolved = {w.name: profile.expand(w) for w in profile.workloads if not workloads or w.name in workloads}
    once: list[Unit] = []

    def add(name: str, machine: str, provider: str, targets: dict[str, TargetModel], target_name: str,
            host: Host | None = None, spec: dict[str, Any] | None = None, entry: MachineBase | None = None,
            platform: str = "linux") -> None:
        target = targets[target_name]
        for w, sweep in resolved.get(name, []):
            if w.sections:
                if target_name != next(iter(targets)):
                    continue  # a unit with sections runs once per machine, on the targets it names
                sections = _sections(w, targets, target_name)
                first = sections[0]
                expected = max(expected_seconds(s.workload, s.target) for s in sections)
                once.append(Unit(0, profile.name, w, machine, provider, first.target, expected,
                                       first.target_name, host, sweep, machine_spec=spec, entry=entry,
                                       sections=sections, platform=platform))
            elif w.targets is None or not target_name or target_name in w.targets:
                once.append(Unit(0, profile.name, w, machine, provider, target,
                                       expected_seconds(w, target), target_name, host, sweep,
                                       machine_spec=spec, entry=entry, platform=platform))

    if hosts and (profile.machines or profile.hosts):
        raise ProfileError(f"profile {profile.name!r} names its own machines or hosts; "
                           "--host applies to profiles without them")
    if hosts:
        target = _retarget(profile.target, target_dir)
        hosts = [h.model_copy(update={"targets": {target.label: target}}) for h in hosts]
    for host in hosts or [h for h in profile.hosts if not machines or h.name in machines]:
        for target_name in host.targets:
            for name in host.workloads or list(resolved):
                add(name, host.name, STATIC, dict(host.targets), target_name, host, platform=host.platform)
    for machine in [m for m in profile.machine_entries if not machines or m.name in machines]:
        from . import registry

        provider = registry.providers.get(machine.provider)
        spec = provider.spec(machine)
        named = machine.named_targets()
        for target_name in named:
            for name in machine.workloads or list(resolved):
                add(name, machine.name, machine.provider, dict(named), target_name, spec=spec, entry=machine,
                    platform=provider.platform(machine))
    if not (profile.machines or profile.hosts or hosts):
        target = _retarget(profile.target, target_dir)
        for name in resolved:
            add(name, LOCAL, LOCAL, {"": target}, "")
    if profile.shared is not None:
        from .plan_group import group_units

        once = group_units(profile, once)
    engines: dict[str, str] = {}
    for job in once:
        key = f"{job.workload.name}@{job.platform}"
        if key not in engines:
            engines[key] = _engine_of(job, allow_exec)
        job.engine = engines[key]
    n = repeats or profile.repeats
    for rep in range(1, n + 1):
        for job in once:
            plan.units.append(replace(job, seq=len(plan.units), repeat=rep, repeats=n))
    return plan
