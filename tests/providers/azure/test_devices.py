"""The Azure device map with the Linux preparer: temp disk, LUNs and local NVMe where Azure puts them.

Scripted (there is no Azure VM here); the lab tests run the same map against real guests (an NVMe v6
guest: tests/providers/azure/test_lab_runs.py, test_v6_data_disks_by_lun_and_the_raw_nvme_temp_disk).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from diskbench.errors import SafetyError
from diskbench.platforms.base import Journal
from diskbench.platforms.linux import LinuxPlatform
from diskbench.platforms.linux.prepare import LinuxPreparer as Preparer
from diskbench.profile import parse_target
from diskbench.providers.azure.devices import DEVICE_MAP, LUN_NAMESPACE_OFFSET, REMOTE_NVME_MODEL, TEMP_NVME_MODELS

from ...fake import FakeExecutor


def azure(ex: FakeExecutor, journal: Journal | None = None) -> Preparer:
    return Preparer(ex, platform=LinuxPlatform(), allowed=[], name="t", run_id="r0001", devices=DEVICE_MAP,
                    journal=journal)


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


def test_data_disk_by_lun_on_an_nvme_size() -> None:
    """v6: no scsi1 link; azure-vm-utils' data/by-lun/N (namespace N+2 of the remote controller) is the disk."""
    ex = FakeExecutor({"test -e /dev/disk/azure/data/by-lun/1": (0, ""),
                       "readlink -f /dev/disk/azure/data/by-lun/1": (0, "/dev/nvme0n3\n")})
    assert azure(ex).devices(parse_target({"lun": 1})) == ["/dev/nvme0n3"]
    tried = [c for c in ex.calls if c.startswith("test -e ")]
    assert tried == ["test -e /dev/disk/azure/scsi1/lun1", "test -e /dev/disk/azure/data/by-lun/1"]
    assert LUN_NAMESPACE_OFFSET == 2 and f"namespace n+2 of the '{REMOTE_NVME_MODEL}'" in DEVICE_MAP.lun_hint


V6_DISKS = _lsblk(
    {"name": "/dev/nvme0n1", "type": "disk", "model": "MSFT NVMe Accelerator v1.0                "},
    {"name": "/dev/nvme0n2", "type": "disk", "model": "MSFT NVMe Accelerator v1.0"},
    {"name": "/dev/nvme2n1", "type": "disk", "model": "Microsoft NVMe Direct Disk v2            "},
    {"name": "/dev/nvme10n1", "type": "disk", "model": "Microsoft NVMe Direct Disk v2"},
    {"name": "/dev/nvme1n1", "type": "disk", "model": "Microsoft NVMe Direct Disk v2"})


def v6(extra: dict[str, tuple[int, str]] | None = None, *, raw: tuple[str, ...] = (
        "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme10n1")) -> FakeExecutor:
    """A v6 VM as lsblk shows it: the remote controller's OS disk (root) and a data disk, three raw temp disks."""
    answers = {"lsblk -J -d -p -o NAME,TYPE,MODEL": (0, V6_DISKS),
               "findmnt -n -o SOURCE /": (0, "/dev/nvme0n1p1\n"),
               "lsblk -J -p -s -o NAME /dev/nvme0n1p1": (
                   0, _lsblk({"name": "/dev/nvme0n1p1", "children": [{"name": "/dev/nvme0n1"}]})),
               **{f"lsblk -J -p -o NAME,TYPE,FSTYPE,MOUNTPOINT,PTTYPE {d}": (0, _lsblk({"name": d, "type": "disk"}))
                  for d in raw},
               "mkdir -p ": (0, ""), "mount ": (0, ""), "chmod ": (0, ""), "mkfs.ext4 ": (0, ""),
               "mdadm --create ": (0, ""), "test -e /proc/mdstat": (0, ""),
               "mdadm --detail --export ": (0, "MD_UUID=1b2c:3d4e\n"),
               "readlink -f /dev/md/": (0, "/dev/md127\n"),
               "blkid -p -s UUID -o value ": (0, "5f1e\n")}
    answers.update(extra or {})
    return FakeExecutor(answers)


def test_temp_on_a_v6_size_formats_its_raw_nvme_temp_disks() -> None:
    """No resource disk, nothing at /mnt: the raw "Microsoft NVMe Direct Disk v2" disks, in name order, are
    striped (mdadm's 512k, as Azure's own azure-ephemeral-disk-setup), made ext4 and mounted; each step is
    journaled; the remote controller's disks are never touched."""
    made: list[tuple[str, str, dict[str, Any]]] = []
    journal = Journal(record=lambda kind, what, detail: made.append((kind, what, detail)) or len(made))
    ex = v6()
    prepared = azure(ex, journal).prepare(parse_target("temp"), writes=True)
    assert prepared.devices == ["/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme10n1"]
    assert prepared.directory == "/mnt/diskbench-0001-t"
    create = next(c for c in ex.calls if c.startswith("mdadm --create"))
    assert "--level=0" in create and "--chunk=512" in create and create.endswith(
        "/dev/nvme1n1 /dev/nvme2n1 /dev/nvme10n1")
    assert "mkfs.ext4 -F -q -E nodiscard /dev/md127" in ex.calls
    assert "mount /dev/md127 /mnt/diskbench-0001-t" in ex.calls
    assert [(k, w) for k, w, _ in made] == [("array", "/dev/md/diskbench-0001-t"), ("filesystem", "/dev/md127"),
                                          ("mount", "/mnt/diskbench-0001-t")]
    assert not [c for c in ex.calls if "nvme0n" in c and c.split()[0] in ("mkfs.ext4", "mdadm", "mount")]
    assert TEMP_NVME_MODELS == ("Microsoft NVMe Direct Disk v2",)


def test_one_raw_temp_disk_is_formatted_without_an_array() -> None:
    lsblk = _lsblk({"name": "/dev/nvme0n1", "type": "disk", "model": "MSFT NVMe Accelerator v1.0"},
                   {"name": "/dev/nvme1n1", "type": "disk", "model": "Microsoft NVMe Direct Disk v2"})
    ex = v6({"lsblk -J -d -p -o NAME,TYPE,MODEL": (0, lsblk)}, raw=("/dev/nvme1n1",))
    prepared = azure(ex).prepare(parse_target("temp"), writes=True)
    assert prepared.devices == ["/dev/nvme1n1"] and "mkfs.ext4 -F -q -E nodiscard /dev/nvme1n1" in ex.calls
    assert not [c for c in ex.calls if c.startswith("mdadm")]


def test_temp_mounted_by_the_image_is_used_as_it_is() -> None:
    """A v6 image that formats its temp disks itself (azure-ephemeral-disk-setup, cloud-init) mounts them at
    /mnt: diskbench measures there and formats nothing."""
    ex = v6({"mountpoint -q /mnt": (0, "")})
    assert azure(ex).prepare(parse_target("temp"), writes=True).directory == "/mnt/diskbench"
    assert not [c for c in ex.calls if c.startswith(("mkfs", "mdadm", "lsblk"))]


def test_a_raw_temp_disk_someone_else_set_up_is_refused() -> None:
    held = _lsblk({"name": "/dev/nvme1n1", "type": "disk", "children": [{"name": "/dev/md127", "type": "raid0"}]})
    ex = v6({"lsblk -J -p -o NAME,TYPE,FSTYPE,MOUNTPOINT,PTTYPE /dev/nvme1n1": (0, held)})
    with pytest.raises(SafetyError, match="refusing to format the temp disk /dev/nvme1n1: it has partitions or "
                                          "holders .*/dev/md127"):
        azure(ex).prepare(parse_target("temp"), writes=True)
    assert not [c for c in ex.calls if c.startswith(("mkfs", "mdadm --create"))]


def test_no_temp_disk_anywhere_says_where_it_looked() -> None:
    lsblk = _lsblk({"name": "/dev/nvme0n1", "type": "disk", "model": "MSFT NVMe Accelerator v1.0"})
    ex = v6({"lsblk -J -d -p -o NAME,TYPE,MODEL": (0, lsblk)})
    with pytest.raises(Exception, match="no temp .resource. disk found at /dev/disk/azure/resource-part1 or /mnt or "
                                        "an NVMe disk of model 'Microsoft NVMe Direct Disk v2'"):
        azure(ex).prepare(parse_target("temp"), writes=True)
