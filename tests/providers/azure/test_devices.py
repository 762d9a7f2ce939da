"""The Azure device map with the Linux preparer: temp disk, LUNs and local NVMe where Azure puts them.

Scripted (there is no Azure VM here); the lab tests run the same map against real guests.
"""

from __future__ import annotations

import json

from diskbench.platforms.linux.prepare import LinuxPreparer as Preparer
from diskbench.profile import parse_target
from diskbench.providers.azure.devices import DEVICE_MAP

from ...fake import FakeExecutor


def azure(ex: FakeExecutor) -> Preparer:
    return Preparer(ex, allowed=[], name="t", run_id="r", devices=DEVICE_MAP)


def _lsblk(*devices: dict[str, object]) -> str:
    return json.dumps({"blockdevices": list(devices)})


def test_temp_disk_is_found_by_its_azure_link() -> None:
    ex = FakeExecutor({"findmnt -n -o TARGET -S /dev/disk/azure/resource-part1": (0, "/mnt\n"),
                       "mkdir -p /mnt/diskbench": (0, "")})
    prepared = azure(ex).prepare(parse_target("temp"), writes=True)
    assert prepared.directory == "/mnt/diskbench"


def test_local_nvme_excludes_the_os_disk_and_azure_accelerator() -> None:
    ex = FakeExecutor({
        "lsblk -J -d -p -o NAME,TYPE,MODEL": (0, _lsblk(
            {"name": "/dev/nvme0n1", "type": "disk", "model": "MSFT NVMe Accelerator v1.0"},
            {"name": "/dev/nvme1n1", "type": "disk", "model": "Microsoft NVMe Direct Disk"},
            {"name": "/dev/nvme2n1", "type": "disk", "model": "Microsoft NVMe Direct Disk"},
            {"name": "/dev/sda", "type": "disk", "model": "Virtual Disk"})),
        "findmnt -n -o SOURCE /": (0, "/dev/sda1\n"),
        "lsblk -J -p -s -o NAME /dev/sda1": (
            0, _lsblk({"name": "/dev/sda1", "children": [{"name": "/dev/sda"}]})),
    })
    assert azure(ex).devices(parse_target({"nvme": "all"})) == [
        "/dev/nvme1n1", "/dev/nvme2n1"]


def test_data_disk_by_lun() -> None:
    ex = FakeExecutor({"test -e /dev/disk/azure/scsi1/lun2": (0, ""),
                       "readlink -f /dev/disk/azure/scsi1/lun2": (0, "/dev/sdd\n")})
    assert azure(ex).devices(parse_target({"lun": 2})) == ["/dev/sdd"]
