"""The disk-safety rule on real loop devices, fast: what ``holds_data`` finds and ``require_writable`` refuses.

The lab and guest tests drive the rule end to end (a run refused, the first MiB unchanged); these
call ``LinuxPreparer`` directly with a ``LocalExecutor`` on loop devices this test makes, so every
branch runs in a fraction of a second (and bench/mutation can mutate the rule). The oracle is
what the kernel and util-linux make of the device: mkfs.ext4 writes an ext4 signature, sfdisk a
GPT, partx adds the partition the kernel then lists, mount -o ro mounts it, and blkid calls a
device with two superblocks ambivalent. Where no loop device can show a case (the root file
system on it, a probe that fails on a readable device), a ``LocalExecutor`` answers that one
command differently and runs every other one for real. Each test detaches the loop devices it
made by their names, and unmounts what it mounted, also when it fails. Needs root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from diskbench.errors import ExecutionError, SafetyError
from diskbench.executors.base import Completed
from diskbench.executors.local import LocalExecutor
from diskbench.platforms.base import Journal
from diskbench.platforms.linux import LinuxPlatform
from diskbench.platforms.linux.prepare import LinuxPreparer

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("losetup", "mkfs.ext4", "sfdisk", "partx", "blkid")),
    reason="needs root and util-linux (loop devices)")

AMBIVALENT = "ambivalent result (probably more filesystems on the device, use wipefs(8) to see more details)"


def sh(*argv: str, stdin: str | None = None) -> str:
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, check=True).stdout.strip()


class Loops:
    """Loop devices over sparse files in the test's folder, detached by their own names at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.devices: list[str] = []
        self.mounts: list[Path] = []

    def add(self, mib: int = 16, *, partitions: bool = False) -> str:
        backing = self.folder / f"disk{len(self.devices)}.img"
        with backing.open("wb") as f:
            f.truncate(mib * 1024 * 1024)
        dev = sh("losetup", "--find", "--show", *(["--partscan"] if partitions else []), str(backing))
        self.devices.append(dev)
        return dev

    def mount_ro(self, dev: str) -> Path:
        # read-only: nothing changes the device behind the test's back
        point = self.folder / f"mnt{len(self.mounts)}"
        point.mkdir()
        sh("mount", "-o", "ro", dev, str(point))
        self.mounts.append(point)
        return point

    def close(self) -> None:
        for point in reversed(self.mounts):
            subprocess.run(["umount", str(point)], check=False, capture_output=True)
        for dev in reversed(self.devices):
            subprocess.run(["partx", "-d", dev], check=False, capture_output=True)
            # udev may still be probing a partition the test made: settle, and try again a few times
            for _ in range(5):
                subprocess.run(["udevadm", "settle", "--timeout=5"], check=False, capture_output=True)
                if subprocess.run(["losetup", "-d", dev], check=False, capture_output=True).returncode == 0:
                    break


def preparer(ex: LocalExecutor | None = None, *, allowed: list[str] | None = None,
             earlier: list[dict[str, Any]] | None = None) -> LinuxPreparer:
    return LinuxPreparer(ex or LocalExecutor(), platform=LinuxPlatform(), allowed=allowed or [], name="m1",
                         run_id="20261125-120000-abcd",
                         journal=Journal(earlier=earlier or []))


def ext4(dev: str) -> str:
    """mkfs.ext4 on ``dev``; its UUID as blkid prints it."""
    sh("mkfs.ext4", "-q", "-F", dev)
    return sh("blkid", "-p", "-s", "UUID", "-o", "value", dev)


def refusal(dev: str, reasons: str) -> str:
    return f"local: refusing to write to {dev}: it {reasons}"


def test_a_blank_device_holds_nothing_and_may_be_written(loops: Loops) -> None:
    blank = loops.add()
    p = preparer()
    assert p.holds_data(blank) == []
    p.require_writable([blank])  # no error


def test_a_file_system_is_refused_with_the_way_to_allow_it(loops: Loops) -> None:
    dev = loops.add()
    ext4(dev)
    assert preparer().holds_data(dev) == ["carries a ext4 signature"]
    with pytest.raises(SafetyError) as caught:
        preparer().require_writable([dev])
    assert caught.value.message == refusal(dev, "carries a ext4 signature")
    assert caught.value.hint == (f"if its data may be destroyed, name it under destroy_data_on: [{dev}] "
                                 f"or pass --destroy-data-on {dev}")


def test_a_partition_table_its_partition_and_a_mount_on_it(loops: Loops) -> None:
    dev = loops.add(partitions=True)
    sh("sfdisk", "-q", "--label", "gpt", dev, stdin=",,L\n")
    assert preparer().holds_data(dev) == ["carries a gpt signature"]  # no partition known to the kernel yet
    sh("partx", "-a", dev)
    part = f"{dev}p1"
    assert preparer().holds_data(dev) == [f"has partitions or holders ({part})", "carries a gpt signature"]
    ext4(part)
    point = loops.mount_ro(part)
    assert preparer().holds_data(dev) == [f"mounted at {point}", f"has partitions or holders ({part})",
                                         "carries a gpt signature"]
    assert preparer().holds_data(part) == [f"mounted at {point}", "carries a ext4 signature"]
    with pytest.raises(SafetyError) as caught:
        preparer().require_writable([part])
    assert caught.value.message == refusal(part, f"mounted at {point}; carries a ext4 signature")


def test_two_devices_are_each_checked_and_the_first_with_data_is_named(loops: Loops) -> None:
    blank, used = loops.add(), loops.add()
    ext4(used)
    with pytest.raises(SafetyError) as caught:
        preparer().require_writable([blank, used])
    assert caught.value.message == refusal(used, "carries a ext4 signature")


def test_devices_named_under_destroy_data_on_are_not_checked(loops: Loops, tmp_path: Path) -> None:
    """destroy_data_on names a device by any path (a /dev/disk/... link): it is compared by its
    canonical name; a name that does not exist allows nothing and breaks nothing."""
    dev, other = loops.add(), loops.add()
    ext4(dev)
    ext4(other)
    link = tmp_path / "by-id-link"
    link.symlink_to(dev)
    p = preparer(allowed=["/nonexistent-folder/disk", str(link)])
    p.require_writable([dev])  # allowed through its link
    with pytest.raises(SafetyError) as caught:
        p.require_writable([dev, other])
    assert caught.value.message == refusal(other, "carries a ext4 signature")


def test_a_signature_this_run_made_before_is_its_own(loops: Loops) -> None:
    """Resume after a kill: the file system (by UUID) on the same device, or the run's array with
    the device among its members (mdadm writes the UUID as 8:8:8:8 hex, blkid as 8-4-4-4-12)."""
    dev, elsewhere = loops.add(), loops.add()
    uuid = ext4(dev)
    hexdigits = uuid.replace("-", "")
    mdadm_style = ":".join(hexdigits[i:i + 8] for i in range(0, 32, 8)).upper()
    ours = [{"kind": "filesystem", "what": dev, "detail": {"fs": "ext4", "uuid": uuid}}]
    assert preparer(earlier=ours).holds_data(dev) == []
    preparer(earlier=ours).require_writable([dev])
    array = [{"kind": "array", "what": "/dev/md/diskbench-abcd-m1", "detail": {"members": [elsewhere, dev],
                                                                             "uuid": mdadm_style}}]
    assert preparer(earlier=array).holds_data(dev) == []
    signature = ["carries a ext4 signature"]
    # not ours: another device's file system, another UUID, an array without this device, no UUID,
    # or an entry of another kind
    other_uuid = uuid[:-1] + ("0" if uuid[-1] != "0" else "1")
    letters = {"a": "b", "b": "a", "c": "d", "d": "c", "e": "f", "f": "e"}
    at = next(i for i, ch in enumerate(uuid) if ch in letters)  # another UUID with the same digits
    other_letter = uuid[:at] + letters[uuid[at]] + uuid[at + 1:]
    for earlier in ([{**ours[0], "what": elsewhere}],
                    [{**ours[0], "detail": {"uuid": other_uuid}}],
                    [{**ours[0], "detail": {"uuid": other_letter}}],
                    [{**ours[0], "detail": {}}],
                    [{**array[0], "detail": {"uuid": mdadm_style}}],  # an array entry without its members
                    [{**array[0], "detail": {"members": [elsewhere], "uuid": mdadm_style}}],
                    [{**ours[0], "detail": {"uuid": ""}}],
                    [{**ours[0], "kind": "mount"}]):
        assert preparer(earlier=earlier).holds_data(dev) == signature, earlier


def test_a_partition_table_has_no_uuid_of_a_file_system(loops: Loops) -> None:
    """A GPT's PTUUID is not a file system's UUID: an earlier entry cannot claim the table."""
    dev = loops.add()
    sh("sfdisk", "-q", "--label", "gpt", dev, stdin=",,L\n")
    ptuuid = sh("blkid", "-p", "-s", "PTUUID", "-o", "value", dev)
    earlier = [{"kind": "filesystem", "what": dev, "detail": {"uuid": ptuuid}}]
    assert preparer(earlier=earlier).holds_data(dev) == ["carries a gpt signature"]


def test_a_device_blkid_cannot_make_sense_of_may_hold_data(loops: Loops) -> None:
    """Two superblocks (ext4, and cramfs's magic in the first bytes that ext4 leaves unused):
    blkid -p exits 8 and says it is ambivalent; that is no licence to write."""
    dev = loops.add()
    ext4(dev)
    with open(dev, "r+b") as f:
        f.write(b"\x45\x3d\xcd\x28")  # cramfs's magic at offset 0
    assert preparer().holds_data(dev) == [f"cannot be probed, so may hold data (blkid: {dev}: {AMBIVALENT})"]


def test_what_is_not_a_block_device_is_an_error(tmp_path: Path) -> None:
    plain = tmp_path / "a-file"
    plain.write_bytes(b"\0" * 4096)
    with pytest.raises(ExecutionError) as caught:
        preparer().holds_data(str(plain))
    assert caught.value.message == f"local: {plain} is not a block device (lsblk: {plain}: not a block device)"
    with pytest.raises(ExecutionError) as caught:
        preparer().canonical("/nonexistent-folder/disk")
    assert caught.value.message == "local: device /nonexistent-folder/disk does not exist"
    silent = Answering({("readlink", "-f", "/dev/x"): Completed(["readlink", "-f", "/dev/x"], 0, "\n", "")})
    with pytest.raises(ExecutionError) as caught:
        preparer(silent).canonical("/dev/x")  # readlink that prints nothing names nothing
    assert caught.value.message == "local: device /dev/x does not exist"


class Answering(LocalExecutor):
    """This machine, except for the commands in ``answers`` (argv -> what they print and exit with)."""

    def __init__(self, answers: dict[tuple[str, ...], Completed]) -> None:
        super().__init__()
        self.answers = answers

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        found = self.answers.get(tuple(argv))
        return found if found is not None else super().run(argv, timeout=timeout, privileged=privileged)


ROOT = ("findmnt", "-n", "-o", "SOURCE", "/")


def test_the_root_file_system_s_disks(loops: Loops) -> None:
    """The root's source and every device under it (lsblk -s): root on a partition of a loop
    device holds that partition and the whole device."""
    dev = loops.add(partitions=True)
    sh("sfdisk", "-q", "--label", "gpt", dev, stdin=",,L\n")
    sh("partx", "-a", dev)
    part = f"{dev}p1"
    ext4(part)
    root_on = Answering({ROOT: Completed(list(ROOT), 0, f"{part}\n", "")})
    assert preparer(root_on).root_disks() == {part, dev}
    assert preparer(root_on).holds_data(part)[-1] == "holds the root filesystem"
    assert preparer(root_on).holds_data(dev) == [f"has partitions or holders ({part})", "carries a gpt signature",
                                                 "holds the root filesystem"]
    for source in ("overlay", "tmpfs", ""):  # not a device: no disk to protect
        assert preparer(Answering({ROOT: Completed(list(ROOT), 0, f"{source}\n", "")})).root_disks() == set()
    gone = Answering({ROOT: Completed(list(ROOT), 0, "/dev/nonexistent-disk\n", "")})  # lsblk fails: no JSON
    assert preparer(gone).root_disks() == set()


def test_this_machine_s_root_disk() -> None:
    """The device of the root file system (its st_dev) is among the root disks, when / is on one."""
    source = sh(*ROOT)
    disks = preparer().root_disks()
    if not source.startswith("/dev/"):
        assert disks == set()
        return
    assert os.stat("/").st_dev in {os.stat(d).st_rdev for d in disks}, disks


def test_a_probe_that_fails_on_a_readable_device_may_hold_data(loops: Loops) -> None:
    """blkid exits 2 both for "nothing found" and for a device it could not read: an error or a
    denial on its stderr, or any other exit, means the device was not looked at."""
    dev = loops.add()
    probe = ("blkid", "-p", "-o", "export", dev)
    cases = [
        (Completed(list(probe), 2, "", f"blkid: error: {dev}: Input/output error\n"),
         f"blkid: error: {dev}: Input/output error"),
        (Completed(list(probe), 2, "", f"warning\nblkid: {dev}: Permission DENIED\n"),
         f"blkid: {dev}: Permission DENIED"),
        (Completed(list(probe), 4, "", ""), "exit 4"),
        (Completed(list(probe), 4, "", "one\nlast line\n"), "last line"),
    ]
    for answer, why in cases:
        got = preparer(Answering({probe: answer})).holds_data(dev)
        assert got == [f"cannot be probed, so may hold data ({why})"], answer
    # exit 2 with nothing on stderr is blkid's "nothing found": blank
    assert preparer(Answering({probe: Completed(list(probe), 2, "", "")})).holds_data(dev) == []
    # a device this user cannot read (test -r fails) is not looked at, whatever blkid said
    unreadable = Answering({("test", "-r", dev): Completed(["test", "-r", dev], 1, "", "")})
    assert preparer(unreadable).holds_data(dev) == ["cannot be probed, so may hold data (not readable)"]


def test_every_partition_and_every_mount_point_is_named(loops: Loops) -> None:
    """A disk with two partitions names both, and both places where they are mounted (lsblk lists a
    disk's partitions in order, each with its mount point)."""
    dev = loops.add(partitions=True)
    sh("sfdisk", "-q", "--label", "gpt", dev, stdin=",8M,L\n,,L\n")
    sh("partx", "-a", dev)
    first, second = f"{dev}p1", f"{dev}p2"
    assert preparer().holds_data(dev) == [f"has partitions or holders ({first}, {second})", "carries a gpt signature"]
    ext4(first)
    ext4(second)
    a, b = loops.mount_ro(first), loops.mount_ro(second)
    assert preparer().holds_data(dev) == [f"mounted at {a}, {b}", f"has partitions or holders ({first}, {second})",
                                         "carries a gpt signature"]


def test_a_label_with_an_equals_sign_is_read_as_one_value(loops: Loops) -> None:
    """blkid -o export prints LABEL=a=b for the label a=b: each line splits at its first '='."""
    dev = loops.add()
    sh("mkfs.ext4", "-q", "-F", "-L", "a=b", dev)
    assert "LABEL=a=b" in sh("blkid", "-p", "-o", "export", dev).splitlines()
    assert preparer().holds_data(dev) == ["carries a ext4 signature"]


class Recording(LocalExecutor):
    """This machine, remembering whether each command was asked to run privileged."""

    def __init__(self) -> None:
        super().__init__()
        self.privileged: dict[str, object] = {}

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        self.privileged[argv[0]] = privileged
        return super().run(argv, timeout=timeout, privileged=privileged)


def test_the_probe_runs_privileged(loops: Loops) -> None:
    """Only root reads a block device: as a user with sudo, blkid and the readability test must run
    through it (an unprivileged blkid finds nothing on a device it cannot open, and says so only
    with its exit code)."""
    dev = loops.add()
    ex = Recording()
    assert preparer(ex).holds_data(dev) == []
    assert (ex.privileged["blkid"], ex.privileged["test"]) == (True, True)
