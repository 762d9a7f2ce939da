"""A GuestSpec as a QEMU command line: machine, kernel, fw_cfg keys, network, and the block graph.

The block graph per data disk, bottom to top (each box one ``-blockdev`` node):

    raw file (preallocated, O_DIRECT)
      -> throttle: the disk's own cap                      (DiskSpec.cap)
      -> throttle: each shared group, e.g. VM uncached     (DiskSpec.shared -> GuestSpec.groups)
      -> qcow2 overlay, 4 KiB clusters, backing = the above (caching ReadOnly/ReadWrite: the host cache)
      -> copy-on-read                                      (a read miss fills the cache)
      -> throttle: the disk's cap on writes only           (ReadOnly: writes still go at the disk's cap)
      -> throttle: the VM cached limit, shared             (GuestSpec.vm_cached)
      -> device (scsi-hd / nvme / virtio-blk)

A remote disk with a service latency (``DiskSpec.latency_ms``: a managed disk's round trip to its storage,
which host caching saves) has no raw file node at the bottom: its image is served by ``qemu-nbd`` on a
unix socket, and QEMU's NBD client reaches it through a delay link (``guest.DelayLink``, a relay process
that holds every request for the latency before passing it on, in order, as many as come), so the latency
sits under the caps and under the cache overlay: a read miss pays it, a write the ReadWrite cache takes
does not. ``Command.remotes`` lists the servers and links to start before QEMU.
QEMU's NBD client sends at most 16 requests at a time (block/nbd.c, MAX_NBD_REQUESTS), so a remote disk
carries at most 16 I/Os a latency whatever the guest's queue depth: 4 x QD8 at 40 ms moved 370-390 IOPS
(bench/adaptive, 2026-11-29). A cap meant to hold a deep job must sit well below that.

A virtio data disk has QEMU's request merging off: virtio-blk would join adjacent requests of one batch
before the throttle, which would then count two of the guest's requests as one op, where Azure counts
every request (up to 256 KiB) as one IO and QEMU's own counters (query-blockstats) count them apart.

With ReadOnly the overlay takes the writes too (the base is never written), so the write cap above it
stands for the write-through to the disk. PCI slots are pinned (user NIC 0x2, private NIC 0x3, virtio
OS disk 0x4, scsi0 0x5, scsi1 0x6, Azure's remote NVMe controller 0x7, virtio data 0x8-0xf, NVMe 0x10-0x1d,
of which an Azure v6 guest's raw temp disks take 0x1a-0x1d): the lab's udev rules read the controller from
the slot (files/65-lab-vmbus-device-id.rules, files/61-lab-azure-nvme-model.rules), and eth0/eth1 follow
slot order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .spec import DiskSpec, GuestSpec, Throttle

MSFT = "vendor=Msft,product=Virtual Disk"
REMOTE_NVME_SLOT = 0x7  # an Azure NVMe VM's OS and data disks: one controller, namespaces 1 and LUN+2
TEMP_NVME_SLOT = 0x1a  # an Azure v6 VM's raw temp disks: one controller each from here
KERNEL_ARGS = "root=LABEL=labroot rw init=/sbin/lab-init console=ttyS0 net.ifnames=0 quiet panic=-1"
CACHE_CLUSTER = 4096


@dataclass(frozen=True)
class Boot:
    """Per-boot facts the spec does not hold: paths, ports, keys and the private link."""

    directory: Path
    tag: str  # the QEMU -name, carrying the lab id
    kernel: Path
    initrd: Path
    root_raw: Path
    ssh_port: int
    forwarded: dict[int, int] = field(default_factory=dict)  # guest port -> host port
    private_netdev: str | None = None  # "-netdev" value without id (from Segment)
    mac_suffix: int = 1
    host_key: Path | None = None
    authorized_keys: Path | None = None
    bind: str = "127.0.0.1"  # where forwarded ports listen ("" inside a network namespace: all)
    qmp: Path | None = None  # a QMP socket (short path: unix socket paths stop at 107 bytes)
    defer_caps: bool = False  # throttle groups start without limits (GuestSpec.caps_after_boot)
    disks: Path | None = None  # where the data and temp disks' files go (GuestLab's disks_in), else directory


@dataclass(frozen=True)
class Remote:
    """A disk image served by qemu-nbd at ``server`` and reached by QEMU at ``link``, ``latency_ms`` later."""

    image: Path
    fmt: str  # raw or qcow2 (qemu-nbd opens the format, QEMU sees the bytes)
    cache: str  # qemu-nbd --cache: none (O_DIRECT, as the raw nodes' cache.direct=on), unsafe (no flush)
    server: Path
    link: Path
    latency_ms: float

    def server_argv(self) -> list[str]:
        return ["qemu-nbd", f"--format={self.fmt}", f"--cache={self.cache}", "--persistent",
                f"--socket={self.server}", str(self.image)]


@dataclass
class Command:
    """The argv plus the files QEMU expects to exist before it starts."""

    argv: list[str] = field(default_factory=list)
    raw_files: list[tuple[Path, int]] = field(default_factory=list)  # preallocate (path, MiB)
    overlays: list[tuple[Path, Path, str, int | None]] = field(default_factory=list)  # (qcow2, backing, fmt, cluster)
    groups: dict[str, str] = field(default_factory=dict)  # throttle-group id -> props
    throttles: dict[str, Throttle] = field(default_factory=dict)  # throttle-group id -> its limits
    defer_caps: bool = False  # groups without limits on the command line; set over QMP after boot
    remotes: list[Remote] = field(default_factory=list)  # qemu-nbd servers and delay links (remote disks)
    socket_prefix: str = "/tmp/guestlab"  # short: a unix socket path stops at 107 bytes

    def add(self, *args: str) -> None:
        self.argv.extend(args)

    def group(self, gid: str, throttle: Throttle) -> str:
        if gid not in self.groups:
            self.groups[gid] = throttle.qemu_props()
            self.throttles[gid] = throttle
            self.add("-object", f"throttle-group,id={gid}" + ("" if self.defer_caps else f",{throttle.qemu_props()}"))
        return gid

    def remote_node(self, node: str, image: Path, fmt: str, cache: str, latency_ms: float) -> str:
        """A node that reads and writes ``image`` through qemu-nbd and a delay link of ``latency_ms``."""
        remote = Remote(image, fmt, cache, Path(f"{self.socket_prefix}-{node}.nbd"),
                        Path(f"{self.socket_prefix}-{node}.lnk"), latency_ms)
        self.remotes.append(remote)
        self.add("-blockdev", f"driver=nbd,node-name={node},server.type=unix,server.path={remote.link}")
        return node

    def throttle_node(self, node: str, gid: str, below: str) -> str:
        self.add("-blockdev", f"driver=throttle,node-name={node},throttle-group={gid},file={below}")
        return node


def _disk_graph(cmd: Command, spec: GuestSpec, disk: DiskSpec, directory: Path, base: str | None = None) -> str:
    """The nodes of one data disk (see the module docstring); returns the top node's name.

    ``base`` is an existing node to build on (the OS disk's image overlay) instead of a raw file.
    """
    if base is None and disk.backing == "null":  # no data: zeroes read, writes dropped, QEMU's own latency
        top = f"{disk.name}-null"
        cmd.add("-blockdev", f"driver=null-co,node-name={top},size={disk.size_mib << 20},read-zeroes=on,"
                             f"latency-ns={round(disk.latency_ms * 1e6)}")
    elif base is None:
        raw = directory / f"{disk.name}.raw"
        cmd.raw_files.append((raw, disk.size_mib))
        top = f"{disk.name}-raw"
        if disk.latency_ms:  # a remote disk: the same preallocated file, O_DIRECT, behind its delay link
            cmd.remote_node(top, raw, "raw", "none", disk.latency_ms)
        else:
            cmd.add("-blockdev", f"driver=raw,node-name={top},file.driver=file,file.filename={raw},cache.direct=on")
    else:
        top = base
    if disk.cap is not None:
        top = cmd.throttle_node(f"{disk.name}-cap", cmd.group(f"cap-{disk.name}", disk.cap), top)
    for name in disk.shared:
        top = cmd.throttle_node(f"{disk.name}-sh-{name}"[:31], cmd.group(f"shared-{name}", spec.groups[name]), top)
    if disk.caching == "None":
        return top
    overlay = directory / f"{disk.name}.cache.qcow2"
    cmd.overlays.append((overlay, directory / f"{disk.name}.raw" if base is None else directory / "os.qcow2",
                         "raw" if base is None else "qcow2", CACHE_CLUSTER))
    cmd.add("-blockdev", f"driver=qcow2,node-name={disk.name}-cache,file.driver=file,file.filename={overlay},"
                         f"cache.direct=on,backing={top}")
    top = f"{disk.name}-cor"
    cmd.add("-blockdev", f"driver=copy-on-read,node-name={top},file={disk.name}-cache")
    write_cap = disk.cap.writes_only() if disk.cap else None
    if disk.caching == "ReadOnly" and write_cap is not None:
        top = cmd.throttle_node(f"{disk.name}-wcap", cmd.group(f"wcap-{disk.name}", write_cap), top)
    if spec.vm_cached is not None:
        top = cmd.throttle_node(f"{disk.name}-vmc", cmd.group("vm-cached", spec.vm_cached), top)
    return top


def _storage(cmd: Command, spec: GuestSpec, boot: Boot) -> None:
    os_disk = boot.directory / "os.qcow2"
    disks = boot.disks or boot.directory  # the data and temp disks' files
    cmd.overlays.append((os_disk, boot.root_raw, "raw", None))
    if spec.os_disk is not None and spec.os_disk.latency_ms:  # a remote OS disk: no flush, as below
        cmd.remote_node("os", os_disk, "qcow2", "unsafe", spec.os_disk.latency_ms)
    else:
        cmd.add("-blockdev", f"driver=qcow2,node-name=os,file.driver=file,file.filename={os_disk},cache.no-flush=on")
    os_top = _disk_graph(cmd, spec, spec.os_disk, boot.directory, base="os") if spec.os_disk else "os"
    remote_nvme = spec.disk_controller == "NVMe"
    scsi = (spec.azure and not remote_nvme) or spec.temp is not None or \
        (not remote_nvme and any(d.bus == "scsi" for d in spec.disks))
    if scsi:
        cmd.add("-device", "virtio-scsi-pci,id=scsi0,bus=pcie.0,addr=0x5",
                "-device", "virtio-scsi-pci,id=scsi1,bus=pcie.0,addr=0x6")
    if remote_nvme:
        cmd.add("-device", f"nvme,id=remote,serial=remote-disks,bus=pcie.0,addr={REMOTE_NVME_SLOT:#x}",
                "-device", f"nvme-ns,bus=remote,nsid=1,drive={os_top}")
    elif spec.azure:
        cmd.add("-device", f"scsi-hd,bus=scsi0.0,channel=0,scsi-id=0,lun=0,drive={os_top},{MSFT},serial=os-disk")
    else:
        cmd.add("-device", f"virtio-blk-pci,drive={os_top},bus=pcie.0,addr=0x4,serial=os-disk")
    if spec.temp is not None:
        top = _disk_graph(cmd, spec, spec.temp, disks)
        cmd.add("-device", f"scsi-hd,bus=scsi0.0,channel=0,scsi-id=0,lun=1,drive={top},{MSFT},"
                           f"serial={spec.temp.serial_number}")
    for disk, lun in spec.scsi_luns():
        top = _disk_graph(cmd, spec, disk, disks)
        if remote_nvme:  # the data disk at LUN n: namespace n+2 of the remote controller
            cmd.add("-device", f"nvme-ns,bus=remote,nsid={lun + 2},drive={top}")
        else:
            cmd.add("-device", f"scsi-hd,bus=scsi1.0,channel=0,scsi-id=0,lun={lun},drive={top},{MSFT},"
                               f"serial={disk.serial_number}")
    for i, disk in enumerate(spec.temp_nvme):
        top = _disk_graph(cmd, spec, disk, disks)
        cmd.add("-device", f"nvme,serial={disk.serial_number},drive={top},bus=pcie.0,addr={TEMP_NVME_SLOT + i:#x}")
    for i, disk in enumerate(d for d in spec.disks if d.bus == "nvme"):
        top = _disk_graph(cmd, spec, disk, disks)
        cmd.add("-device", f"nvme,serial={disk.serial_number},drive={top},bus=pcie.0,addr={0x10 + i:#x}")
    for i, disk in enumerate(d for d in spec.disks if d.bus == "virtio"):
        top = _disk_graph(cmd, spec, disk, disks)
        cmd.add("-device", f"virtio-blk-pci,drive={top},serial={disk.serial_number},bus=pcie.0,addr={0x8 + i:#x},"
                           "request-merging=off")


def _network(cmd: Command, boot: Boot) -> None:
    fwd = [f"hostfwd=tcp:{boot.bind}:{boot.ssh_port}-:22"]
    fwd += [f"hostfwd=tcp:{boot.bind}:{host}-:{guest}" for guest, host in sorted(boot.forwarded.items())]
    cmd.add("-netdev", f"user,id=n0,{','.join(fwd)}",
            "-device", "virtio-net-pci,netdev=n0,mac=52:54:00:00:00:01,romfile=,bus=pcie.0,addr=0x2")
    if boot.private_netdev:
        cmd.add("-netdev", f"{boot.private_netdev.split(',', 1)[0]},id=p,{boot.private_netdev.split(',', 1)[1]}",
                "-device", f"virtio-net-pci,netdev=p,mac=52:54:00:12:34:{boot.mac_suffix:02x},romfile=,"
                           "bus=pcie.0,addr=0x3")


def kernel_args(spec: GuestSpec) -> str:
    args = [KERNEL_ARGS, f"lab.hostname={spec.name}"]
    if spec.ip2:
        args.append(f"lab.ip2={spec.ip2}")
    if spec.nfs_server:
        args.append("lab.nfs=1")
    if spec.user != "root":
        args.append(f"lab.user={spec.user}")
    if spec.caps_after_boot:
        args.append("lab.preload=1")
    if spec.kernel_extra:
        args.append(spec.kernel_extra)
    return " ".join(args)


def command(spec: GuestSpec, boot: Boot) -> Command:
    """The whole QEMU invocation for ``spec`` (TCG, q35, direct kernel boot, serial log, no reboot)."""
    cmd = Command(defer_caps=boot.defer_caps, socket_prefix=f"/tmp/{boot.tag}")
    cmd.add("qemu-system-x86_64", "-name", boot.tag,
            "-accel", "tcg,thread=multi,tb-size=64", "-cpu", "max,-la57", "-machine", "q35",
            "-smp", str(spec.smp), "-m", str(spec.memory_mib), "-vga", "none",
            "-nographic", "-serial", f"file:{boot.directory / 'serial.log'}", "-monitor", "none", "-no-reboot",
            "-kernel", str(boot.kernel), "-initrd", str(boot.initrd), "-append", kernel_args(spec))
    if boot.host_key is not None and boot.authorized_keys is not None:
        cmd.add("-fw_cfg", f"name=opt/diskbench/ssh_host_ed25519_key,file={boot.host_key}",
                "-fw_cfg", f"name=opt/diskbench/authorized_keys,file={boot.authorized_keys}")
    if boot.qmp is not None:
        cmd.add("-qmp", f"unix:{boot.qmp},server=on,wait=off")
    _network(cmd, boot)
    _storage(cmd, spec, boot)
    return cmd
