"""``flush_cache`` on Linux, on this machine, and the NFS mount's nconnect check, on a scripted host.

The flush runs for real here (dd with direct I/O in a temporary folder, a few MiB): the separate data
set is laid out once, with random data, read again before every job, written down in the journal and
removed with the target. Only dropping the page cache is held back: it would empty the caches of a
machine others share, so the executor records it instead of running it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from diskbench.errors import ExecutionError
from diskbench.executors.base import Completed
from diskbench.executors.local import LocalExecutor
from diskbench.platforms.base import Journal, Prepared
from diskbench.platforms.linux import LinuxPlatform
from diskbench.platforms.linux.flush import DROP, FILES, file_mib, layout_script, read_script
from diskbench.platforms.linux.prepare import LinuxPreparer
from diskbench.profile.targets import NfsTarget

from ...conftest import needs_fio
from ...fake import FakeExecutor

MIB = 1 << 20
RUN = "20261201-120000-f1a5"


class HeldBack(LocalExecutor):
    """This machine, but for ``drop_caches``: recorded, not run."""

    def __init__(self) -> None:
        super().__init__()
        self.dropped: list[bool] = []  # one per drop, whether it was privileged

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        if argv == ["sh", "-c", DROP]:
            self.dropped.append(privileged)
            return Completed(argv, 0, "", "")
        return super().run(argv, timeout=timeout, privileged=privileged)


class Recorded(Journal):
    def __init__(self) -> None:
        super().__init__()
        self.entries: list[tuple[str, str]] = []
        self.released: list[int] = []

    def made(self, kind: str, what: str, **detail: Any) -> int:
        self.entries.append((kind, what))
        return len(self.entries)

    def undone(self, entry: int) -> None:
        self.released.append(entry)


def _preparer(ex: LocalExecutor | FakeExecutor, journal: Journal | None = None,
              said: list[str] | None = None) -> LinuxPreparer:
    return LinuxPreparer(ex, platform=LinuxPlatform(), allowed=[], name="c1", run_id=RUN, journal=journal,
                         line=(said.append if said is not None else None))


def test_the_flush_lays_out_a_random_set_once_reads_it_each_time_and_drops_the_page_cache(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    ex, journal, said = HeldBack(), Recorded(), []
    preparer = _preparer(ex, journal, said)
    where = Prepared(directory=str(target))
    size = 8 * MIB  # eight files of 1 MiB
    preparer.flush_cache(where, size, tmp_path / "unit1")
    folder = target / f"diskbench-flush-{RUN[-4:]}"
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == [f"flush.{i}" for i in range(FILES)]
    assert all(f.stat().st_size == MIB for f in files)
    assert len({f.read_bytes() for f in files}) == FILES and b"\0" * 4096 not in files[0].read_bytes()  # random
    assert journal.entries == [("scratch", str(folder))] and ex.dropped == [True]  # written down; dropped as root
    assert (tmp_path / "unit1" / "flush-layout.sh").read_text() == layout_script(str(folder), size)
    assert (tmp_path / "unit1" / "flush.sh").read_text() == read_script(str(folder))
    assert "iflag=direct" in read_script(str(folder)) and "oflag=direct" in layout_script(str(folder), size)
    assert [s for s in said if "laying out" in s] and [s for s in said if "reading 8.0MiB" in s]

    before = [f.stat().st_mtime_ns for f in files]
    said.clear()
    preparer.flush_cache(where, size, tmp_path / "unit2")  # the next job: read again, not laid out again
    assert [f.stat().st_mtime_ns for f in sorted(folder.iterdir())] == before
    assert not (tmp_path / "unit2" / "flush-layout.sh").exists() and (tmp_path / "unit2" / "flush.sh").exists()
    assert not [s for s in said if "laying out" in s] and ex.dropped == [True, True]
    assert len(journal.entries) == 1

    where.release()  # with the target: the set is gone, the journal entry closed
    assert not folder.exists() and target.exists() and journal.released == [1]


def test_flush_cache_true_only_drops_the_page_cache(tmp_path: Path) -> None:
    ex = HeldBack()
    _preparer(ex).flush_cache(Prepared(filename="/dev/nvme0n1"), 0, tmp_path / "unit")
    assert ex.dropped == [True] and not (tmp_path / "unit").exists()
    with pytest.raises(ExecutionError, match="raw device"):
        _preparer(ex).flush_cache(Prepared(filename="/dev/nvme0n1"), MIB, tmp_path / "unit")


def test_a_failed_read_says_why_and_a_small_set_is_never_smaller_than_asked(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    preparer = _preparer(HeldBack())
    where = Prepared(directory=str(target))
    preparer.flush_cache(where, MIB, tmp_path / "u1")
    for f in (target / f"diskbench-flush-{RUN[-4:]}").iterdir():
        f.unlink()  # the set went missing under the run
    with pytest.raises(ExecutionError, match=r"local: reading the flush set failed: dd: .*flush\.\*"):
        preparer.flush_cache(where, MIB, tmp_path / "u2")
    assert file_mib(1) == 1 and file_mib(8 * MIB + 1) == 2 and file_mib(160 << 30) == 20480


MOUNT = "/mnt/diskbench-f1a5-nfs"


def _nfs_host(seen: str) -> FakeExecutor:
    return FakeExecutor({"mkdir": (0, ""), "mount -t nfs": (0, ""), f"findmnt -no OPTIONS {MOUNT}": (0, seen),
                         "chmod": (0, ""), "umount": (0, ""), "rmdir": (0, "")})


@pytest.mark.parametrize("options, seen", [
    ("rw,nconnect=8,hard,vers=3,tcp", "rw,relatime,vers=3,hard,proto=tcp,nconnect=8,timeo=600"),
    ("rw,hard,vers=3,tcp", "rw,relatime,vers=3,hard,proto=tcp,timeo=600"),
    ("rw,hard,nconnect=1,vers=3,tcp", "rw,relatime,vers=3,hard,proto=tcp,timeo=600"),
])
def test_an_nfs_mount_with_the_connections_asked_for_is_used(options: str, seen: str) -> None:
    ex = _nfs_host(seen)
    prepared = _preparer(ex).prepare(NfsTarget(nfs="10.213.1.4:/vol", options=options), True)
    assert prepared.directory == f"{MOUNT}/diskbench-f1a5-c1"
    assert not [c for c in ex.calls if c.startswith("umount")]


@pytest.mark.parametrize("options, seen, asked, got", [
    ("rw,hard,vers=3,tcp", "rw,relatime,vers=3,hard,proto=tcp,nconnect=8", 1, 8),
    ("rw,nconnect=8,hard,vers=3,tcp", "rw,relatime,vers=3,hard,proto=tcp", 8, 1),
])
def test_an_nfs_mount_that_inherits_another_mounts_connections_is_refused(options: str, seen: str, asked: int,
                                                                          got: int) -> None:
    """The kernel shares one set of TCP connections per NFS server and version among its mounts, made
    by the first: a second mount of the server gets the first's nconnect, whatever it asks. Measuring
    on it would compare nothing, so it is unmounted again with the reason."""
    ex = _nfs_host(seen)
    with pytest.raises(ExecutionError, match=rf"mounted with nconnect={got}, not {asked}: the host has another mount"):
        _preparer(ex).prepare(NfsTarget(nfs="10.213.1.4:/vol", options=options), True)
    assert [c for c in ex.calls if re.match(r"umount -f /mnt/diskbench-f1a5-nfs$", c)]


@needs_fio
def test_a_run_flushes_before_the_jobs_that_ask_and_leaves_nothing(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A local run: the machine's part flushes before ``r`` (never before ``w``), between its passes and
    its measured run, and the set is gone with the target at the end (its folder as it was)."""
    import diskbench
    from diskbench.profile import LoadedProfile, parse_profile
    from diskbench.store import Store

    monkeypatch.setattr("diskbench.platforms.linux.flush.DROP", "true")  # not this shared machine's caches
    text = ("name: f\ndefaults: {size: 4M, runtime: 1s, ramp_time: 0, rw: randread}\n"
            "workloads:\n  - {name: r, flush_cache: 8m}\n  - {name: w}\n")
    target = tmp_path / "t"
    target.mkdir()
    store = Store(tmp_path / "db.sqlite")
    loaded = LoadedProfile(profile=parse_profile(text), path="f.yaml", text=text)
    results = diskbench.run(loaded, store=store, target_dir=str(target))
    art = Path(store.get_run(results.run["id"])["artifacts_dir"])
    (r,) = art.glob("*-r")
    (w,) = art.glob("*-w")
    assert (r / "flush-layout.sh").exists() and (r / "flush.sh").exists() and (r / "flush.stderr.txt").exists()
    assert not list(w.glob("flush*"))
    assert list(target.iterdir()) == []  # the flush set and the data files: removed
    assert results.get("r", "read").iops > 0
