"""The plan: the units of work, where they run, and how long they take, before anything runs.

expand.py makes a plan from a profile; this module is what a plan is, which every seam reads
(so it asks no registry and imports nothing that does).

A unit of work (``Unit``) is one engine run. Usually that is one workload on one target
of one machine; a workload with ``sections`` runs several jobs at once on several targets of
one machine (one engine run, like Azure's ``fioreadwrite.ini``), and a unit may span several
machines (one job driven from many clients at once).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .profile.machines import Host, MachineBase
from .profile.schema import LoadedProfile
from .profile.targets import NfsTarget, TargetModel
from .profile.workload import Workload
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
    def on_shared(self) -> bool:
        """Whether the unit measures the run's shared volume: a client group's unit, or a machine's on a
        target ``nfs: shared``."""
        return bool(self.machines) or any(isinstance(j.target, NfsTarget) and j.target.on_shared for j in self.jobs)

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


@dataclass(frozen=True)
class AutoRepeats:
    """``--repeats auto[:MAX]``: every job runs ``minimum`` times (interleaved, as fixed repeats do), then
    each job the gate finds INCONCLUSIVE runs once more, round after round, up to ``limit`` times."""

    minimum: int
    limit: int

    def __str__(self) -> str:
        return f"auto:{self.limit}"


@dataclass
class Plan:
    profile: LoadedProfile
    units: list[Unit] = field(default_factory=list)
    destroy_data_on: list[str] = field(default_factory=list)
    auto: AutoRepeats | None = None  # repeats until the gate decides (its units are the first rounds)

    @property
    def expected_s(self) -> float:
        """Wall time: machines run in parallel, the jobs of one machine one after another, and the parts
        that measure the run's shared volume one after another (``wait_s``)."""
        per_machine: dict[str, float] = {}
        for j in self.units:
            per_machine[j.machine] = per_machine.get(j.machine, 0.0) + j.expected_s
        return max((s + self.wait_s(m) for m, s in per_machine.items()), default=0.0)

    def shared_turns(self) -> list[str]:
        """The parts (a client group, a machine) that measure the run's shared volume, in the order they
        take it: one at a time, the client group first, then each machine that mounts it itself."""
        return list(dict.fromkeys(j.machine for j in self.units if j.on_shared))

    def wait_s(self, part: str) -> float:
        """How long ``part`` (a machine, or a client group by its name) waits for its turn on the shared
        volume: the expected time of the parts before it (0 for every other part)."""
        turns = self.shared_turns()
        before = turns[:turns.index(part)] if part in turns else []
        return sum(j.expected_s for j in self.units if j.machine in before)

    @property
    def machines(self) -> list[str]:
        return list(dict.fromkeys(j.machine for j in self.units))

    def providers(self) -> list[str]:
        return list(dict.fromkeys(j.provider for j in self.units))


def layout_seconds(size: int) -> float:
    """How long writing (or reading) ``size`` bytes may take: a cautious guess."""
    return size / _ASSUMED_LAYOUT_BYTES_PER_S


def expected_seconds(w: Workload, target: TargetModel | None = None) -> float:
    runtime = parse_duration(w.runtime or 0)
    ramp = parse_duration(w.ramp_time or 0)
    layout_bytes = parse_size(w.size or 0) * (w.numjobs or 1)
    extra = layout_seconds(w.flush_bytes)  # flush_cache: reading the separate data set (its layout: expand.py)
    if target is not None and target.precondition:
        extra += layout_bytes / _ASSUMED_LAYOUT_BYTES_PER_S
    if target is not None and isinstance(target.warmup, str):
        extra += parse_duration(target.warmup)
    extra += w.drain_s  # draining a burst: as long as it may take
    rounds = w.rounds  # steady state: as long as it may take
    return (_STARTUP_S + ramp + runtime) * rounds + layout_bytes / _ASSUMED_LAYOUT_BYTES_PER_S + extra
