"""The fake Resource Manager hands out QEMU guests: each VM diskbench creates boots as a lab guest.

The guest has the layout of the VM's size (temp disk or not, local NVMe, the data disks it asked
for at their LUNs, each disk's host caching) and QEMU throttle groups stand for its limits: the
disk tier's cap (with credit burst), one group over every uncached disk for the VM's uncached
limit, one over the cached disks and the temp disk for the VM's cached limit. Limits are scaled by
``SCALE`` to what a TCG guest can push (about 6,000 4k IOPS unthrottled): D8ds_v4's 12,800
uncached IOPS become 1,280, a P30's 5,000 become 500. The scale is written into the VM's tags so
it is recorded with the run.

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

from diskbench.providers.azure.limits import disk_limits, vm_limits

from ...guestlab.guest import Guest, GuestLab
from ...guestlab.spec import DiskSpec, GuestSpec, Throttle, nvme_disks
from ...lab import Lab

SCALE = 0.1
DISK_MIB = 384  # every lab disk: mkfs.xfs needs 300 MiB, fio a few files of 16 MiB
MAX_NVME = 4


def _scaled(iops: float | None, mbps: float | None = None, burst_iops: float | None = None,
            burst_seconds: float | None = None) -> Throttle | None:
    if not iops and not mbps:
        return None
    scaled_iops = max(20, round(iops * SCALE)) if iops else None
    burst = round(burst_iops * SCALE) if burst_iops and scaled_iops and burst_iops * SCALE > scaled_iops else None
    return Throttle(iops=scaled_iops, bps=round(mbps * 1e6 * SCALE) if mbps else None, burst_iops=burst,
                    burst_seconds=max(1, round(burst_seconds or 1)) if burst else 1)


def _disk_cap(storage_type: str, size_gb: int, iops: int | None = None, mbps: int | None = None,
              burst_seconds: float = 4) -> Throttle | None:
    limits = disk_limits(storage_type, size_gb, iops, mbps)
    return _scaled(limits.iops, limits.mbps, limits.burst_iops, burst_seconds)


def guest_spec(name: str, body: dict[str, Any]) -> GuestSpec:
    """The lab guest that stands for the VM ``body`` (an ARM virtualMachines PUT)."""
    props = body["properties"]
    size = props["hardwareProfile"]["vmSize"]
    vm = vm_limits(size)
    assert vm is not None, size
    groups: dict[str, Throttle] = {}
    uncached = _scaled(vm.uncached_iops, vm.uncached_mbps)
    if uncached:
        groups["vm"] = uncached
    cached = _scaled(vm.cached_iops or vm.temp_read_iops, vm.cached_mbps)
    storage = props["storageProfile"]
    os_body = storage["osDisk"]
    if os_body.get("diffDiskSettings"):  # ephemeral: on the cache or temp disk, at the cached limit
        os_disk = DiskSpec("osdisk", shared=("cached",) if cached else ())
    else:
        caching = os_body.get("caching", "ReadWrite")
        os_disk = DiskSpec("osdisk", cap=_disk_cap(os_body["managedDisk"]["storageAccountType"],
                                                   os_body.get("diskSizeGB", 30)),
                           caching=caching, shared=("vm",) if caching == "None" and uncached else ())
    if cached:
        groups["cached"] = cached
    data = []
    for disk in storage.get("dataDisks", []):
        caching = disk.get("caching", "None")
        data.append(DiskSpec(f"data{disk['lun']}", size_mib=DISK_MIB, lun=disk["lun"], caching=caching,
                             cap=_disk_cap(disk["managedDisk"]["storageAccountType"], disk["diskSizeGB"],
                                           disk.get("diskIOPSReadWrite"), disk.get("diskMBpsReadWrite")),
                             shared=("vm",) if caching == "None" and uncached else ()))
    temp = None
    if vm.temp_gib > 0 and not vm.temp_nvme:
        temp = DiskSpec("temp", size_mib=DISK_MIB, serial="temp-disk", shared=("cached",) if cached else ())
    nvme = nvme_disks(min(vm.nvme_disks, MAX_NVME), size_mib=DISK_MIB) if vm.nvme_disks else ()
    return GuestSpec(name=name, azure=True, disks=(*data, *nvme), temp=temp, os_disk=os_disk, groups=groups,
                     vm_cached=groups.get("cached"), memory_mib=640, user="azureuser")


@dataclass
class LabCloud:
    """Boots a guest for each VM the fake ARM creates, in one worker thread that lives as long as
    the cloud: QEMU is started with a parent-death signal, which is tied to the starting thread."""

    guests: GuestLab
    lab: Lab
    booted: dict[str, Guest] = field(default_factory=dict)
    specs: dict[str, GuestSpec] = field(default_factory=dict)
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
            spec = guest_spec(name, vm)
            init = yaml.safe_load(base64.b64decode(vm["properties"]["osProfile"]["customData"]))
            login = vm["properties"]["osProfile"]["linuxConfiguration"]["ssh"]["publicKeys"][0]["keyData"]
            ns = next(h for h in self.lab.hosts if h.address == address)
            with self._lock:
                self.specs[vm["name"]] = spec
            guest = self.guests.start(spec, netns=(ns.ns, address), host_private_key=init["ssh_keys"]
                                      ["ed25519_private"], login_key=login)
            with self._lock:
                self.booted[vm["name"]] = guest
        except Exception as exc:  # noqa: BLE001 - reported by the test that waits for the VM
            self.errors.append(f"{vm.get('name')}: {exc}")
