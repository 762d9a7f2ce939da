"""profile -> plan: a profile expanded into units of work (plan.py says what those are).

Expanding asks the installed plugins what they can do: the engine each unit runs (and whether it
takes every job as written), the provider of each machine (its spec and its platform), and, for
a profile with ``shared:``, the engine's multi-host mode (plan_group.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from . import registry
from .errors import ProfileError
from .plan import LOCAL, STATIC, AutoRepeats, Job, Plan, Unit, expected_seconds, layout_seconds
from .plan_group import check_shared_mounts, group_units
from .profile.machines import Host, MachineBase
from .profile.schema import LoadedProfile
from .profile.targets import TargetModel
from .profile.targets import directory as dir_target
from .profile.workload import Workload


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


def _segments_s(job: Unit) -> float:
    """What a ``stop:`` job adds to its unit's time when its engine runs it as short runs (DiskSpd):
    one engine start per segment after the first, at most (``engines/segments.py``)."""
    from .engines.segments import overhead

    rules = [r for r in (part.workload.stop_rule for part in job.jobs) if r is not None]
    if not rules or not segmented(job):
        return 0.0
    return max(overhead(r) for r in rules)


def segmented(job: Unit) -> bool:
    """Whether the unit's engine runs a ``stop:`` job as segments (it cannot end a run early, DiskSpd):
    the plan counts such a job's time, at most and at least, by its segments."""
    engine = registry.engines.get(job.engine)
    return engine.live(0) is None and engine.segments() is not None


def _check_flush(units: list[Unit]) -> None:
    """``flush_cache``: the platform's step, where the platform has one, on a target it can flush."""
    for unit in units:
        w = unit.workload
        if not w.flush_cache:
            continue
        platform = registry.platforms.get(unit.platform)
        if not platform.flushes_caches:
            raise ProfileError(f"workload {w.name!r}: flush_cache is not a step the {unit.platform} platform has "
                               f"({unit.machine})", hint="drop flush_cache for this machine's workloads")
        for part in unit.jobs:
            if part.target.warmup:
                raise ProfileError(f"workload {w.name!r}: flush_cache empties the cache that {part.target_label}'s "
                                   "warmup fills; drop one of them")
            if w.flush_bytes and getattr(part.target, "raw", None):
                raise ProfileError(f"workload {w.name!r}: flush_cache: {w.flush_cache} lays out a data set beside "
                                   f"the job's files, and {part.target_label} is a raw device",
                                   hint="flush_cache: true drops the page cache only")


def _flush_layouts(units: list[Unit]) -> None:
    """The separate data set ``flush_cache`` reads is laid out once per run on each machine and target:
    counted on the first unit that reads it."""
    laid_out: set[tuple[str, str]] = set()
    for unit in units:
        size = unit.workload.flush_bytes
        for label in dict.fromkeys(part.target_label for part in unit.jobs) if size else ():
            if (unit.machine, label) not in laid_out:
                laid_out.add((unit.machine, label))
                unit.expected_s += layout_seconds(size)


def _retarget(target: TargetModel, target_dir: str | None) -> TargetModel:
    """``--target DIR``: the profile's target moved to DIR; how it is prepared (precondition,
    warmup) stays as the profile says."""
    if not target_dir:
        return target
    return dir_target(target_dir).model_copy(update={"precondition": target.precondition, "warmup": target.warmup})


def build_plan(loaded: LoadedProfile, *, target_dir: str | None = None,
               hosts: list[Host] | None = None, destroy_data_on: list[str] | None = None,
               repeats: int | AutoRepeats | None = None, workloads: list[str] | None = None,
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
           destroy_data_on: list[str] | None, repeats: int | AutoRepeats | None, workloads: list[str] | None,
           machines: list[str] | None, allow_exec: bool) -> Plan:
    """Expand a profile into units. ``hosts`` runs a profile without hosts on the given ones.

    Sweeps give one unit per value; repeats run the whole list N times, interleaved (all jobs
    once, then all again), so a slow drift of the disk spreads over every job alike; automatic
    repeats (``AutoRepeats``) plan their minimum, and the runner adds the rounds the gate asks for.
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
    check_shared_mounts(profile, once)
    if profile.shared is not None:
        once = group_units(profile, once)
    engines: dict[str, str] = {}
    for job in once:
        key = f"{job.workload.name}@{job.platform}"
        if key not in engines:
            engines[key] = _engine_of(job, allow_exec)
        job.engine = engines[key]
        job.expected_s += _segments_s(job)
    _check_flush(once)
    if isinstance(repeats, AutoRepeats):
        plan.auto, repeats = repeats, repeats.minimum
    n = repeats or profile.repeats
    for rep in range(1, n + 1):
        for job in once:
            plan.units.append(replace(job, seq=len(plan.units), repeat=rep, repeats=n))
    _flush_layouts(plan.units)
    return plan
