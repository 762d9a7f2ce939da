"""Storage targets on lab hosts: the safety rule, and a throttled device behaving like a cloud disk."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from diskbench.executors.local import LocalExecutor
from diskbench.platforms.linux import LinuxPlatform
from diskbench.platforms.linux.prepare import LinuxPreparer as Preparer

from ...conftest import diskbench, needs_fio, needs_root
from ...lab import Lab

pytestmark = needs_fio


def first_mib(dev: str) -> str:
    with open(dev, "rb") as fh:
        return hashlib.sha256(fh.read(1024 * 1024)).hexdigest()


def profile(path: Path, host: dict[str, object], **extra: object) -> Path:
    doc = {"name": "prep", "defaults": {"size": "16M", "runtime": "1s", "ramp_time": "0s", "iodepth": 4},
           "hosts": [host], "workloads": [{"name": "rw", "rw": "randwrite", "bs": "4k"}], **extra}
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def mounted(tmp_path: Path):  # type: ignore[no-untyped-def]
    mounts: list[Path] = []
    yield mounts
    for point in mounts:
        subprocess.run(["umount", "-l", str(point)], check=False)


def test_devices_holding_data_are_refused_and_untouched(lab: Lab, db: Path, tmp_path: Path,
                                                        mounted: list[Path]) -> None:
    host = lab.add_host(loops=4, loop_mib=320)
    with_fs, with_table, is_mounted, blank = host.loops
    subprocess.run(["mkfs.ext4", "-q", "-F", with_fs], check=True)
    subprocess.run(["sfdisk", "-q", with_table], input="label: gpt\n,,L\n", text=True, check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", is_mounted], check=True)
    point = tmp_path / "mnt"
    point.mkdir()
    # read-only: a read-write ext4 updates its own superblock now and then (the first MiB would
    # change without diskbench writing a byte)
    subprocess.run(["mount", "-o", "ro", is_mounted, str(point)], check=True)
    mounted.append(point)
    cases = {with_fs: "carries a ext4 signature", with_table: "carries a gpt signature",
             is_mounted: f"mounted at {point}"}
    for dev, reason in cases.items():
        before = first_mib(dev)
        for raw in (False, True):
            target = {"device": dev, "raw": True} if raw else {"device": dev, "fs": "xfs"}
            path = profile(tmp_path / "p.yaml", host.profile_host(targets={"t": target}))
            out = diskbench("run", "--profile", str(path), "--known-hosts", str(lab.known_hosts), db=db)
            assert out.returncode == 6, out.stderr  # the safety rule's own exit code
            assert f"refusing to write to {dev}: it " in out.stderr and reason in out.stderr, out.stderr
            assert f"--destroy-data-on {dev}" in out.stderr
            assert first_mib(dev) == before, f"{dev} was written to"

    # A blank device needs no permission; naming a device under destroy_data_on allows it.
    path = profile(tmp_path / "ok.yaml", host.profile_host(
        targets={"blank": {"device": blank, "fs": "ext4"}, "named": {"device": with_fs, "fs": "xfs"}}),
        destroy_data_on=[with_fs])
    out = diskbench("run", "--profile", str(path), "--known-hosts", str(lab.known_hosts), db=db)
    assert out.returncode == 0, out.stderr
    assert subprocess.run(["blkid", "-o", "value", "-s", "TYPE", with_fs], capture_output=True,
                          text=True).stdout.strip() == "xfs"


def test_raw_read_needs_no_permission_but_raw_write_does(lab: Lab, db: Path, tmp_path: Path) -> None:
    host = lab.add_host(loops=1, loop_mib=64)
    (dev,) = host.loops
    subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True)
    before = first_mib(dev)
    doc = {"name": "raw", "defaults": {"size": "16M", "runtime": "1s", "ramp_time": "0s"},
           "hosts": [host.profile_host(targets={"raw": {"device": dev, "raw": True}})],
           "workloads": [{"name": "rr", "rw": "randread", "bs": "4k"}]}
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(doc))
    out = diskbench("run", "--profile", str(tmp_path / "r.yaml"), "--known-hosts", str(lab.known_hosts),
                    db=db)
    assert out.returncode == 0, out.stderr
    assert first_mib(dev) == before


def test_throttled_device_reports_iops_near_its_cap(lab: Lab, db: Path, tmp_path: Path) -> None:
    host = lab.add_host(loops=1, loop_mib=128)
    (dev,) = host.loops
    host.throttle(dev, write_iops=500)
    doc = {"name": "capped", "hosts": [host.profile_host(targets={"disk": {"device": dev, "raw": True}})],
           "workloads": [{"name": "cap", "rw": "randwrite", "bs": "4k", "iodepth": 16, "size": "64M",
                          "runtime": "3s", "ramp_time": "1s"}]}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(doc))
    out = diskbench("run", "--profile", str(tmp_path / "c.yaml"), "--known-hosts", str(lab.known_hosts),
                    "--format", "json", db=db)
    assert out.returncode == 0, out.stderr
    (result,) = json.loads(out.stdout)["results"]
    assert result["iops"] == pytest.approx(500, rel=0.10)


@needs_root
def test_root_disk_holds_data() -> None:
    """Only probes (never writes): the disk under / is reported as holding data."""
    preparer = Preparer(LocalExecutor(), platform=LinuxPlatform(), allowed=[], name="t", run_id="x")
    roots = preparer.root_disks()
    if not roots:
        pytest.skip("/ is not on a block device here")
    disk = sorted(roots)[-1]
    reasons = preparer.holds_data(disk)
    assert any("root filesystem" in r or "mounted at /" in r for r in reasons), reasons


@pytest.mark.skipif(shutil.which("sudo") is None or shutil.which("useradd") is None,
                    reason="sudo or useradd is not installed")
def test_non_root_user_with_sudo(lab: Lab, db: Path, tmp_path: Path) -> None:
    user = lab.add_sudo_user()
    host = lab.add_host(loops=1, loop_mib=320)
    (dev,) = host.loops
    target = {"disk": {"device": dev, "fs": "xfs"}}
    without = profile(tmp_path / "n.yaml", {**host.profile_host(targets=target), "user": user})
    out = diskbench("run", "--profile", str(without), "--known-hosts", str(lab.known_hosts), db=db)
    # Without sudo the device cannot even be read, and what cannot be checked is not written.
    assert out.returncode == 6 and "cannot be probed, so may hold data (not readable)" in out.stderr, out.stderr
    with_sudo = profile(tmp_path / "s.yaml",
                        {**host.profile_host(targets=target), "user": user, "sudo": True})
    out = diskbench("run", "--profile", str(with_sudo), "--known-hosts", str(lab.known_hosts), db=db)
    assert out.returncode == 0, out.stderr
    assert dev not in Path("/proc/mounts").read_text()
