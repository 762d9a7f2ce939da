"""The scale-out plan: the per-client units of a profile with ``shared:`` folded into client-group units.

Each job runs once, on every client of the group at the same time, against the shared target,
with the engine's multi-host mode (which says how every client runs the job); the per-client
units that the ordinary plan made say where each client is and how to reach it. A volume a
provider makes for the run stands in the plan as ``KEY:/volume`` until the run has made it.
What cannot run (an engine without a multi-host mode, a volume the clients' provider does not
make) is refused here, before anything is created.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .errors import ProfileError
from .profile.targets import NFS_OPTIONS, NfsTarget

if TYPE_CHECKING:
    from .engines.base import MultiHost
    from .plan import Unit
    from .profile.schema import Profile
    from .profile.shared import SharedBase
    from .profile.targets import TargetModel


def shared_target(shared: SharedBase) -> TargetModel:
    """The target every client mounts: the profile's, or the volume's export to be."""
    if shared.target is not None:
        return shared.target
    volume = shared.volume
    assert volume is not None
    return NfsTarget(nfs=f"{volume.key}:/volume", options=volume.spec.options or NFS_OPTIONS)


def group_units(profile: Profile, per_client: list[Unit]) -> list[Unit]:
    """One unit per workload (and swept value) spanning every client, in the profile's order."""
    shared = profile.shared
    assert shared is not None
    names = shared.clients or list(dict.fromkeys(j.machine for j in per_client))
    clients = [j for j in per_client if j.machine in names]
    _check_volume(shared, clients)
    target = shared_target(shared)
    units: dict[str, Unit] = {}
    for job in clients:
        _check_once(job)
        unit = units.get(job.workload.name)
        if unit is None:
            w = multi_host(job).plan_workload(job.workload, shared.engine_options())
            unit = replace(job, workload=w, machine=shared.name, target=target, target_name="", host=None,
                           entry=None, machine_spec=None, clients=[], machines=[])
            units[job.workload.name] = unit
        if job.machine not in unit.machines:
            unit.machines.append(job.machine)
            unit.clients.append(job)
    if not units:
        raise ProfileError(f"shared: no workload runs on the clients {', '.join(names)}")
    return list(units.values())


def multi_host(job: Unit) -> MultiHost:
    """The multi-host mode of the engine the job runs with (as the plan will choose it)."""
    from . import registry

    engine = registry.engines.get(job.workload.engine or registry.default_engine(job.platform))
    mode = engine.multi_host()
    if mode is None:
        able = [n for n in registry.engines.names() if registry.engines.get(n).multi_host() is not None]
        raise ProfileError(f"workload {job.workload.name!r}: {engine.name} cannot run one job on many hosts at "
                           f"once, which shared: needs", hint=f"engines that can: {', '.join(able) or 'none'}")
    return mode


def _check_once(job: Unit) -> None:
    """A client group runs each job once, all clients together, and the same job on each."""
    if job.sections:
        raise ProfileError(f"workload {job.workload.name!r}: sections do not run on a shared target "
                           "(each client runs the same job)")
    once = [k for k in ("protocol", "drain_burst") if getattr(job.workload, k)]
    if once:
        raise ProfileError(f"workload {job.workload.name!r}: {' and '.join(once)}: not for a shared target "
                           f"(a client group runs each job once, on all clients together); drop {once[0]}")


def _check_volume(shared: SharedBase, clients: list[Unit]) -> None:
    """A volume block is made by its provider, in the clients' run: its machines must be the clients."""
    volume = shared.volume
    others = sorted({j.provider for j in clients} - {volume.provider}) if volume is not None else []
    if volume is not None and others:
        raise ProfileError(f"shared.{volume.key} needs {volume.provider} machines as clients, not "
                           f"{', '.join(others)}")
