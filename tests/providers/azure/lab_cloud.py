"""The fake Resource Manager hands out QEMU guests: each VM diskbench creates boots as a lab guest.

The guest has the layout of the VM's size (temp disk or not, local NVMe, the data disks it asked
for at their LUNs, each disk's host caching; on an NVMe controller, as v6 sizes have, the OS and data
disks are namespaces of one NVMe controller and the temp disks raw NVMe devices, guestlab/spec.py
``azure_v6``) and QEMU throttle groups stand for its limits: the
disk tier's cap (with credit burst), one group over every uncached disk for the VM's uncached
limit, one over the cached disks and the temp disk for the VM's cached limit. The limits are the
lab's own table (``lab_limits.py``, read off Azure's pages), never diskbench's, multiplied by the
cloud's ``scale``: each test chooses it from a calibration of this machine so that the caps its
shapes need sit well below what a TCG guest reaches (``tests/guestlab/calibrate.py``), and runs
diskbench with ``DISKBENCH_LIMITS_SCALE`` at the same value so attribution sets each result
against the caps the guest enforces. The caps are set once sshd runs (``caps_after_boot``): a
guest whose P4 OS disk is emulated at a few IOPS still boots in seconds, with its burst bucket full.

With ``remote_latency`` a managed disk of a type whose latency Azure publishes (``REMOTE_LATENCY_MS``) is
remote as on Azure: every I/O that reaches it (an uncached disk's, a cached disk's read miss) pays that
latency divided by the scale (guestlab/qemu.py: qemu-nbd behind a delay link), so a QD1 result shows what
the host cache saves; the temp disk, local NVMe, the ephemeral OS disk and the cache itself answer at once.

The guest answers SSH at its public address on port 22 (QEMU in a lab network namespace), with
the host key diskbench handed over in the VM's cloud-init and the run's login key authorized for
azureuser, exactly as on Azure.
"""

from __future__ import annotations

import base64
import queue
import threading
from dataclasses import dataclass, field
from typing import Any

import yaml

from ...guestlab.guest import Guest, GuestLab
from ...guestlab.spec import DiskSpec, GuestSpec, Throttle, nvme_disks
from ...lab import Lab
from .lab_limits import disk_tier, vm_size

DISK_MIB = 384  # every lab disk: mkfs.xfs needs 300 MiB, fio a few files of 16 MiB
MAX_NVME = 4
BURST_SECONDS = 4  # Azure's 30-minute credit bucket, compressed: the lab's bucket holds 4 s at the burst rate
# A managed disk's per-I/O service latency, the round trip to its storage cluster, by storage type (ms).
# Premium SSD: "designed to provide low single-digit millisecond latencies" (Azure, disks-types.md and
# linux/tutorial-manage-disks.md); the seeds measured it: an uncached P4 at QD1 p1 2,245 / p50 2,474 us
# (seed 000, 8k random writes), a P30 ~1.6 ms at QD1 (seed 003). The lab takes 2 ms. Other types: none
# published as a figure to emulate (Standard HDD: "write latencies under 10 ms" is a bound), so none.
REMOTE_LATENCY_MS = {"Premium_LRS": 2.0}


def scaled(scale: float, iops: float | None, mbps: float | None = None, burst_iops: float | None = None,
           burst_mbps: float | None = None) -> Throttle | None:
    """A published cap at ``scale``: IOPS rounded to whole I/Os (QEMU's unit, at least 1), MB/s to bytes."""
    if not iops and not mbps:
        return None
    lab_iops = max(1, round(iops * scale)) if iops else None
    burst = max(1, round(burst_iops * scale)) if burst_iops and lab_iops and burst_iops * scale > lab_iops else None
    bps = max(1, round(mbps * 1e6 * scale)) if mbps else None
    burst_bps = round(burst_mbps * 1e6 * scale) if burst and burst_mbps and bps else None
    return Throttle(iops=lab_iops, bps=bps, burst_iops=burst, burst_bps=burst_bps if burst_bps and bps and
                    burst_bps > bps else None, burst_seconds=BURST_SECONDS if burst else 1)


def disk_cap(scale: float, storage_type: str, size_gb: int) -> Throttle | None:
    tier = disk_tier(storage_type, size_gb)
    return scaled(scale, tier.iops, tier.mbps, tier.burst_iops, tier.burst_mbps)


def remote_latency_ms(storage_type: str, scale: float) -> float:
    """The lab's per-I/O latency of a managed disk of ``storage_type`` at ``scale``: Azure's figure over the
    scale (a lab I/O stands for 1/scale of Azure's, so its round trip takes 1/scale as long), 0 if none."""
    return REMOTE_LATENCY_MS.get(storage_type, 0.0) / scale


def guest_spec(name: str, body: dict[str, Any], scale: float, *, remote_latency: bool = False) -> GuestSpec:
    """The lab guest that stands for the VM ``body`` (an ARM virtualMachines PUT), its caps at ``scale``;
    with ``remote_latency`` its managed disks get their storage's latency (``REMOTE_LATENCY_MS``)."""
    def latency(storage_type: str) -> float:
        return remote_latency_ms(storage_type, scale) if remote_latency else 0.0

    props = body["properties"]
    vm = vm_size(props["hardwareProfile"]["vmSize"])
    groups: dict[str, Throttle] = {}
    uncached = scaled(scale, vm.uncached_iops, vm.uncached_mbps)
    if uncached:
        groups["vm"] = uncached
    cached = scaled(scale, vm.cached_iops, vm.cached_mbps)
    storage = props["storageProfile"]
    os_body = storage["osDisk"]
    if os_body.get("diffDiskSettings"):  # ephemeral: on the cache or temp disk, at the cached limit
        os_disk = DiskSpec("osdisk", shared=("cached",) if cached else ())
    else:
        caching = os_body.get("caching", "ReadWrite")
        os_type = os_body["managedDisk"]["storageAccountType"]
        os_disk = DiskSpec("osdisk", cap=disk_cap(scale, os_type, os_body.get("diskSizeGB", 30)),
                           caching=caching, shared=("vm",) if caching == "None" and uncached else (),
                           latency_ms=latency(os_type))
    if cached:
        groups["cached"] = cached
    data = []
    for disk in storage.get("dataDisks", []):
        caching = disk.get("caching", "None")
        data.append(DiskSpec(f"data{disk['lun']}", size_mib=DISK_MIB, lun=disk["lun"], caching=caching,
                             cap=disk_cap(scale, disk["managedDisk"]["storageAccountType"], disk["diskSizeGB"]),
                             shared=("vm",) if caching == "None" and uncached else (),
                             latency_ms=latency(disk["managedDisk"]["storageAccountType"])))
    temp = None
    if vm.temp_gib > 0 and not vm.temp_nvme:
        temp = DiskSpec("temp", size_mib=DISK_MIB, serial="temp-disk", shared=("cached",) if cached else ())
    temp_nvme = tuple(DiskSpec(f"tempnvme{i}", size_mib=DISK_MIB, bus="nvme", serial=f"azlocal{i + 1:04d}",
                               shared=("cached",) if cached else ()) for i in range(min(vm.temp_nvme, MAX_NVME)))
    nvme = nvme_disks(min(vm.nvme, MAX_NVME), size_mib=DISK_MIB) if vm.nvme else ()
    controller = storage.get("diskControllerType") or vm.controller  # Azure's default: the size's own
    return GuestSpec(name=name, azure=True, disks=(*data, *nvme), temp=temp, temp_nvme=temp_nvme,
                     disk_controller=controller, os_disk=os_disk, groups=groups, vm_cached=groups.get("cached"),
                     memory_mib=640, user="azureuser", caps_after_boot=True)


@dataclass
class LabCloud:
    """Boots a guest for each VM the fake ARM creates, in one worker thread that lives as long as
    the cloud: QEMU is started with a parent-death signal, which is tied to the starting thread."""

    guests: GuestLab
    lab: Lab
    scale: float
    remote_latency: bool = False  # managed disks pay their storage's latency (guest_spec), set before VMs boot
    booted: dict[str, Guest] = field(default_factory=dict)
    specs: dict[str, GuestSpec] = field(default_factory=dict)
    bodies: dict[str, dict[str, Any]] = field(default_factory=dict)  # each VM's request body, as ARM got it
    errors: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _queue: queue.Queue[tuple[dict[str, Any], str] | None] = field(default_factory=queue.Queue)
    _worker: threading.Thread | None = None

    def start(self) -> LabCloud:
        self._worker = threading.Thread(target=self._work, daemon=True)
        self._worker.start()
        return self

    def stop(self) -> None:
        self._queue.put(None)
        if self._worker is not None:
            self._worker.join(timeout=300)

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            self._boot(*item)

    def address(self) -> str:
        """A public address for the next VM: a lab namespace's, where its guest will answer on port 22."""
        with self._lock:
            return self.lab.add_namespace().address

    def boot(self, vm: dict[str, Any], address: str) -> None:
        """The fake ARM's on_vm_created hook: queue the boot, so the VM's PUT returns as on Azure."""
        self._queue.put((vm, address))

    def _boot(self, vm: dict[str, Any], address: str) -> None:
        try:
            name = vm["name"].replace("-", "")[:12].lower()
            spec = guest_spec(name, vm, self.scale, remote_latency=self.remote_latency)
            init = yaml.safe_load(base64.b64decode(vm["properties"]["osProfile"]["customData"]))
            login = vm["properties"]["osProfile"]["linuxConfiguration"]["ssh"]["publicKeys"][0]["keyData"]
            ns = next(h for h in self.lab.hosts if h.address == address)
            with self._lock:
                self.specs[vm["name"]] = spec
                self.bodies[vm["name"]] = vm
            guest = self.guests.launch(spec, netns=(ns.ns, address), host_private_key=init["ssh_keys"]
                                       ["ed25519_private"], login_key=login)
        except Exception as exc:  # noqa: BLE001 - reported by the test that waits for the VM
            self.errors.append(f"{vm.get('name')}: {exc}")
            return
        # The next VM's QEMU starts while this one boots: waiting for sshd (and setting the caps the
        # moment it runs) happens beside the worker, which only has to start each QEMU.
        threading.Thread(target=self._ready, args=(vm["name"], guest), daemon=True).start()

    def _ready(self, name: str, guest: Guest) -> None:
        try:
            guest.wait_ready()
            if guest.spec.caps_after_boot:
                guest.apply_caps()
            with self._lock:
                self.booted[name] = guest
        except Exception as exc:  # noqa: BLE001 - reported by the test that waits for the VM
            self.errors.append(f"{name}: {exc}")
