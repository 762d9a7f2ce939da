"""Before a run: a VM cap that hides the disk cap a job means to measure.

A P30 stops at 200 MB/s with 256 KiB reads; on a Standard_D8ds_v4 the VM's uncached cap, 192 MB/s,
stops it first, so the job measures the VM and the disk's own limit never shows. ``plan`` (and ``run``,
which shares its warnings) says so for every job whose target's own cap at the job's block size (the
disk's, summed over a stripe, from diskbench's limit tables) is above the VM size's cap on the path
its I/O takes: uncached for host caching None, cached for ReadOnly and ReadWrite. The line names a
size of the same family that clears the disk's cap. A job held below the VM's cap by ``rate_iops``
hides nothing. The VM's credit burst is left out: it lifts the cap for at most 30 minutes, so a job
that needs it measures the credits left, not the disk. A workload that measures the VM's cap on
purpose (Azure's guide: three P30s striped to reach the VM's 12,800 IOPS) says so with
``deliberate: {vm_cap: REASON}``, and the warning is a note.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...advice import Advice, listed, said
from ...errors import DiskbenchError
from ...profile.workload import WRITE_MODES
from ...units import parse_size

if TYPE_CHECKING:
    from ...attribution.limit import Limit
    from ...plan import Plan
    from ...profile.targets import TargetModel
    from .schema import Machine

KIND = "vm_cap"  # the deliberate: key that marks the warning chosen on purpose
DISK_KINDS = ("disk_iops", "disk_mbps")
VM_KINDS = {"uncached": ("vm_uncached_iops", "vm_uncached_mbps"), "cached": ("vm_cached_iops", "vm_cached_mbps")}
READ_MODES = ("read", "randread", "rw", "readwrite", "randrw")


def rate(limit: Limit, bs: int) -> float:
    """I/Os of ``bs`` bytes a second that ``limit`` lets through (an I/O larger than the limit's I/O unit
    counts as several, as Azure SSDs count them)."""
    if limit.metric == "mbps":
        return limit.value * 1e6 / bs
    return limit.value / max(1, math.ceil(bs / limit.io_unit_bytes)) if limit.io_unit_bytes else limit.value


def tightest(limits: Iterable[Limit], bs: int) -> Limit | None:
    return min(limits, key=lambda lim: rate(lim, bs), default=None)


@dataclass(frozen=True)
class Hidden:
    """The target's own cap a job would not reach, and the VM's cap (on ``path``) that stops it first."""

    disk: Limit
    vm: Limit
    path: str  # "uncached" or "cached"


def hidden(limits: list[Limit], bs: int, directions: Iterable[str], ceiling: float | None = None) -> Hidden | None:
    """The first direction in which the VM's cap (baseline, not burst) lets fewer I/Os of ``bs`` through
    than the target's own; None when none does, or the job is held (``ceiling`` I/Os a second) at or
    below the VM's cap anyway."""
    for direction in directions:
        applies = [lim for lim in limits if not lim.burst and lim.applies_to(direction)]
        disk = tightest((lim for lim in applies if lim.kind in DISK_KINDS), bs)
        for path, kinds in VM_KINDS.items():
            vm = tightest((lim for lim in applies if lim.kind in kinds), bs)
            if disk is None or vm is None or rate(disk, bs) <= rate(vm, bs):
                continue
            if ceiling is not None and ceiling <= rate(vm, bs):
                continue
            return Hidden(disk, vm, path)
    return None


def directions(rw: str | None) -> list[str]:
    return [d for d, does in (("read", rw in READ_MODES), ("write", rw in WRITE_MODES)) if does]


def larger_size(machine: Machine, target: TargetModel, found: Hidden, bs: int) -> str:
    """The smallest larger size of the machine's family whose cap on the same path clears the disk's,
    with its figures, or "" when the family has none."""
    from .limits.bounds import limits_for
    from .limits.vms import size_names, vm_limits

    current = vm_limits(machine.size)
    if current is None:
        return ""
    disks = sum(d.count for d in machine.data_disks)
    family = [v for v in (vm_limits(n) for n in size_names()) if v is not None and v.family == current.family
              and v.vcpus > current.vcpus and v.max_data_disks >= disks]
    for vm in sorted(family, key=lambda v: v.vcpus):
        try:
            limits = limits_for(machine.model_copy(update={"size": vm.size}), target)
        except DiskbenchError:
            continue
        caps = [lim for lim in limits if lim.kind in VM_KINDS[found.path] and not lim.burst]
        if len(caps) == 2 and all(rate(lim, bs) > rate(found.disk, bs) for lim in caps):
            iops, mbps = sorted(caps, key=lambda lim: lim.metric)
            return f"{iops.label()} / {mbps.value:,.0f} MB/s"  # Standard_D16ds_v4 uncached 25,600 IOPS / 384 MB/s
    return ""


def plan_advice(plan: Plan) -> list[Advice]:
    """One line per machine, target and pair of caps, naming the workloads and block size; a note
    instead where the workload measures the VM's cap on purpose (``deliberate: {vm_cap: ...}``)."""
    from .limits.bounds import limits_for
    from .schema import Machine

    found: dict[tuple[str, str, str, str, str, str, str | None], list[str]] = {}
    for unit in plan.units:
        machine = unit.entry
        if not isinstance(machine, Machine):
            continue
        for job in unit.jobs:
            w = job.workload
            try:
                bs = parse_size(w.bs or "4k")
                limits = limits_for(machine, job.target)
            except (DiskbenchError, ValueError):
                continue
            ceiling = w.rate_iops * (w.numjobs or 1) if w.rate_iops else None
            hit = hidden(limits, bs, directions(w.rw), ceiling)
            if hit is None:
                continue
            instead = larger_size(machine, job.target, hit, bs)
            key = (unit.machine, job.target_label, hit.disk.label(), hit.vm.label(), str(w.bs), instead,
                   (w.deliberate or {}).get(KIND))
            found.setdefault(key, []).append(w.name)
    out = []
    for (machine_name, target, disk, vm, block, instead, reason), names in found.items():
        one = len(set(names)) == 1
        stripe = " x " in disk or " + " in disk  # "3 x P30", "P30 + P20"
        disks, owner = ("disks", "disks'") if stripe else ("disk", "disk's")
        text = (f"{machine_name}: {listed(names)} on {target} stop{'s' if one else ''} at {vm}, below {disk}, "
                f"the {owner} own cap at {block}; {'it measures' if one else 'they measure'} the VM, not the {disks}")
        fix = f"choose a larger size, e.g. {instead}" if instead else f"choose a size whose cap is above the {owner}"
        out.append(Advice(KIND, said(text, fix, reason), reason))
    return out
