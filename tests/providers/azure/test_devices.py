"""The Azure device map with the Linux preparer: temp disk, LUNs and local NVMe where Azure puts them.

Scripted (there is no Azure VM here); the lab tests run the same map against real guests (an NVMe v6
guest: tests/providers/azure/test_lab_runs.py, test_v6_data_disks_by_lun_and_the_raw_nvme_temp_disk).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from diskbench.errors import DiskbenchError, ExecutionError, SafetyError
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


# --- LUN n on an NVMe size whose image lacks azure-vm-utils: namespace n+2 of the remote controller ---------

def no_links(lsblk: str, nsids: dict[str, int], extra: dict[str, tuple[int, str]] | None = None) -> FakeExecutor:
    """A v6 VM whose image has no data/by-lun links (Debian 12, Ubuntu 20.04): every `test -e` fails; lsblk
    shows the models and sysfs each namespace's nsid (as `grep -H '' /sys/class/block/NAME/nsid` prints it)."""
    sysfs = "".join(f"/sys/class/block/{name}/nsid:{nsid}\n" for name, nsid in nsids.items())
    return FakeExecutor({"lsblk -J -d -p -o NAME,TYPE,MODEL": (0, lsblk), "grep -H  /sys/class/block/": (0, sysfs),
                         **(extra or {})})


REMOTE_ONLY_LUN1 = _lsblk(  # data disk at LUN 1 only: namespaces 1 and 3, which the kernel names nvme0n1, nvme0n2
    {"name": "/dev/nvme0n1", "type": "disk", "model": "MSFT NVMe Accelerator v1.0                "},
    {"name": "/dev/nvme0n2", "type": "disk", "model": "MSFT NVMe Accelerator v1.0"},
    {"name": "/dev/nvme1n1", "type": "disk", "model": "Microsoft NVMe Direct Disk v2"})


def test_lun_without_azure_vm_utils_is_the_namespace_lun_plus_two_by_its_nsid() -> None:
    """LUN 1 is the namespace whose nsid is 3, read from sysfs: here the kernel calls it nvme0n2 (LUN 0 is not
    attached), so the name would mislead; the temp disk's controller (nsid 1 too) is never a candidate."""
    lines: list[str] = []
    ex = no_links(REMOTE_ONLY_LUN1, {"nvme0n1": 1, "nvme0n2": 3})
    preparer = Preparer(ex, platform=LinuxPlatform(), allowed=[], name="t", run_id="r0001", devices=DEVICE_MAP,
                        line=lines.append)
    assert preparer.devices(parse_target({"lun": 1})) == ["/dev/nvme0n2"]
    assert [c for c in ex.calls if c.startswith("test -e ")] == [
        "test -e /dev/disk/azure/scsi1/lun1", "test -e /dev/disk/azure/data/by-lun/1"]  # the links first
    assert "grep -H  /sys/class/block/nvme0n1/nsid /sys/class/block/nvme0n2/nsid" in ex.calls  # remote ones only
    assert lines == ["fake: LUN 1 is /dev/nvme0n2, namespace 3 of the NVMe 'MSFT NVMe Accelerator v1.0' controller "
                     "(nothing at /dev/disk/azure/scsi1/lun1 or /dev/disk/azure/data/by-lun/1: the image lacks the "
                     "udev rules that make it)"]


def test_a_lun_with_no_namespace_says_which_namespaces_there_are() -> None:
    ex = no_links(REMOTE_ONLY_LUN1, {"nvme0n1": 1, "nvme0n2": 3})
    with pytest.raises(ExecutionError, match=r"no data disk at LUN 0: nothing at /dev/disk/azure/scsi1/lun0 or "
                                             r"/dev/disk/azure/data/by-lun/0, and the NVMe 'MSFT NVMe Accelerator "
                                             r"v1.0' controller has no namespace 2 \(LUN n is namespace n\+2; its "
                                             r"namespaces: nvme0n1 is 1, nvme0n2 is 3\)"):
        azure(ex).devices(parse_target({"lun": 0}))


def test_a_namespace_on_two_controllers_of_the_model_is_refused() -> None:
    two = _lsblk({"name": "/dev/nvme0n2", "type": "disk", "model": "MSFT NVMe Accelerator v1.0"},
                 {"name": "/dev/nvme1n2", "type": "disk", "model": "MSFT NVMe Accelerator v1.0"})
    with pytest.raises(ExecutionError, match="LUN 0 is ambiguous: namespace 2 is on several NVMe .* controllers "
                                             r"\(/dev/nvme0n2, /dev/nvme1n2\)"):
        azure(no_links(two, {"nvme0n2": 2, "nvme1n2": 2})).devices(parse_target({"lun": 0}))


def test_a_scsi_vm_without_the_link_keeps_its_hint() -> None:
    """No remote NVMe controller at all (a SCSI size, the disk not attached): the error and hint as before."""
    scsi = _lsblk({"name": "/dev/sda", "type": "disk", "model": "Virtual Disk"})
    ex = no_links(scsi, {})
    with pytest.raises(ExecutionError, match=r"^fake: no data disk at LUN 0 \(is the disk attached") as err:
        azure(ex).devices(parse_target({"lun": 0}))
    assert err.value.hint == DEVICE_MAP.lun_hint and not [c for c in ex.calls if c.startswith("grep")]


def test_the_namespace_found_without_links_is_under_the_safety_rule() -> None:
    """What the fallback finds is written only if it looks blank: a namespace with a file system on it is
    refused with the usual reason and the way to allow it, before anything is written."""
    ex = no_links(REMOTE_ONLY_LUN1, {"nvme0n1": 1, "nvme0n2": 3}, {
        "lsblk -J -p -o NAME,TYPE,FSTYPE,MOUNTPOINT,PTTYPE /dev/nvme0n2": (
            0, _lsblk({"name": "/dev/nvme0n2", "type": "disk", "fstype": "ext4"})),
        "blkid -p -o export /dev/nvme0n2": (0, "UUID=5f1e\nTYPE=ext4\n"), "test -r /dev/nvme0n2": (0, ""),
        "findmnt -n -o SOURCE /": (0, "/dev/nvme0n1p1\n"),
        "lsblk -J -p -s -o NAME /dev/nvme0n1p1": (
            0, _lsblk({"name": "/dev/nvme0n1p1", "children": [{"name": "/dev/nvme0n1"}]}))})
    with pytest.raises(SafetyError, match="refusing to write to /dev/nvme0n2: it carries a ext4 signature") as err:
        azure(ex).prepare(parse_target({"lun": 1, "fs": "xfs"}), writes=True)
    assert "destroy_data_on: [/dev/nvme0n2]" in (err.value.hint or "")
    assert not [c for c in ex.calls if c.split()[0] in ("mkfs.xfs", "mdadm", "mount")]


def test_hosts_of_unknown_origin_get_the_namespace_rule_too() -> None:
    """A hand-made v6 VM named under hosts: has every provider's map, so lun: finds its namespace as well."""
    from diskbench.providers.static import known_layouts

    merged = known_layouts()
    assert merged.lun_namespace_models == (REMOTE_NVME_MODEL,) and merged.lun_namespace_offset == LUN_NAMESPACE_OFFSET


# --- temp: {raw: true}: the raw temp disk itself, or the RAID0 over several, as the engine's target ----------

def test_a_raw_temp_target_hands_the_raw_nvme_temp_disk_to_the_engine() -> None:
    lsblk = _lsblk({"name": "/dev/nvme0n1", "type": "disk", "model": "MSFT NVMe Accelerator v1.0"},
                   {"name": "/dev/nvme1n1", "type": "disk", "model": "Microsoft NVMe Direct Disk v2"})
    ex = v6({"lsblk -J -d -p -o NAME,TYPE,MODEL": (0, lsblk)}, raw=("/dev/nvme1n1",))
    prepared = azure(ex).prepare(parse_target({"temp": True, "raw": True}), writes=True)
    assert (prepared.filename, prepared.directory, prepared.devices) == ("/dev/nvme1n1", None, ["/dev/nvme1n1"])
    assert not [c for c in ex.calls if c.startswith(("mkfs", "mdadm", "mount ", "mkdir"))]


def test_several_raw_temp_disks_are_striped_and_the_array_handed_over_unformatted() -> None:
    """Azure publishes one temp-disk limit for the VM, over all its temp disks: raw: true measures them all,
    as the RAID0 the formatted case builds, without a file system; the array is journaled and stopped after."""
    made: list[tuple[str, str, dict[str, Any]]] = []
    journal = Journal(record=lambda kind, what, detail: made.append((kind, what, detail)) or len(made))
    ex = v6({"cat /proc/mdstat": (0, "")})
    prepared = azure(ex, journal).prepare(parse_target({"temp": True, "raw": True}), writes=True)
    assert prepared.filename == "/dev/md127" and prepared.directory is None
    assert next(c for c in ex.calls if c.startswith("mdadm --create")).endswith(
        "/dev/nvme1n1 /dev/nvme2n1 /dev/nvme10n1")
    assert [(k, w) for k, w, _ in made] == [("array", "/dev/md/diskbench-0001-t")]
    assert not [c for c in ex.calls if c.startswith(("mkfs", "mount "))]
    assert len(prepared.cleanup) == 1  # stopping the array


def test_a_raw_temp_target_on_a_mounted_temp_disk_is_refused() -> None:
    """A SCSI temp disk (or a v6 one the image formatted) is mounted, so not raw: refused, naming the key."""
    ex = FakeExecutor({"findmnt -n -o TARGET -S /dev/disk/azure/resource-part1": (0, "/mnt\n")})
    with pytest.raises(DiskbenchError, match=r"^fake: temp: raw: true takes a temp disk that comes raw; this one is "
                                             r"formatted and mounted at /mnt \(leave raw: out"):
        azure(ex).prepare(parse_target({"temp": True, "raw": True}), writes=True)
    assert not [c for c in ex.calls if c.startswith(("mkdir", "mkfs", "mdadm", "lsblk"))]
