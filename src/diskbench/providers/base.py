"""The provider seam: where a run's machines come from, and what they are.

A provider brings the profile schema of its machines, checks them before anything is created
(offline and against the cloud), says what a plan costs, creates the machines, waits until they
answer over SSH, says where their disks appear (its device map) and what their limits are,
and always removes what it created. ``local`` (this machine) and ``static`` (hosts that exist)
are providers too; Azure is built in the same way, and others plug in as one folder.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import DiskbenchError, Unavailable
from ..platforms.base import DeviceMap

if TYPE_CHECKING:
    import click
    from pydantic import BaseModel

    from ..advice import Advice
    from ..attribution.limit import Limit
    from ..check import Check
    from ..executors.base import Executor
    from ..executors.hostkeys import HostKeyTrust
    from ..plan import Plan, Unit
    from ..profile.machines import MachineBase
    from ..profile.targets import TargetModel


class NotConfigured(DiskbenchError):
    """A provider that has nothing to log in with (no credentials, no cloud named), or whose login failed.

    ``cleanup`` without ``--provider`` skips such a provider with a line saying why and goes on with
    the others; where the provider was asked for by name, it is an error like any other.
    """


class StopWaiting(KeyboardInterrupt):
    """A second Ctrl-C during a teardown: the user stops waiting for the cloud to finish deleting.

    Raised inside ``ProviderRun.teardown`` (by the runner's signal handler), which says what is left,
    with ids and the command that deletes it, lets go of it (``holds_resources`` turns False) and
    re-raises. A KeyboardInterrupt, so no ``except Exception`` of an SDK on the way swallows it.
    """


@dataclass
class Problem:
    """Something that would make a machine fail, found before anything is created."""

    machine: str
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.machine}: {self.message} ({self.fix})"


@dataclass
class MachineCost:
    machine: str
    size: str
    vm_minutes: float
    usd: float | None
    note: str = ""


@dataclass
class MachineUse:
    """What one machine a provider created for the run was used for, and what it cost.

    Times are seconds since the epoch. ``requested`` is when its creation was asked for and
    ``released`` when its delete was done: the span a cloud can bill (Azure bills a VM per second
    from its allocation, a moment after the request, until it is deallocated or deleted), so the
    VM-minutes are never fewer than the bill's. ``ready``: it answered and could run units;
    ``last_unit``: its last unit ended. A machine still held (``--keep``, or a delete the user stopped
    waiting for) counts until ``now``.
    """

    machine: str
    size: str
    requested: float
    hourly_usd: float | None = None  # its price per hour (VM and disks), None: not in the price table
    ready: float | None = None
    last_unit: float | None = None
    released: float | None = None

    def vm_minutes(self, now: float | None = None) -> float:
        end = self.released if self.released is not None else (time.time() if now is None else now)
        return max(0.0, end - self.requested) / 60

    def usd(self, now: float | None = None) -> float | None:
        return None if self.hourly_usd is None else self.vm_minutes(now) / 60 * self.hourly_usd

    def to_json(self, now: float | None = None) -> dict[str, Any]:
        from datetime import datetime, timezone

        def iso(t: float | None) -> str | None:
            return None if t is None else datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")

        usd = self.usd(now)
        return {"machine": self.machine, "size": self.size, "requested": iso(self.requested),
                "ready": iso(self.ready), "last_unit_ended": iso(self.last_unit), "released": iso(self.released),
                "vm_minutes": round(self.vm_minutes(now), 3), "usd": None if usd is None else round(usd, 4)}


@dataclass
class RunContext:
    """What a provider needs to know about the run it serves."""

    run_id: str
    state_dir: Path  # beside the store: journals, per-run keys
    line: Callable[[str], None]
    options: dict[str, Any] = field(default_factory=dict)  # the provider's own run options


class ProviderRun(ABC):
    """One run's machines of one provider: acquire each, and release them all at the end."""

    def __init__(self) -> None:
        self.stopping = threading.Event()  # set on Ctrl-C: waits end, teardown follows
        self.used: dict[str, MachineUse] = {}  # the machines it created: when, how long, what they cost

    def begin(self, machines: list[MachineBase]) -> None:  # noqa: B027 - optional hook
        """Pre-flight against the cloud and shared resources, before any machine is created."""

    @abstractmethod
    def acquire(self, job: Unit, trust: HostKeyTrust) -> tuple[Executor, Unit]:
        """A connected executor for the job's machine (created first if need be), and the job
        with its host filled in."""

    def device_map(self, machine: str) -> DeviceMap | None:
        """Where this machine's disks are, when only the run knows (e.g. the volumes it attached)."""
        return None

    def limits(self, machine: MachineBase | None, target: TargetModel) -> list[Limit] | None:
        """The target's limits as the cloud told this run (OpenStack: the flavor's and the volume
        types' throttles); None leaves them to the provider's tables (``Provider.limits``)."""
        return None

    def shared_volume(self, spec: BaseModel) -> str:
        """A volume made for this run from ``spec``, a profile's ``shared:`` volume block that this
        provider declared (``Provider.shared_volumes``), deleted with the run's other resources:
        its export, ``ADDRESS:/PATH``, which every client of the group mounts."""
        raise Unavailable(f"{type(self).__name__} makes no shared volume ({type(spec).__name__}): its provider "
                          "declares the block but cannot make it")

    def release(self, machine: str) -> None:  # noqa: B027 - optional hook
        """Give back one machine the moment its part of the run is over (a cloud deletes its VM), while
        other machines still run; sets ``used[machine].released``. A failure here is said and left to
        ``teardown``, which still deletes everything at the end, on errors, Ctrl-C and SIGTERM."""

    def teardown(self) -> None:  # noqa: B027 - optional hook
        """Delete everything this run created; safe to call twice.

        A second Ctrl-C while it waits raises ``StopWaiting`` in it: a provider whose deletes can
        take long says what is left (each resource with its id) and the command that removes it,
        lets go of it, and re-raises.
        """

    @property
    def holds_resources(self) -> bool:
        return False

    def keep_note(self) -> str:
        return ""

    def facts(self) -> dict[str, Any]:
        """What the provider learnt that belongs in the run's record (e.g. live size limits)."""
        return {}


class Provider(ABC):
    name: ClassVar[str]
    default_for_machines: ClassVar[bool] = False  # the provider of machines that name none
    creates_machines: ClassVar[bool] = False

    def machine_schema(self) -> type[BaseModel] | None:
        """The pydantic model of this provider's entries under ``machines:`` (None: it has none).

        Asked only when a profile is read, so listing commands never imports pydantic models.
        """
        return None

    def shared_volumes(self) -> dict[str, type[BaseModel]]:
        """The volume blocks this provider adds to a profile's ``shared:``, by key, each a
        ``profile.shared.VolumeSpec``: a volume made for the run instead of an export that exists
        (``ProviderRun.shared_volume`` makes it). Asked only when a profile is read."""
        return {}

    def spec(self, machine: MachineBase) -> dict[str, Any]:
        """The machine as declared, for testbed keys (never measured values)."""
        return machine.model_dump(exclude={"name", "description", "workloads", "target"}, exclude_none=True)

    def platform(self, machine: MachineBase) -> str:
        """The operating system family of a machine of this provider (a platform's registry name)."""
        return "linux"

    def device_map(self) -> DeviceMap:
        """Where this provider's machines show their disks (temp disk, LUN n, NVMe)."""
        return DeviceMap()

    def offline_problems(self, machines: list[MachineBase]) -> list[Problem]:
        """Checks that need no login: every problem at once, nothing created."""
        return []

    def plan_advice(self, plan: Plan) -> list[Advice]:
        """What this provider has to say about a plan beside the generic warnings (a shared
        volume whose limit caps what the clients can push): an Advice with a reason is a note."""
        return []

    def doctor(self, online: bool) -> list[Check]:
        """``diskbench doctor`` lines for this provider (credentials); the network only if ``online``."""
        return []

    def describe(self, machine: MachineBase) -> tuple[str, str]:
        """(size, storage) of a machine, for the plan table."""
        return "", ""

    def costs(self, plan: Plan, *, refresh: bool, line: Callable[[str], None]) -> tuple[list[MachineCost], str]:
        """Machine-minutes and an estimate per machine of this provider, and where prices came from."""
        return [], ""

    def host_facts(self, ex: Executor) -> dict[str, Any]:
        """Facts a host knows about itself in this provider's cloud (e.g. its metadata service)."""
        return {}

    def limits(self, machine: MachineBase | None, target: TargetModel) -> list[Limit]:
        """The published limits on ``target`` of ``machine`` (VM size, disk tiers), to tell which one bound a
        result; none where nothing is published (this machine, hosts that exist)."""
        return []

    def run_options(self) -> list[Callable[[click.Command], click.Command]]:
        """click options this provider adds to ``run`` (passed back in ``RunContext.options``)."""
        return []

    def commands(self) -> list[click.Command]:
        """CLI commands of this provider (``sizes`` and the like)."""
        return []

    def configured(self, options: dict[str, Any], *, state_dir: Path) -> str | None:
        """Why ``cleanup`` has nowhere to look for this provider's leftovers (no credentials, no cloud
        named), as one phrase with what to set; None when it has. Offline and fast: asked of every
        provider by ``cleanup`` without ``--provider``, so one that is not set up is skipped, not an error."""
        return None

    def cleanup(self, options: dict[str, Any], *, state_dir: Path, run_id: str | None, older_than: float | None,
                dry_run: bool, line: Callable[[str], None]) -> list[str]:
        """Delete what earlier runs left behind; returns what was (or would be) deleted.

        Raises ``NotConfigured`` when logging in fails, so ``cleanup`` can skip the provider."""
        return []

    @abstractmethod
    def start(self, ctx: RunContext) -> ProviderRun:
        """The provider's part of one run."""


def unavailable(name: str, what: str) -> Unavailable:
    return Unavailable(f"the {name} provider cannot {what}")
