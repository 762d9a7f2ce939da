"""The scale-out plan: the per-client units of a profile with ``shared:`` folded into group units.

Each job runs once, on every client of the group at the same time, against the shared target;
the per-client units that the ordinary plan made say where each client is and how to reach it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .errors import ProfileError
from .profile.targets import NFS_OPTIONS, NfsTarget

if TYPE_CHECKING:
    from .plan import PlannedJob
    from .profile import Profile, TargetModel

ANF_PENDING = "anf:/volume"  # the ANF volume's export, known once the provider made it
_RANDOM_KEYS = ("randrepeat", "randseed")


def shared_target(profile: Profile) -> TargetModel:
    shared = profile.shared
    assert shared is not None
    if shared.target is not None:
        return shared.target
    assert shared.anf is not None
    return NfsTarget(nfs=ANF_PENDING, options=shared.anf.options or NFS_OPTIONS)


def group_units(profile: Profile, per_client: list[PlannedJob]) -> list[PlannedJob]:
    """One unit per workload (and swept value) spanning every client, in the profile's order."""
    shared = profile.shared
    assert shared is not None
    names = shared.clients or list(dict.fromkeys(j.machine for j in per_client))
    target = shared_target(profile)
    units: dict[str, PlannedJob] = {}
    for job in per_client:
        if job.machine not in names:
            continue
        if job.sections:
            raise ProfileError(f"workload {job.workload.name!r}: sections do not run on a shared target "
                               "(each client runs the same job)")
        once = [k for k in ("protocol", "drain_burst") if getattr(job.workload, k)]
        if once:  # a client group runs each job once, all clients together
            raise ProfileError(f"workload {job.workload.name!r}: {' and '.join(once)}: not for a shared target "
                               f"(a client group runs each job once, on all clients together); drop {once[0]}")
        unit = units.get(job.workload.name)
        if unit is None:
            w = job.workload
            if not shared.randrepeat and not any(k in (w.extra or {}) for k in _RANDOM_KEYS):
                # Identical offsets on every client are served from the server's cache.
                w = w.model_copy(update={"extra": {**(w.extra or {}), "randrepeat": False}})
            unit = replace(job, workload=w, machine=shared.name, target=target, target_name="", host=None,
                           entry=None, machine_spec=None, clients=[], machines=[])
            units[job.workload.name] = unit
        if job.machine not in unit.machines:
            unit.machines.append(job.machine)
            unit.clients.append(job)
    if not units:
        raise ProfileError(f"shared: no workload runs on the clients {', '.join(names)}")
    return list(units.values())
