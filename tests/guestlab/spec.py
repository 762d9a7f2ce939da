"""What a lab guest looks like: its disks, where they sit, and the caps and caches QEMU puts on them.

A ``GuestSpec`` is plain data; ``qemu.py`` turns it into a command line. Cloud storage limits are
emulated with QEMU's block layer, which is exact under TCG (the emulated CPU is slow, the token buckets
are not): a ``Throttle`` is one throttle group, a disk's ``cap`` is its own group on its base node, names
in ``shared`` are groups several disks pass through (a VM-level uncached limit), and ``caching``
layers a copy-on-read qcow2 overlay (4 KiB clusters) above the capped base as the host cache, under the
VM's cached limit (``vm_cached``). Sizes are small on purpose: fio needs tens of MiB, and backing files
are preallocated so throttling and latency are real.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

Bus = Literal["virtio", "scsi", "nvme"]
Controller = Literal["SCSI", "NVMe"]
Caching = Literal["None", "ReadOnly", "ReadWrite"]
Backing = Literal["file", "null"]
NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
MAX_DISK_MIB = 1024
MAX_LATENCY_MS = 1000.0  # a remote disk's emulated latency, at the lab's scale (2 ms / 0.002 at most)
MAX_TEMP_NVME = 4  # v6 sizes have up to four raw NVMe temp disks (converting-scsi-to-nvme-storage.md)


@dataclass(frozen=True)
class Throttle:
    """Limits of one QEMU throttle group, per second (None: no limit). Bytes for bps.

    ``burst_iops``/``burst_bps`` are QEMU's ``x-*-total-max``: the bucket holds max x ``burst_seconds``
    operations and drains at the average, so a burst lasts max*len/(max-avg) seconds (a bit longer than
    ``burst_seconds``) and then falls back to the average, like a cloud disk's credit burst.
    """

    iops: int | None = None
    iops_read: int | None = None
    iops_write: int | None = None
    bps: int | None = None
    bps_read: int | None = None
    bps_write: int | None = None
    burst_iops: int | None = None
    burst_bps: int | None = None
    burst_seconds: int = 1

    def __post_init__(self) -> None:
        if self.iops is not None and (self.iops_read is not None or self.iops_write is not None):
            raise ValueError("Throttle: iops (total) cannot be combined with iops_read/iops_write (QEMU rule)")
        if self.bps is not None and (self.bps_read is not None or self.bps_write is not None):
            raise ValueError("Throttle: bps (total) cannot be combined with bps_read/bps_write (QEMU rule)")
        for burst, avg, what in ((self.burst_iops, self.iops, "iops"), (self.burst_bps, self.bps, "bps")):
            if burst is not None and (avg is None or burst < avg):
                raise ValueError(f"Throttle: burst_{what} needs {what} (the baseline) and must be at least it")
        if not any(v is not None for v in self.limits().values()):
            raise ValueError("Throttle: give at least one limit")

    def limits(self) -> dict[str, int | None]:
        return {"iops-total": self.iops, "iops-read": self.iops_read, "iops-write": self.iops_write,
                "bps-total": self.bps, "bps-read": self.bps_read, "bps-write": self.bps_write}

    def qemu_props(self) -> str:
        """The properties of ``-object throttle-group,id=...,<these>``."""
        props = [f"x-{k}={v}" for k, v in self.limits().items() if v is not None]
        for burst, key in ((self.burst_iops, "iops-total"), (self.burst_bps, "bps-total")):
            if burst is not None:
                props += [f"x-{key}-max={burst}", f"x-{key}-max-length={self.burst_seconds}"]
        return ",".join(props)

    def qmp_limits(self) -> dict[str, int]:
        """The same limits as QMP's ThrottleLimits (``qom-set /objects/<group> limits``); 0 is no limit."""
        limits = {k: v for k, v in self.limits().items() if v is not None}
        for burst, key in ((self.burst_iops, "iops-total"), (self.burst_bps, "bps-total")):
            if burst is not None:
                limits |= {f"{key}-max": burst, f"{key}-max-length": self.burst_seconds}
        return limits

    def writes_only(self) -> Throttle | None:
        """The write side of this cap (for a ReadOnly-cached disk, whose writes still go at the disk's cap)."""
        iops, bps = self.iops_write or self.iops, self.bps_write or self.bps
        return Throttle(iops_write=iops, bps_write=bps) if iops or bps else None


@dataclass(frozen=True)
class DiskSpec:
    """One data disk: a preallocated raw file of ``size_mib`` behind the given bus.

    scsi disks sit on controller scsi1 (PCI 0x6) at ``lun`` (default: their order among scsi disks), with
    vendor Msft / model Virtual Disk, so the guest has /dev/disk/azure/scsi1/lunN as on Azure. nvme disks
    are NVMe controllers with ``serial`` (/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_<serial>); virtio disks are
    virtio-blk (/dev/disk/by-id/virtio-<serial>). ``latency_ms`` makes it remote: every I/O that reaches its
    image (below its caps and its cache) waits that long, a managed disk's round trip to its storage (qemu.py;
    armed with the caps when they wait for the boot).

    ``backing="null"`` keeps no data: QEMU's null-co driver reads zeroes and drops writes, and its own
    timers give every I/O ``latency_ms``, as many in flight as the guest sends (the NBD link carries 16)
    and with no relay between a request and its due time. For benchmarks whose data is never read back
    (bench/adaptive); the latency holds from the boot on, and there is no cache above it.
    """

    name: str
    size_mib: int = 64
    bus: Bus = "scsi"
    lun: int | None = None
    serial: str | None = None
    cap: Throttle | None = None
    shared: tuple[str, ...] = ()
    caching: Caching = "None"
    latency_ms: float = 0.0  # a remote disk's per-I/O service latency (qemu.py: the base behind a delay link)
    backing: Backing = "file"

    def __post_init__(self) -> None:
        if not NAME.match(self.name):
            raise ValueError(f"DiskSpec name {self.name!r}: 1-12 lowercase letters/digits, starting with a letter")
        if not 0 <= self.latency_ms <= MAX_LATENCY_MS:
            raise ValueError(f"DiskSpec {self.name}: latency_ms must be 0..{MAX_LATENCY_MS}")
        if not 1 <= self.size_mib <= MAX_DISK_MIB:
            raise ValueError(f"DiskSpec {self.name}: size_mib must be 1..{MAX_DISK_MIB} (lab disks stay small)")
        if self.backing == "null" and self.caching != "None":
            raise ValueError(f"DiskSpec {self.name}: a null backing keeps no data to cache, use caching='None'")
        if self.caching != "None" and self.bus not in ("scsi", "virtio"):
            raise ValueError(f"DiskSpec {self.name}: caching emulates Azure host caching, use bus='scsi'")

    @property
    def serial_number(self) -> str:
        return self.serial or self.name


@dataclass(frozen=True)
class GuestSpec:
    """A guest: its layout, disks, throttle groups and network, as the test asks for it.

    ``azure``: OS disk on scsi0 (PCI 0x5) LUN 0 and ``temp`` on LUN 1, so /dev/disk/azure/root and
    /resource exist; otherwise the OS disk is virtio-blk. ``disk_controller="NVMe"`` (an Azure v6 size): the
    OS disk is namespace 1 and each scsi-bus data disk namespace LUN+2 of one remote NVMe controller
    (PCI 0x7, "MSFT NVMe Accelerator v1.0" in the guest), and ``temp_nvme`` are raw temp disks, one NVMe
    controller each (PCI 0x1a-0x1d, "Microsoft NVMe Direct Disk v2"); a ``temp`` disk then stays on scsi0
    LUN 1 (Ebdsv5: NVMe remote disks beside a SCSI temp disk). ``groups``: shared throttle groups by name
    (referenced from ``DiskSpec.shared``). ``vm_cached``: the VM's cached limit over every cached disk.
    ``ip2``: static address on a private segment (given to ``GuestLab.start``). ``forwards``: guest TCP
    ports forwarded to free ports on 127.0.0.1 (``Guest.forwarded``). ``kernel_extra``: more kernel
    arguments (``lab.debug=1`` writes lab-init's timestamped steps to the serial log).
    ``caps_after_boot``: QEMU starts every throttle group without limits and ``GuestLab.start`` sets
    them over QMP once sshd runs: the guest boots at full speed however small its caps are (a cloud
    disk's caps never slow a VM's boot the way a 1-IOPS lab cap would), and a credit burst starts full.
    """

    name: str = "guest"
    azure: bool = False
    disks: tuple[DiskSpec, ...] = ()
    temp: DiskSpec | None = None
    disk_controller: Controller = "SCSI"
    temp_nvme: tuple[DiskSpec, ...] = ()
    os_disk: DiskSpec | None = None  # the OS disk's cap, shared groups and caching (its data is the image)
    groups: Mapping[str, Throttle] = field(default_factory=dict)
    vm_cached: Throttle | None = None
    ip2: str | None = None
    nfs_server: bool = False
    forwards: tuple[int, ...] = ()
    memory_mib: int = 512
    smp: int = 1
    kernel_extra: str = ""
    user: str = "root"  # the login; another name is created with passwordless sudo (a cloud image's user)
    caps_after_boot: bool = False

    def __post_init__(self) -> None:
        if not NAME.match(self.name):
            raise ValueError(f"GuestSpec name {self.name!r}: 1-12 lowercase letters/digits, starting with a letter")
        names = [d.name for d in self.all_disks()]
        if len(set(names)) != len(names) or "os" in names:
            raise ValueError(f"GuestSpec {self.name}: disk names must be unique and not 'os': {names}")
        if (self.temp is not None or self.temp_nvme or self.disk_controller != "SCSI") and not self.azure:
            raise ValueError(f"GuestSpec {self.name}: a temp disk needs the Azure layout (azure=True), and so "
                             "does an NVMe disk controller")
        if len(self.temp_nvme) > MAX_TEMP_NVME or any(d.caching != "None" for d in self.temp_nvme):
            raise ValueError(f"GuestSpec {self.name}: at most {MAX_TEMP_NVME} raw NVMe temp disks, uncached")
        for disk in self.all_disks():
            unknown = set(disk.shared) - set(self.groups)
            if unknown:
                raise ValueError(f"GuestSpec {self.name}: disk {disk.name} names unknown groups {sorted(unknown)}")
        luns = [lun for _, lun in self.scsi_luns()]
        if len(set(luns)) != len(luns):
            raise ValueError(f"GuestSpec {self.name}: two scsi disks on one LUN: {luns}")
        buses = [d.bus for d in self.disks]
        nvme_max = 14 - (MAX_TEMP_NVME if self.temp_nvme else 0)  # slots 0x10-0x1d; temp NVMe take 0x1a-0x1d
        if buses.count("nvme") > nvme_max or buses.count("virtio") > 8:
            raise ValueError(f"GuestSpec {self.name}: at most {nvme_max} NVMe and 8 virtio data disks")

    @property
    def has_nvme(self) -> bool:
        """Whether QEMU gives this guest an NVMe controller (then it runs on one host core: guest.py)."""
        return self.disk_controller == "NVMe" or bool(self.temp_nvme) or any(d.bus == "nvme" for d in self.disks)

    def all_disks(self) -> list[DiskSpec]:
        return [*self.disks, *([self.temp] if self.temp else []), *self.temp_nvme,
                *([self.os_disk] if self.os_disk else [])]

    def scsi_luns(self) -> list[tuple[DiskSpec, int]]:
        """Data disks on scsi1 with their LUN: explicit ones, the rest in order on the free LUNs."""
        scsi = [d for d in self.disks if d.bus == "scsi"]
        taken = {d.lun for d in scsi if d.lun is not None}
        free = (n for n in range(64) if n not in taken)
        return [(d, d.lun if d.lun is not None else next(free)) for d in scsi]

    def with_(self, **changes: object) -> GuestSpec:
        return replace(self, **changes)  # type: ignore[arg-type]


# --- shapes ---------------------------------------------------------------------------------------

def nvme_disks(count: int, *, size_mib: int = 128, prefix: str = "nvme",
               cap: Throttle | None = None) -> tuple[DiskSpec, ...]:
    """``count`` NVMe devices with serials ``<prefix>-0``... (L-series local NVMe, OpenStack-style volumes)."""
    return tuple(DiskSpec(f"{prefix}{i}", size_mib=size_mib, bus="nvme", serial=f"{prefix}-{i}", cap=cap)
                 for i in range(count))


def plain(name: str = "plain", disks: Iterable[DiskSpec] = (), **kw: object) -> GuestSpec:
    """One virtio OS disk (plus any ``disks``): the simplest VM."""
    return GuestSpec(name=name, disks=tuple(disks), **kw)  # type: ignore[arg-type]


def azure_vm(name: str = "azure", data: Iterable[DiskSpec] = (), *, temp_mib: int | None = 64,
             temp_cap: Throttle | None = None, nvme: int = 0, **kw: object) -> GuestSpec:
    """Azure-shaped: OS and temp disk on scsi0 LUN 0/1, ``data`` on scsi1, optional local NVMe."""
    temp = DiskSpec("temp", size_mib=temp_mib, serial="temp-disk", cap=temp_cap) if temp_mib else None
    return GuestSpec(name=name, azure=True, disks=(*data, *nvme_disks(nvme)), temp=temp, **kw)  # type: ignore[arg-type]


def azure_v6(name: str = "azurev6", data: Iterable[DiskSpec] = (), *, temp_nvme: int = 1, temp_mib: int = 64,
             temp_cap: Throttle | None = None, **kw: object) -> GuestSpec:
    """An Azure v6 size (Ddsv6, Edsv6, ...): OS and ``data`` disks as namespaces of one NVMe controller
    (data disk at LUN n = namespace n+2), and ``temp_nvme`` raw NVMe temp disks, one controller each."""
    temp = tuple(DiskSpec(f"tempnvme{i}", size_mib=temp_mib, bus="nvme", serial=f"azlocal{i + 1:04d}", cap=temp_cap)
                 for i in range(temp_nvme))
    return GuestSpec(name=name, azure=True, disk_controller="NVMe", disks=tuple(data), temp_nvme=temp,
                     **kw)  # type: ignore[arg-type]


def l_series(name: str = "lseries", nvme: int = 2, **kw: object) -> GuestSpec:
    """Azure L-series: Azure layout plus ``nvme`` local NVMe devices."""
    return azure_vm(name, nvme=nvme, **kw)  # type: ignore[arg-type]


def openstack(name: str = "openstack", nvme: int = 4, **kw: object) -> GuestSpec:
    """OpenStack-shaped: a virtio root disk and four NVMe volumes."""
    return GuestSpec(name=name, disks=nvme_disks(nvme), **kw)  # type: ignore[arg-type]


def nfs_server(name: str = "nfs", ip2: str = "192.0.2.2/24", **kw: object) -> GuestSpec:
    """A guest exporting /export over NFS (v3 and v4.x, fsid=0) on a private segment address."""
    return GuestSpec(name=name, ip2=ip2, nfs_server=True, **kw)  # type: ignore[arg-type]
