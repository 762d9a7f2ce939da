"""Which published limits apply to one benchmark target on one Azure machine.

A target is the temp disk, the OS disk, one or more data disks by LUN (striped), or local NVMe devices.
What bounds it depends on the path its I/O takes: uncached disk I/O meets each disk's cap (summed over a
stripe) and the VM's uncached cap; I/O that a host cache serves meets the VM's cached limit instead of the
disk's own cap; the temp disk and NVMe devices have their own figures. Burst caps are listed next to the
baseline caps they lift, flagged ``burst`` with their duration at full credits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ....attribution.limit import Limit
from .disks import DiskLimits, LimitsError, disk_limits
from .vms import VmLimits, vm_limits

CACHING = ("None", "ReadOnly", "ReadWrite")
TARGET_KINDS = ("temp", "os", "lun", "nvme")


@dataclass(frozen=True)
class DiskSpec:
    """One managed disk as attached: type, size, host caching, LUN (None for the OS disk)."""

    type: str
    size_gb: int
    caching: str = "None"
    lun: int | None = None
    iops: int | None = None  # Premium SSD v2 / Ultra: as provisioned
    mbps: float | None = None
    on_demand_burst: bool = False


@dataclass(frozen=True)
class MachineSpec:
    """A VM size with its disks. ``ephemeral_os``: the OS disk lives on CacheDisk/ResourceDisk/NvmeDisk."""

    size: str
    os_disk: DiskSpec | None = None
    data_disks: tuple[DiskSpec, ...] = ()
    ephemeral_os: str | None = None


@dataclass(frozen=True)
class TargetSpec:
    """What a workload ran on: ``temp``, ``os``, ``lun`` (with ``luns``) or ``nvme`` (``nvme_devices``: None = all)."""

    kind: str
    luns: tuple[int, ...] = field(default=())
    nvme_devices: int | None = None


def target_limits(machine: MachineSpec, target: TargetSpec, direction: str | None = None) -> list[Limit]:
    """Every published limit on ``target``; only those that apply to ``direction`` when given."""
    vm = vm_limits(machine.size)
    if vm is None:
        raise LimitsError(f"{machine.size} is not in diskbench's size data", hint="check the size name")
    if target.kind == "temp":
        limits = _temp(vm)
    elif target.kind == "nvme":
        limits = _nvme(vm, target.nvme_devices)
    elif target.kind == "os":
        limits = _os(vm, machine)
    elif target.kind == "lun":
        limits = _disks(vm, _by_lun(machine, target.luns))
    else:
        raise LimitsError(f"unknown target kind {target.kind!r}", hint=f"use one of {', '.join(TARGET_KINDS)}")
    return [lim for lim in limits if direction is None or lim.applies_to(direction)]


def _vm_source(vm: VmLimits) -> str:
    return f"{vm.source} ({vm.doc_version})"


def _disk_source(d: DiskLimits) -> str:
    return f"{d.source} ({d.doc_version})"


def _pair(kind: str, iops: float | None, mbps: float | None, scope: str, source: str, *, direction: str = "any",
          burst: bool = False, minutes: float | None = None) -> list[Limit]:
    """An IOPS and an MB/s limit of the same scope, skipping figures that are not published."""
    out = []
    for metric, value in (("iops", iops), ("mbps", mbps)):
        if value:
            out.append(Limit(kind=f"{kind}_{metric}", value=float(value), scope=scope, source=source,
                             direction=direction, burst=burst, minutes=minutes))
    return out


def _cached(vm: VmLimits) -> list[Limit]:
    return _pair("vm_cached", vm.cached_iops, vm.cached_mbps, f"{vm.size} cached+temp", _vm_source(vm))


def _temp(vm: VmLimits) -> list[Limit]:
    if vm.temp_nvme and vm.nvme_disks and not vm.temp_gib:  # Lsv4: the NVMe disks are the temp disks
        return _nvme(vm, None, kind="temp")
    if not vm.temp_gib:
        raise LimitsError(f"{vm.size} has no temp disk", hint="choose a size with a 'd' or target another disk")
    scope, source = f"{vm.size} temp disk", _vm_source(vm)
    out = _pair("temp", vm.temp_read_iops, vm.temp_read_mbps, scope, source, direction="read")
    out += _pair("temp", vm.temp_write_iops, vm.temp_write_mbps, scope, source, direction="write")
    return out + _cached(vm)  # older sizes share one cached+temp budget


def _nvme(vm: VmLimits, devices: int | None, kind: str = "nvme") -> list[Limit]:
    if not vm.nvme_disks:
        raise LimitsError(f"{vm.size} has no local NVMe disks")
    used = vm.nvme_disks if devices is None else devices
    if not 1 <= used <= vm.nvme_disks:
        raise LimitsError(f"{vm.size} has {vm.nvme_disks} NVMe disk(s), not {used}")
    share = used / vm.nvme_disks  # the published figures are for all devices together
    scope, source = f"{used} x NVMe of {vm.size}", _vm_source(vm)

    def part(value: float | None) -> float | None:
        return value * share if value else None

    out = _pair(kind, part(vm.nvme_read_iops), part(vm.nvme_read_mbps), scope, source, direction="read")
    return out + _pair(kind, part(vm.nvme_write_iops), part(vm.nvme_write_mbps), scope, source, direction="write")


def _os(vm: VmLimits, machine: MachineSpec) -> list[Limit]:
    placement = machine.ephemeral_os
    if placement is None:
        if machine.os_disk is None:
            raise LimitsError("the machine has neither an OS disk nor an ephemeral OS placement")
        return _disks(vm, [machine.os_disk])
    if placement == "CacheDisk":
        return _cached(vm)
    if placement in ("ResourceDisk", "NvmeDisk"):
        return _temp(vm)
    raise LimitsError(f"unknown ephemeral OS placement {placement!r}", hint="use CacheDisk, ResourceDisk or NvmeDisk")


def _by_lun(machine: MachineSpec, luns: Iterable[int]) -> list[DiskSpec]:
    attached = {d.lun: d for d in machine.data_disks}
    wanted = list(luns)
    if not wanted:
        raise LimitsError("a LUN target names no LUN", hint="give luns, e.g. (0, 1, 2)")
    missing = [lun for lun in wanted if lun not in attached]
    if missing:
        raise LimitsError(f"no data disk at LUN {', '.join(map(str, missing))} on {machine.size}")
    return [attached[lun] for lun in wanted]


def _disks(vm: VmLimits, specs: list[DiskSpec]) -> list[Limit]:
    """Limits of one disk or a stripe: the disks' caps summed, and the VM's cap for the path the I/O takes."""
    for spec in specs:
        if spec.caching not in CACHING:
            raise LimitsError(f"unknown host caching {spec.caching!r}", hint=f"use one of {', '.join(CACHING)}")
    disks = [disk_limits(s.type, s.size_gb, s.iops, s.mbps, on_demand_burst=s.on_demand_burst) for s in specs]
    modes = {s.caching if d.host_caching else "None" for s, d in zip(specs, disks, strict=True)}
    if len(modes) > 1:
        raise LimitsError("a stripe mixes host caching modes: its limits do not add up",
                          hint="stripe disks with the same caching")
    mode = modes.pop()
    scope = _stripe_label(disks)
    if mode == "None":
        return _uncached(vm, disks, scope)
    # ReadOnly: reads a cache serves skip the disk cap, writes go through; ReadWrite: both may be absorbed.
    read = _disk_caps(disks, scope, direction="read", cache_miss_only=True)
    write = _disk_caps(disks, scope, direction="write", cache_miss_only=mode == "ReadWrite")
    return _cached(vm) + read + write


def _uncached(vm: VmLimits, disks: list[DiskLimits], scope: str) -> list[Limit]:
    special = all(d.kind in ("premium_ssd_v2", "ultra") for d in disks) and vm.ultra_v2_iops
    if special:  # v6-era sizes publish separate caps for Ultra / Premium SSD v2
        base = (vm.ultra_v2_iops, vm.ultra_v2_mbps, vm.ultra_v2_burst_iops, vm.ultra_v2_burst_mbps)
    else:
        base = (vm.uncached_iops, vm.uncached_mbps, vm.burst_iops, vm.burst_mbps)
    iops, mbps, burst_iops, burst_mbps = base
    source = _vm_source(vm)
    out = _pair("vm_uncached", iops, mbps, f"{vm.size} uncached", source)
    out += _pair("vm_burst", _above(burst_iops, iops), _above(burst_mbps, mbps), f"{vm.size} uncached burst",
                 source, burst=True, minutes=30.0)
    return out + _disk_caps(disks, scope)


def _above(burst: float | None, base: float | None) -> float | None:
    """A burst figure only when it lifts the baseline (L8s_v2 publishes 8,000 burst IOPS = its baseline)."""
    return burst if burst and (base is None or burst > base) else None


def _disk_caps(disks: list[DiskLimits], scope: str, direction: str = "any",
               cache_miss_only: bool = False) -> list[Limit]:
    units = {d.io_unit_bytes for d in disks}
    unit = units.pop() if len(units) == 1 else None
    source = "; ".join(sorted({_disk_source(d) for d in disks}))
    out = [Limit(kind="disk_iops", value=float(sum(d.iops for d in disks)), scope=scope, source=source,
                 direction=direction, cache_miss_only=cache_miss_only, io_unit_bytes=unit),
           Limit(kind="disk_mbps", value=sum(d.mbps for d in disks), scope=scope, source=source,
                 direction=direction, cache_miss_only=cache_miss_only)]
    minutes = [d.burst_minutes for d in disks if d.burst_iops]
    if minutes:  # disks without burst still add their baseline to the stripe's burst ceiling
        lasts = None if None in minutes else min(m for m in minutes if m is not None)
        for kind, value in (("disk_burst_iops", float(sum(d.burst_iops or d.iops for d in disks))),
                            ("disk_burst_mbps", sum(d.burst_mbps or d.mbps for d in disks))):
            out.append(Limit(kind=kind, value=value, scope=f"{scope} burst", source=source, direction=direction,
                             cache_miss_only=cache_miss_only, burst=True, minutes=lasts,
                             io_unit_bytes=unit if kind.endswith("iops") else None))
    return out


def _stripe_label(disks: list[DiskLimits]) -> str:
    """``P30``, ``3 x P30`` or ``P30 + P20``."""
    labels = [d.label for d in disks]
    if len(labels) > 1 and len(set(labels)) == 1:
        return f"{len(labels)} x {labels[0]}"
    return " + ".join(labels)
