"""Releasing an md array on a host that is slow to let go of it: keep trying, and believe only the host.

A fake host plays the kernel's part: /proc/mdstat, ``mdadm --stop`` that answers "busy" while udev
still probes the array (the lab guest's md127 that outlived a run on a loaded machine), superblocks
that ``mdadm --examine`` finds until they are zeroed, and an SSH round trip that fails once. The
guest tests (test_prepare_guest.py, the lab runs) check the same against a real kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from diskbench.errors import ExecutionError
from diskbench.executors.base import Completed, Executor
from diskbench.platforms.linux.leftovers import undo
from diskbench.platforms.linux.prepare import stop_array, unmount_point

UUID = "1b2c3d4e:5f607182:93a4b5c6:d7e8f901"
MEMBERS = ["/dev/nvme0n1", "/dev/nvme1n1"]


class Host(Executor):
    """/proc/mdstat, mdadm and mount as a kernel that is busy for ``busy`` attempts."""

    name = "fake"

    def __init__(self, busy: int = 0, lost: int = 0, other_uuid: str | None = None) -> None:
        self.arrays = {"md127": UUID}
        self.superblocks = {m: UUID for m in MEMBERS} | ({"/dev/nvme2n1": other_uuid} if other_uuid else {})
        self.mounted = {"/mnt/x"}
        self.busy, self.lost = busy, lost
        self.calls: list[list[str]] = []

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        self.calls.append(argv)
        if self.lost and argv[:2] == ["mdadm", "--stop"]:
            self.lost -= 1
            raise ExecutionError("fake: the SSH session dropped")
        ok, no = Completed(argv, 0, "", ""), Completed(argv, 1, "", "")
        if argv == ["cat", "/proc/mdstat"]:
            text = "".join(f"{n} : active raid0 nvme1n1[1] nvme0n1[0]\n" for n in self.arrays)
            return Completed(argv, 0, f"Personalities : [raid0]\n{text}unused devices: <none>\n", "")
        if argv[:2] == ["mdadm", "--stop"]:
            if self.busy:
                self.busy -= 1
                return Completed(argv, 1, "", "mdadm: Cannot get exclusive access to /dev/md127")
            self.arrays.pop(argv[2].rsplit("/", 1)[-1], None)
            return ok
        if argv[:2] == ["mdadm", "--detail"]:
            return Completed(argv, 0, f"MD_UUID={self.arrays.get(argv[3].rsplit('/', 1)[-1], '')}\n", "")
        if argv[:2] == ["mdadm", "--examine"]:
            uuid = self.superblocks.get(argv[3])
            return Completed(argv, 0, f"MD_LEVEL=raid0\nMD_UUID={uuid}\n", "") if uuid else no
        if argv[:2] == ["mdadm", "--zero-superblock"]:
            for member in argv[2:]:
                if not any(self.arrays.values()):  # a running array keeps its members' superblocks
                    self.superblocks.pop(member, None)
            return ok
        if argv[:2] == ["mountpoint", "-q"]:
            return ok if argv[2] in self.mounted else no
        if argv[0] == "umount":
            if self.busy:
                self.busy -= 1
                return Completed(argv, 32, "", "umount: /mnt/x: target is busy.")
            self.mounted.discard(argv[1])
            return ok
        if argv[0] == "test":
            return ok if argv[-1] == "/dev/md127" and "md127" in self.arrays else no
        return ok  # udevadm settle and the like

    def stream(self, argv: list[str], *, on_output: Callable[[str], None], timeout: float, stdout_path: Path,
               stderr_path: Path, privileged: bool = False, workdir: str | None = None) -> int:
        raise NotImplementedError

    def write_text(self, path: str, text: str) -> None:
        raise NotImplementedError

    def fetch(self, path: str, dest: Path) -> bool:
        raise NotImplementedError

    def workspace(self, local_dir: Path) -> str:
        raise NotImplementedError


def no_sleep(_s: float) -> None:
    return None


def test_an_array_busy_for_a_while_is_stopped_and_its_superblocks_zeroed() -> None:
    host = Host(busy=25)  # more than the ten tries the release used to make
    assert stop_array(host, "/dev/md127", MEMBERS, UUID, sleep=no_sleep) is None
    assert host.arrays == {} and host.superblocks == {}
    stops = [c for c in host.calls if c[:2] == ["mdadm", "--stop"]]
    assert len(stops) == 26 and all(c == ["mdadm", "--stop", "/dev/md127"] for c in stops)  # the kernel name


def test_a_dropped_command_is_tried_again() -> None:
    host = Host(lost=2)
    assert stop_array(host, "/dev/md127", MEMBERS, UUID, sleep=no_sleep) is None
    assert host.arrays == {} and host.superblocks == {}


def test_what_is_left_is_said_when_the_host_never_lets_go() -> None:
    host = Host(busy=10**6)
    left = stop_array(host, "/dev/md127", MEMBERS, UUID, wait_s=0.0, sleep=no_sleep)
    assert left == "/dev/md127 still active"
    assert host.superblocks  # never zeroed under a running array


def test_an_array_found_by_its_uuid_under_another_name() -> None:
    host = Host()
    host.arrays = {"md126": UUID}  # assembled again under another name (a reboot, an auto-assembly)
    assert stop_array(host, "/dev/md127", MEMBERS, UUID, sleep=no_sleep) is None
    assert host.arrays == {} and host.superblocks == {}


def test_a_busy_mount_is_unmounted_once_it_lets_go() -> None:
    host = Host(busy=5)
    assert unmount_point(host, "/mnt/x", sleep=no_sleep)
    assert host.mounted == set()
    assert not unmount_point(Host(busy=10**6), "/mnt/x", wait_s=0.0, sleep=no_sleep)


def test_cleanup_of_a_killed_run_zeroes_only_its_own_superblocks() -> None:
    host = Host(other_uuid="aaaaaaaa:bbbbbbbb:cccccccc:dddddddd")
    entry = {"kind": "array", "what": "/dev/md/diskbench-abcd-db01",
             "detail": {"members": [*MEMBERS, "/dev/nvme2n1"], "uuid": UUID, "device": "/dev/md127"}}
    said: list[str] = []
    assert undo(None, host, entry, said.append)  # type: ignore[arg-type]
    assert host.arrays == {} and host.superblocks == {"/dev/nvme2n1": "aaaaaaaa:bbbbbbbb:cccccccc:dddddddd"}
    assert said == ["fake: stopped /dev/md/diskbench-abcd-db01"]
