"""The limits of a profile's Azure target: the machine and target models turned into the limit tables' terms.

The profile says ``luns: [0, 1, 2]`` or ``dir: /``; the tables (targets.py) speak of data disks by LUN,
the OS disk, the temp disk and NVMe devices. LUNs are numbered in the order the disks are declared, as
the VM body numbers them. A directory is only attributed where Azure puts it for certain: ``/`` (and a
scratch folder) on the OS disk, ``/mnt`` on the temp disk; any other directory has no limits rather than
the wrong ones.

``DISKBENCH_LIMITS_SCALE`` multiplies every limit: a lab whose throttles stand for the caps at a scale
(tests/providers/azure/lab_cloud.py) is attributed against the caps it enforces; the scale shows in the
limit's scope so no scaled figure passes for a published one.
"""

from __future__ import annotations

import os

from ....attribution.limit import Limit
from ....profile.targets import TargetModel
from ..schema import Machine
from .targets import DiskSpec, MachineSpec, TargetSpec, target_limits

SCALE_ENV = "DISKBENCH_LIMITS_SCALE"
OS_DISK_DEFAULT_GIB = 30  # the marketplace Linux images' OS disk when the profile gives no size


def machine_spec(m: Machine) -> MachineSpec:
    data: list[DiskSpec] = []
    for d in m.data_disks:
        for _ in range(d.count):
            data.append(DiskSpec(d.type, d.size_gb, d.caching, lun=len(data), iops=d.iops,
                                 mbps=float(d.mbps) if d.mbps else None))
    os_disk = None if m.os_disk.ephemeral else DiskSpec(m.os_disk.type, m.os_disk.size_gb or OS_DISK_DEFAULT_GIB,
                                                        m.os_disk.caching)
    return MachineSpec(m.size, os_disk=os_disk, data_disks=tuple(data), ephemeral_os=m.os_disk.ephemeral)


def target_spec(target: TargetModel) -> TargetSpec | None:
    """What the limit tables call ``target``; None where diskbench cannot tell which disk it is."""
    value = target.value
    if target.kind == "lun":
        return TargetSpec("lun", luns=(int(value),))
    if target.kind == "luns":
        return TargetSpec("lun", luns=tuple(int(v) for v in value))
    if target.kind in ("temp", "nvme"):
        return TargetSpec(target.kind)
    if target.kind == "scratch" or (target.kind == "dir" and str(value).rstrip("/") == ""):
        return TargetSpec("os")
    if target.kind == "dir" and str(value).rstrip("/") == "/mnt":
        return TargetSpec("temp")
    return None


def limits_for(m: Machine, target: TargetModel) -> list[Limit]:
    spec = target_spec(target)
    if spec is None:
        return []
    limits = target_limits(machine_spec(m), spec)
    scale = float(os.environ.get(SCALE_ENV) or 1)
    return [lim.scaled(scale) for lim in limits] if scale != 1 else limits
