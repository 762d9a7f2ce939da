"""What is known before anything runs: the plan, its pre-flight problems, its warnings and its cost.

``diskbench plan`` shows it and ``diskbench run`` checks it first, from one place: the same
pre-flight (offline checks of the machines a provider would create), the same warnings (jobs too
short, too small or too busy for stable numbers; jobs that measure a disk's burst instead of its
baseline) and the same cost (machine-minutes and money per machine, from each provider).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import registry
from .errors import ProfileError
from .expand import build_plan, segmented
from .plan import Plan, Unit
from .profile import LoadedProfile

if TYPE_CHECKING:
    from .providers.base import MachineCost
    from .runner.options import RunOptions


@dataclass
class Cost:
    """One provider's machines with their minutes and estimated price, and where prices came from."""

    provider: str
    machines: list[dict[str, Any]]  # machine, size, vm_minutes, usd (None: no price), note
    source: str
    # a plan with a workload's stop: block: the least the adaptive plan takes (each such job ends at
    # its stop.min, or after five segments when its engine runs it as segments); the most it takes is
    # the fixed plan above (stop.max is the runtime). None: no stop.
    shortest: list[dict[str, Any]] | None = None
    # --repeats auto[:MAX]: the most the rounds can take (every job repeated MAX times); the least is the
    # plan above (its first rounds). None: no automatic repeats.
    longest: list[dict[str, Any]] | None = None

    @property
    def shortest_vm_minutes(self) -> float | None:
        return _total(self.shortest, "vm_minutes")

    @property
    def shortest_usd(self) -> float | None:
        return _total(self.shortest, "usd")

    @property
    def longest_vm_minutes(self) -> float | None:
        return _total(self.longest, "vm_minutes")

    @property
    def longest_usd(self) -> float | None:
        return _total(self.longest, "usd")

    @property
    def vm_minutes(self) -> float:
        return sum(float(m["vm_minutes"]) for m in self.machines)

    @property
    def usd(self) -> float:
        return sum(float(m["usd"] or 0.0) for m in self.machines)

    @property
    def unpriced(self) -> int:
        return sum(m["usd"] is None for m in self.machines)


@dataclass
class PlanReport:
    """A plan with everything said about it before it runs."""

    plan: Plan
    problems: list[str] = field(default_factory=list)  # pre-flight: the run would fail; nothing is created
    warnings: list[str] = field(default_factory=list)  # it would run, but its numbers may mislead
    costs: list[Cost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the profile does on purpose, with its reason

    @property
    def expected_s(self) -> float:
        return self.plan.expected_s

    @property
    def repeats(self) -> tuple[int, int]:
        """(the repeats every job runs, the most it may run): see :func:`repeat_range`."""
        return repeat_range(self.plan)

    def preflight_lines(self) -> list[str]:
        """What pre-flight says, one line each: every problem, or that the machines fit their sizes."""
        machines = self.plan.profile.profile.machine_entries
        if self.problems:
            return [f"pre-flight: {p}" for p in self.problems]
        return [f"pre-flight: {len(machines)} machine(s) fit their sizes (offline check against diskbench's "
                "size data)"] if machines else []

    def check(self) -> None:
        """Raise the pre-flight problems as one error (``run`` calls it before creating anything)."""
        if self.problems:
            profile = self.plan.profile
            raise ProfileError(f"{profile.path}: profile {profile.profile.name!r}: {len(self.problems)} pre-flight "
                               "problem(s); nothing was created", hint="see the lines above")


def plan_for(loaded: LoadedProfile, options: RunOptions) -> Plan:
    """The plan a run with ``options`` runs: the one mapping from run options to a plan (``run``,
    ``plan``, ``resume`` and the library all use it)."""
    return build_plan(loaded, target_dir=options.target_dir, hosts=options.host_models() or None,
                      destroy_data_on=options.destroy_data_on, repeats=options.repeat_rule(),
                      workloads=options.workloads, machines=options.machines, allow_exec=options.allow_exec)


def preflight(loaded: LoadedProfile) -> list[str]:
    """Offline checks of the machines a provider would create: every problem at once."""
    machines = loaded.profile.machine_entries
    problems: list[str] = []
    for name in dict.fromkeys(m.provider for m in machines):
        problems += map(str, registry.providers.get(name).offline_problems([m for m in machines if m.provider == name]))
    return problems


def advice(plan: Plan) -> tuple[list[str], list[str]]:
    """Every warning about a plan and every note, one line per kind, each said once: jobs whose
    numbers vary from run to run (short, small, more jobs than CPUs, buffered in memory) and jobs
    that measure a disk's credit burst instead of its baseline. What the profile marks
    ``deliberate:`` is a note with its reason, not a warning; each provider adds its own
    (``Provider.plan_advice``)."""
    from .advice import stability_advice
    from .attribution.plan_check import burst_advice

    found = [*stability_advice(plan), *burst_advice(plan),
             *(a for name in plan.providers() for a in registry.providers.get(name).plan_advice(plan))]
    return (list(dict.fromkeys(a.text for a in found if a.reason is None)),
            list(dict.fromkeys(a.text for a in found if a.reason is not None)))


def warnings(plan: Plan) -> list[str]:
    """The warnings of :func:`advice`."""
    return advice(plan)[0]


def costs(plan: Plan, *, refresh: bool = False, line: Callable[[str], None] = lambda _text: None) -> list[Cost]:
    """Machine-minutes and estimated cost per machine, per provider that prices its machines."""
    out = []
    short, long = shortest(plan), longest(plan)
    for name in plan.providers():
        provider = registry.providers.get(name)
        machines, source = provider.costs(plan, refresh=refresh, line=line)
        if machines:
            least = provider.costs(short, refresh=False, line=line)[0] if short is not None else None
            most = provider.costs(long, refresh=False, line=line)[0] if long is not None else None
            out.append(Cost(name, _rows(machines), source, _rows(least) if least is not None else None,
                            _rows(most) if most is not None else None))
    return out


def _rows(machines: list[MachineCost]) -> list[dict[str, Any]]:
    return [{"machine": c.machine, "size": c.size, "vm_minutes": c.vm_minutes, "usd": c.usd, "note": c.note}
            for c in machines]


def shortest(plan: Plan) -> Plan | None:
    """The plan with each job that has a ``stop:`` block ended as soon as its stop rule can end it (the
    least an adaptive run takes); None when no job has one. Its longest is the plan itself: ``stop.max``
    is the runtime."""
    from dataclasses import replace

    if not any(job.workload.stop_rule is not None for unit in plan.units for job in unit.jobs):
        return None
    units = []
    for unit in plan.units:
        clients = [replace(c, expected_s=c.expected_s - _unneeded_s(c)) for c in unit.clients]
        units.append(replace(unit, expected_s=unit.expected_s - _unneeded_s(unit), clients=clients))
    return replace(plan, units=units)


def _unneeded_s(unit: Unit) -> float:
    """What the plan counts for ``unit`` that its shortest adaptive run does not take. Every engine run
    of the unit (each step of a knee search) ends at ``stop.min``; a job its engine runs as segments
    (DiskSpd) after its fewest segments (five at least: the stop rule's five batches), whose starts the
    plan counted too, every segment ``max`` allows."""
    from .engines import segments
    from .units import parse_duration

    rules = [r for r in (job.workload.stop_rule for job in unit.jobs) if r is not None]
    if not rules or not unit.workload.runtime:
        return 0.0
    runtime = parse_duration(unit.workload.runtime)
    if segmented(unit):
        counted, least = runtime + max(segments.overhead(r) for r in rules), max(segments.least(r) for r in rules)
    else:
        counted, least = runtime, max(r.min_s for r in rules)
    return max(0.0, counted - least) * unit.workload.rounds


def repeat_range(plan: Plan) -> tuple[int, int]:
    """(the repeats every job of ``plan`` runs, the most it may run): N and N for fixed repeats (the
    profile's ``repeats:`` or ``--repeats N``), the first rounds and MAX for ``--repeats auto:MAX``, whose
    rounds the plan cannot know beforehand."""
    n = max((u.repeats for u in plan.units), default=1)
    return (n, plan.auto.limit) if plan.auto is not None else (n, n)


def longest(plan: Plan) -> Plan | None:
    """With ``--repeats auto[:MAX]``: the plan with every job repeated MAX times, interleaved as the rounds
    run them (the most the rounds can take: each adds one repeat of some jobs); None without them."""
    from dataclasses import replace

    if plan.auto is None:
        return None
    first = [u for u in plan.units if u.repeat == 1]
    rounds = [(r, u) for r in range(1, plan.auto.limit + 1) for u in first]
    units = [replace(u, seq=i, repeat=r, repeats=plan.auto.limit) for i, (r, u) in enumerate(rounds)]
    return replace(plan, units=units)


def report(plan: Plan, *, refresh_prices: bool = False,
           line: Callable[[str], None] = lambda _text: None) -> PlanReport:
    """The plan with its pre-flight problems, warnings and costs."""
    warned, notes = advice(plan)
    return PlanReport(plan, preflight(plan.profile), warned,
                      costs(plan, refresh=refresh_prices, line=line) if plan.profile.profile.machine_entries else [],
                      notes)


def _total(machines: list[dict[str, Any]] | None, key: str) -> float | None:
    """A column of a bound's machine rows summed (a missing price counts 0); None: no such bound."""
    return None if machines is None else sum(float(m[key] or 0.0) for m in machines)
