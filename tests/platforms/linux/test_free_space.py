"""The free space of a target as the host reports it (``LinuxPlatform.free_bytes``), and the check before
the first job on a device target diskbench formats and mounts itself, on real loop devices.

The oracle is the kernel's ``statvfs`` of the same file system. The loop devices are this test's own,
detached by their names (and what the test mounted unmounted) at the end, also when it fails. Needs root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from diskbench.errors import ExecutionError
from diskbench.executors.local import LocalExecutor
from diskbench.platforms.linux import LinuxPlatform

from ...conftest import diskbench, needs_fio
from ...lab import Lab
from .test_safety_rule import Loops

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("losetup", "mkfs.ext4", "df")),
    reason="needs root, util-linux and e2fsprogs (loop devices)")


def _mounted_ext4(loops: Loops, mib: int) -> Path:
    """A fresh ext4 (5% reserved for root, mkfs's default) on a loop device, mounted read-write."""
    dev = loops.add(mib)
    subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True)
    point = loops.folder / f"rw{len(loops.mounts)}"
    point.mkdir()
    subprocess.run(["mount", dev, str(point)], check=True)
    loops.mounts.append(point)
    return point


def test_free_bytes_is_what_a_user_may_write_not_roots_reserve(loops: Loops) -> None:
    point = _mounted_ext4(loops, 32)
    got = LinuxPlatform().free_bytes(LocalExecutor(), str(point))
    fs = os.statvfs(point)
    assert got == fs.f_bavail * fs.f_frsize
    assert got is not None and got < fs.f_bfree * fs.f_frsize  # the reserve is left to the host's services


def test_a_path_df_cannot_read_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ExecutionError, match=r"^local: cannot read the free space of .*/nope \(df: .*nope"):
        LinuxPlatform().free_bytes(LocalExecutor(), str(tmp_path / "nope"))


def _device_profile(path: Path, target: dict[str, object], size: str, **more: object) -> Path:
    doc = {"name": "dev", "target": target, **more,
           "defaults": {"size": size, "runtime": "1s", "ramp_time": "0s", "ioengine": "psync", "bs": "4k"},
           "workloads": [{"name": "rr", "rw": "randread"}, {"name": "rw", "rw": "randwrite", "numjobs": 2}]}
    path.write_text(yaml.safe_dump(doc))
    return path


@needs_fio
def test_a_device_target_too_small_is_refused_once_mounted_and_released_at_once(loops: Loops, db: Path,
                                                                                 tmp_path: Path) -> None:
    dev = loops.add(64)
    profile = _device_profile(tmp_path / "p.yaml", {"device": dev, "fs": "ext4"}, "24M")
    out = diskbench("run", "--profile", str(profile), db=db)
    assert out.returncode == 1, out.stderr
    # the ext4 diskbench made has ~50 MiB for users; the workloads' files need 3 x 24 MiB
    assert f"FAILED: local: device:{dev} (/mnt/diskbench-" in out.stderr
    assert "free, but its workloads' data files need 72.0MiB (rw 48.0MiB in 2 jobs, rr 24.0MiB) (every " \
           "workload's files stay there until the run ends" in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("error: run ") and "Traceback" not in out.stderr
    assert dev not in Path("/proc/mounts").read_text()  # unmounted, and no fio ran on it


@needs_fio
def test_a_device_target_that_fits_still_runs(loops: Loops, db: Path, tmp_path: Path) -> None:
    dev = loops.add(64)
    profile = _device_profile(tmp_path / "p.yaml", {"device": dev, "fs": "ext4"}, "8M")
    out = diskbench("run", "--profile", str(profile), "--format", "json", db=db)
    assert out.returncode == 0, out.stderr
    assert "free space" not in out.stderr
    assert dev not in Path("/proc/mounts").read_text()


@needs_fio
def test_a_lab_hosts_own_df_is_asked_over_ssh(lab: Lab, db: Path, tmp_path: Path) -> None:
    """On a host reached over SSH, the file system diskbench made there and mounted is measured there."""
    host = lab.add_host(loops=1, loop_mib=64)
    (dev,) = host.loops
    doc = {"name": "remote", "hosts": [host.profile_host(targets={"disk": {"device": dev, "fs": "ext4"}})],
           "defaults": {"size": "32M", "runtime": "1s", "ramp_time": "0s", "bs": "4k"},
           "workloads": [{"name": "big", "rw": "randwrite", "numjobs": 2}]}
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(doc))
    out = diskbench("run", "--profile", str(tmp_path / "r.yaml"), "--known-hosts", str(lab.known_hosts), db=db)
    assert out.returncode == 1, out.stderr
    assert f"FAILED: {host.name}: disk (/mnt/diskbench-" in out.stderr
    assert "but its workloads' data files need 64.0MiB (big 64.0MiB in 2 jobs) (lower size or numjobs of big, " \
           "or free space there)" in out.stderr
    assert dev not in Path("/proc/mounts").read_text()
