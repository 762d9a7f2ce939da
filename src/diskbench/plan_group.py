"""The scale-out plan: the per-client units of a profile with ``shared:`` folded into client-group units.

Each job runs once, on every client of the group at the same time, against the shared target,
with the engine's multi-host mode (which says how every client runs the job); the per-client
units that the ordinary plan made say where each client is and how to reach it. A volume a
provider makes for the run stands in the plan as ``KEY:/volume`` until the run has made it.
What cannot run (an engine without a multi-host mode, a volume the clients' provider does not
make) is refused here, before anything is created.

A machine outside the group may mount the same volume itself (a target ``nfs: shared`` with its
own mount options: one client's view of it, with and without nconnect); its units stay its own,
after the group's in the plan, and the runner lets one of them measure the volume at a time.
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
    """One unit per workload (and swept value) spanning every client, in the profile's order; then the
    units of the machines outside the group, as they are. A workload that names ``targets:`` runs
    where those targets are, never on the group (whose clients' own targets are not used)."""
    shared = profile.shared
    assert shared is not None
    names = shared.clients or list(dict.fromkeys(j.machine for j in per_client))
    clients = [j for j in per_client if j.machine in names]
    _check_volume(shared, clients + [j for j in per_client if _mounts_shared(j)])
    _check_outside(shared, names, per_client)
    target = shared_target(shared)
    units: dict[str, Unit] = {}
    for job in clients:
        if job.workload.targets is not None and job.target_name not in job.workload.targets:
            continue
        _check_once(job)
        if job.workload.knee is not None:
            raise ProfileError(f"workload {job.workload.name}: iodepth: auto searches the depth on one machine; a "
                               "client group's job (shared:) runs once at one depth",
                               hint="give it a fixed iodepth (or a list), or targets: of a machine outside the "
                               "group that mounts the volume itself (nfs: shared)")
        unit = units.get(job.workload.name)
        if unit is None:
            w = multi_host(job).plan_workload(job.workload, shared.engine_options())
            unit = replace(job, workload=w, machine=shared.name, target=target, target_name="", host=None,
                           entry=None, machine_spec=None, clients=[], machines=[])
            units[job.workload.name] = unit
        if job.machine not in unit.machines:
            unit.machines.append(job.machine)
            unit.clients.append(job)
    outside = [j for j in per_client if j.machine not in names]
    if not units and not any(_mounts_shared(j) for j in outside):
        raise ProfileError(f"shared: no workload runs on the clients {', '.join(names)}")
    return [*units.values(), *outside]  # the group may have none: --machine chose one that mounts it itself


def _mounts_shared(job: Unit) -> bool:
    return any(isinstance(part.target, NfsTarget) and part.target.on_shared for part in job.jobs)


def check_shared_mounts(profile: Profile, units: list[Unit]) -> None:
    """``nfs: shared`` names the run's shared volume: a profile without ``shared:`` has none."""
    if profile.shared is None:
        mounting = list(dict.fromkeys(j.machine for j in units if _mounts_shared(j)))
        if mounting:
            raise ProfileError(f"{', '.join(mounting)}: a target nfs: shared mounts the run's shared volume, but "
                               "the profile has no shared: block", hint="add shared: (a target or a volume block), "
                               "or give the export as ADDRESS:/PATH")


def _check_outside(shared: SharedBase, names: list[str], units: list[Unit]) -> None:
    """A machine that mounts the shared volume itself (``nfs: shared``) is not one of the group's clients
    (they use the group's mount, never their own targets), and the group's target is a real export."""
    target = shared.target
    if isinstance(target, NfsTarget) and target.on_shared:
        raise ProfileError("shared.target: nfs: shared names this very target; give the export as ADDRESS:/PATH")
    inside = list(dict.fromkeys(j.machine for j in units if j.machine in names and _mounts_shared(j)))
    if inside:
        given = "listed in shared.clients" if shared.clients else "a client of the group (shared.clients: default all)"
        raise ProfileError(f"{', '.join(inside)} mounts the shared volume itself (nfs: shared) but is {given}; "
                           "a client runs the group's jobs on the group's mount",
                           hint="list the group's clients under shared.clients, without it")


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
    """A volume block is made by its provider, in the clients' run: its machines (the clients, and the
    machines that mount it themselves) must be that provider's."""
    volume = shared.volume
    others = sorted({j.provider for j in clients} - {volume.provider}) if volume is not None else []
    if volume is not None and others:
        raise ProfileError(f"shared.{volume.key} needs {volume.provider} machines as clients, not "
                           f"{', '.join(others)}")
