"""Room on a target before its first job (runner/space.py): fio's files must fit, or nothing runs there.

What a target's units lay out is counted from their plan alone (no I/O): numjobs x size, nrfiles
and filesize, offsets, the passes before the measured run, knee steps and sweeps, ``unlink``, the
flush set, files an earlier run kept. Then on a real file system of this test's (a small tmpfs,
mounted and unmounted by the test, also on failure): a profile whose files do not fit is refused
with one line and exit 1 before fio starts, and one that fits still runs with real fio.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from diskbench.errors import ExecutionError
from diskbench.executors.base import Completed, Executor
from diskbench.platforms.linux import LinuxPlatform
from diskbench.platforms.linux.prepare import LinuxPreparer
from diskbench.runner.space import Layout, check_room, layout
from diskbench.store import Store

from ..conftest import diskbench, needs_fio, plan_of
from ..lab import Lab

MIB = 1 << 20


def _as_given(size: int) -> int:
    """The base platform's flush set: the size asked for."""
    return size


def _layout(text: str, flush_set: Callable[[int], int] = _as_given) -> Layout:
    """The layout of every unit of a local profile on its one target (scratch)."""
    units = plan_of(text).units
    return layout(units, units[0].target_label, flush_set)


def _profile(workloads: str, defaults: str = "{size: 8M}", target: str = "") -> str:
    return f"name: p\n{target}defaults: {defaults}\nworkloads:\n{workloads}"


# --- what is counted, from the plan ------------------------------------------------------------------
def test_files_stay_until_the_run_ends_so_workloads_add_up_but_repeats_reuse_theirs() -> None:
    plan = _layout("name: p\nrepeats: 3\ndefaults: {size: 8M}\nworkloads:\n"
                   "  - {name: a, rw: randread, numjobs: 2}\n  - {name: b, rw: randwrite, bs: [4k, 64k]}\n")
    assert sorted(plan.files) == ["a.0.0", "a.1.0", "b-bs4k.0.0", "b-bs64k.0.0"]  # each sweep value: its files
    assert plan.need({}) == 4 * 8 * MIB  # not x3: every repeat reads and writes the same files


def test_precondition_and_warmup_write_one_file_per_job_beside_nrfiles() -> None:
    # the engine's pass workloads drop extra: one file of the whole size per job, named as the first
    plan = _layout(_profile("  - {name: a, rw: randread, extra: {nrfiles: 4}}\n",
                            target="target: {scratch: true, precondition: true, warmup: 5s}\n"))
    assert plan.files == {"a.0.0": 8 * MIB, "a.0.1": 2 * MIB, "a.0.2": 2 * MIB, "a.0.3": 2 * MIB}


def test_a_job_that_unlinks_its_files_counts_only_while_it_runs() -> None:
    plan = _layout(_profile("  - {name: big, rw: randread, extra: {unlink: 1}}\n"
                            "  - {name: small, rw: randread, size: 2M, extra: {unlink: true}}\n"
                            "  - {name: kept, rw: randread, size: 1M}\n"))
    assert plan.need({}) == 8 * MIB + 1 * MIB


def test_each_step_of_a_knee_search_is_a_job_of_its_own_name() -> None:
    text = _profile("  - {name: k, rw: randread, iodepth: auto, knee: {max_iodepth: 8}}\n", defaults="{size: 1M}")
    knee = plan_of(text).units[0].workload.knee
    assert knee is not None and knee.steps > 1
    assert _layout(text).need({}) == knee.steps * MIB  # as many as the search may take


def test_the_flush_set_is_laid_out_once_beside_the_files() -> None:
    text = _profile("  - {name: a, rw: randread, flush_cache: 20M}\n  - {name: b, rw: randread, flush_cache: 1G}\n")
    preparer = LinuxPreparer(_NoHost(), platform=LinuxPlatform(), allowed=[], name="t", run_id="x")
    plan = _layout(text, preparer.flush_set_bytes)
    assert plan.flush == 8 * 3 * MIB  # the first flushing unit's: eight files of whole MiB (flush.py)
    assert plan.need({}) == 2 * 8 * MIB + 24 * MIB


def test_files_an_earlier_run_kept_are_reused_and_only_what_they_lack_is_needed() -> None:
    plan = _layout(_profile("  - {name: a, rw: randread, numjobs: 2}\n"))
    assert plan.need({"a.0.0": 8 * MIB, "a.1.0": 3 * MIB, "notes.txt": 100}) == 5 * MIB


def test_what_cannot_be_told_is_not_checked() -> None:
    assert "fill_device" in str(_layout(_profile("  - {name: a, rw: write, extra: {fill_device: 1}}\n")).unknown)
    assert "filesize" in str(_layout(_profile("  - {name: a, rw: write, extra: {filesize: 10%}}\n")).unknown)
    units = plan_of(_profile("  - {name: a, rw: write}\n")).units
    other = layout([replace(units[0], engine="diskspd")], units[0].target_label, _as_given)
    assert other.unknown == "the diskspd engine lays out its files its own way"


# --- the refusal, against a platform's free space -----------------------------------------------------
class _NoHost(Executor):
    """An executor nothing may be run on (the platform below answers for the host)."""

    name = "h1"

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        raise AssertionError(f"ran {argv}")

    def stream(self, argv: list[str], *, on_output: Callable[[str], None], timeout: float, stdout_path: Path,
               stderr_path: Path, privileged: bool = False, workdir: str | None = None) -> int:
        raise AssertionError(f"streamed {argv}")

    def write_text(self, path: str, text: str) -> None:
        raise AssertionError(f"wrote {path}")

    def fetch(self, path: str, dest: Path) -> bool:
        raise AssertionError(f"fetched {path}")

    def workspace(self, local_dir: Path) -> str:
        raise AssertionError(f"workspace for {local_dir}")


class _Free(LinuxPlatform):
    """A Linux host whose file system has ``free`` bytes left (or whose df fails: None)."""

    def __init__(self, free: int | None) -> None:
        super().__init__()
        self.free = free

    def free_bytes(self, ex: Executor, path: str) -> int | None:
        if self.free is None:
            raise ExecutionError(f"{ex.name}: cannot read the free space of {path} (df: unrecognized option)")
        return self.free


class _CannotTell(LinuxPlatform):
    """A platform without the probe (the base class's answer): no line on every run."""

    def free_bytes(self, ex: Executor, path: str) -> int | None:
        return None


def _refusal(plan: Layout, free: int, copies: int = 1) -> ExecutionError:
    with pytest.raises(ExecutionError) as caught:
        check_room(_Free(free), _NoHost(), "/mnt/x", "data", plan, host="h1", line=print, copies=copies)
    return caught.value


def test_one_workload_that_alone_does_not_fit_is_named_with_what_to_lower() -> None:
    plan = _layout(_profile("  - {name: big, rw: randread, numjobs: 4}\n  - {name: small, rw: randread, size: 1M}\n"))
    error = _refusal(plan, 20 * MIB)
    assert error.message == ("h1: data (/mnt/x) has 20.0MiB free, but its workloads' data files need 33.0MiB "
                             "(big 32.0MiB in 4 jobs, small 1.0MiB)")
    assert error.hint == "lower size or numjobs of big, or free space there"


def test_workloads_that_fit_one_by_one_but_not_together_say_their_files_stay() -> None:
    plan = _layout(_profile("  - {name: a, rw: randread}\n  - {name: b, rw: randread}\n"))
    error = _refusal(plan, 12 * MIB)
    assert "need 16.0MiB (a 8.0MiB, b 8.0MiB)" in error.message
    assert error.hint is not None and "files stay there until the run ends" in error.hint
    assert "--workload" in error.hint


def test_a_group_needs_a_set_per_client_and_equal_looking_sizes_are_given_in_bytes() -> None:
    plan = _layout(_profile("  - {name: a, rw: randread}\n", defaults="{size: 2M}"))
    assert "2 clients a set each" in _refusal(plan, 3 * MIB, copies=2).message
    assert "need 4,194,304 bytes" in _refusal(plan, 4 * MIB - 4096, copies=2).message  # 4.0MiB both


def test_what_fits_and_what_cannot_be_read_pass() -> None:
    plan = _layout(_profile("  - {name: a, rw: randread}\n"))
    check_room(_Free(8 * MIB), _NoHost(), "/mnt/x", "data", plan, host="h1", line=print)  # exactly fits
    said: list[str] = []
    check_room(_Free(None), _NoHost(), "/mnt/x", "data", plan, host="h1", line=said.append)
    assert said == ["h1: free space on data not checked: cannot read the free space of /mnt/x "
                    "(df: unrecognized option)"]
    unknown = _layout(_profile("  - {name: a, rw: write, extra: {fill_device: 1}}\n"))
    check_room(_CannotTell(), _NoHost(), "/mnt/x", "data", unknown, host="h1", line=said.append)
    check_room(_Free(8 * MIB), _NoHost(), "/mnt/x", "data", unknown, host="h1", line=said.append)
    assert said[1:] == ["h1: free space on data not checked: workload a sets fill_device, so how much its files "
                        "take is not known beforehand"]


# --- on a real file system: refused before fio, or run ----------------------------------------------
def failing_df(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``df`` fails as BusyBox's does on ``--output`` (the free space cannot be read)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "df").write_text("#!/bin/sh\necho 'df: unrecognized option: output=avail' >&2\nexit 1\n")
    (bin_dir / "df").chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Small tmpfs mounts of this test's (``small_fs("4M")``), unmounted at the end, also on failure."""
    if os.geteuid() != 0:
        pytest.skip("needs root (mounts a tmpfs)")
    made: list[Path] = []

    def mount(size: str) -> Path:
        point = tmp_path / f"fs-{uuid.uuid4().hex[:8]}"
        point.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "diskbench-test", str(point)], check=True)
        made.append(point)
        return point

    try:
        yield mount
    finally:
        for point in made:
            subprocess.run(["umount", "-l", str(point)], check=False)


FOUR = """\
name: four
defaults: {size: 2M, runtime: 1s, ramp_time: 0s, ioengine: psync, direct: false, bs: 4k}
workloads:
  - {name: rr, rw: randread}
  - {name: mix, rw: randrw, numjobs: 2}
"""


@needs_fio
def test_files_that_do_not_fit_are_refused_before_fio_with_one_line(db: Path, tmp_path: Path,
                                                                      small_fs: Callable[[str], Path]) -> None:
    target = small_fs("4M")  # each workload fits alone (2 and 4 MiB); their files together do not
    profile = tmp_path / "four.yaml"
    profile.write_text(FOUR)
    out = diskbench("run", "--profile", str(profile), "--target", str(target), db=db)
    assert out.returncode == 1, out.stderr
    refusal = (f"local: dir:{target} has 4.0MiB free, but its workloads' data files need 6.0MiB "
               "(mix 4.0MiB in 2 jobs, rr 2.0MiB) (every workload's files stay there until the run ends: lower "
               "size or numjobs, run fewer workloads on this target (--workload), or free space there)")
    assert f"FAILED: {refusal}\n" in out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("error: run ") and refusal in last and "Traceback" not in out.stderr
    assert list(target.iterdir()) == []  # fio never started: nothing was laid out
    art = Path(Store(db).get_run("last")["artifacts_dir"])
    assert not list(art.rglob("output.json*"))


@needs_fio
def test_files_that_fit_still_run_and_files_kept_before_are_reused(db: Path, tmp_path: Path,
                                                                     small_fs: Callable[[str], Path]) -> None:
    target = small_fs("4M")
    profile = tmp_path / "four.yaml"
    profile.write_text(FOUR)
    args = ("run", "--profile", str(profile), "--target", str(target), "--set", "defaults.size=1M")
    out = diskbench(*args, "--keep-files", db=db)  # 3 MiB of 4
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in target.iterdir()) == ["mix.0.0", "mix.1.0", "rr.0.0"]
    # 1 MiB is free now, but fio reuses the 3 MiB of files it finds under its own names
    out = diskbench(*args, db=db)
    assert out.returncode == 0, out.stderr
    assert "free space" not in out.stderr


@needs_fio
def test_an_unreadable_free_space_leaves_fio_the_last_word(db: Path, tmp_path: Path,
                                                            small_fs: Callable[[str], Path]) -> None:
    """A df that fails (BusyBox's has no --output) is said and the run goes on: the check never stops a run
    it cannot judge."""
    target = small_fs("16M")
    profile = tmp_path / "four.yaml"
    profile.write_text(FOUR)
    out = diskbench("run", "--profile", str(profile), "--target", str(target), db=db, env=failing_df(tmp_path))
    assert out.returncode == 0, out.stderr
    assert f"local: free space on dir:{target} not checked: cannot read the free space of {target} " \
           "(df: unrecognized option: output=avail)" in out.stderr


@needs_fio
def test_a_client_group_is_refused_before_any_file_is_laid_out(lab: Lab, db: Path, tmp_path: Path,
                                                           small_fs: Callable[[str], Path]) -> None:
    """Every client checks the shared target; one folder that all clients share holds one set of files."""
    shared = small_fs("4M")
    hosts = [lab.add_host(), lab.add_host()]
    doc = {"name": "group", "defaults": {"size": "8M", "runtime": "1s", "ramp_time": "0s", "bs": "4k",
                                         "ioengine": "psync", "direct": False},
           "hosts": [h.profile_host() for h in hosts], "shared": {"target": {"dir": str(shared)}, "port": 18791},
           "workloads": [{"name": "mix", "rw": "randrw"}]}
    (tmp_path / "g.yaml").write_text(yaml.safe_dump(doc))
    out = diskbench("run", "--profile", str(tmp_path / "g.yaml"), "--known-hosts", str(lab.known_hosts), db=db)
    assert out.returncode == 1, out.stderr
    assert f"FAILED: client {hosts[0].name}: checking free space failed: dir:{shared} has 4.0MiB free, but its " \
           "workloads' data files need 8.0MiB (mix 8.0MiB) (lower size or numjobs of mix, or free space there)" \
           in out.stderr
    assert list(shared.iterdir()) == []
