"""md RAID0 and the safety rule on real block devices, in a guest with its own kernel.

One OpenStack-shaped guest (four NVMe devices, as in the OVHcloud article) with four more virtio
disks that hold data the way users' disks do: a partition table, a filesystem, an md superblock
and an LVM physical volume. diskbench stripes the NVMe devices, formats, mounts, runs, and then
leaves nothing behind (array stopped, superblocks zeroed, unmounted); it refuses each data disk
with its reason, and their first MiB is the same byte for byte afterwards.

The array is taken apart on every path a run can end by: success, a unit that fails, and Ctrl-C in
the middle of a unit; each time the guest's own kernel is asked (its /proc/mdstat, ``mdadm --examine``
on every member), and the run record names the four members, each of which took its share of the writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import diskbench
from tests.guestlab.fixtures import open_lab
from tests.guestlab.guest import Guest
from tests.guestlab.image import GuestImage
from tests.guestlab.probe import disk_ops, md_state
from tests.guestlab.spec import DiskSpec, openstack
from tests.interrupting import Watched

pytestmark = pytest.mark.guest

HOLDERS = {  # disk -> the command that puts data on it, and what diskbench must say of it
    "parted": ("printf 'label: gpt\\n,,L\\n' | sfdisk -q {dev}", "has partitions"),
    "fsys": ("mkfs.ext4 -q -F {dev}", "carries a ext4 signature"),
    "mdsb": ("mdadm --create /dev/md/lab --run --level=1 --raid-devices=2 --metadata=1.2 {dev} missing "
             "&& mdadm --stop /dev/md/lab", "carries a linux_raid_member signature"),
    "lvm": ("pvcreate -qq -ff -y {dev}", "carries a LVM2_member signature"),
}
DEFAULTS = {"size": "16M", "runtime": "2s", "ramp_time": "0s", "ioengine": "libaio", "direct": True,
            "iodepth": 8}
WORKLOADS = [{"name": "rr", "rw": "randread", "bs": "4k"}, {"name": "rw", "rw": "randwrite", "bs": "4k"}]


def by_id(name: str) -> str:
    return f"/dev/disk/by-id/virtio-{name}"


@pytest.fixture(scope="module")
def guest(guest_image: GuestImage, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guest]:
    four = openstack("raid")
    spec = four.with_(disks=(*four.disks, *(DiskSpec(n, bus="virtio", size_mib=64) for n in HOLDERS)))
    with open_lab(guest_image, tmp_path_factory.mktemp("raid")) as lab:
        g = lab.start(spec)
        for name, (command, _) in HOLDERS.items():
            g.check(command.format(dev=by_id(name)))
        yield g


MD = {"md": {"nvme": "all", "raid": 0, "fs": "xfs", "mount": "/mnt"}}
MEMBERS = [f"/dev/nvme{i}n1" for i in range(4)]


def write_profile(guest: Guest, tmp_path: Path, targets: dict[str, Any],
                  workloads: list[dict[str, Any]] = WORKLOADS) -> Path:
    profile = tmp_path / "p.yaml"
    profile.write_text(yaml.safe_dump({"name": "raid", "defaults": DEFAULTS, "workloads": workloads,
                                       "hosts": [guest.profile_host(targets=targets)]}, sort_keys=False))
    return profile


def run_profile(guest: Guest, tmp_path: Path, targets: dict[str, Any],
                workloads: list[dict[str, Any]] = WORKLOADS) -> tuple[int, str, dict[str, Any]]:
    profile = write_profile(guest, tmp_path, targets, workloads)
    out = diskbench("run", "--profile", str(profile), "--format", "json", db=tmp_path / "db.sqlite", timeout=600)
    return out.returncode, out.stderr, json.loads(out.stdout) if out.stdout.strip().startswith("{") else {}


def nothing_left(guest: Guest, said: str) -> None:
    """No array in the guest's kernel, no superblock on any member, nothing mounted on /mnt."""
    active, carrying = md_state(guest, MEMBERS)
    assert active == [] and carrying == [], (active, carrying, said[-2000:])
    assert guest.run("mountpoint -q /mnt")[0] != 0, said[-2000:]


def first_mib(guest: Guest) -> dict[str, str]:
    return {n: guest.check(f"dd if={by_id(n)} bs=1M count=1 status=none | md5sum").split()[0] for n in HOLDERS}


def test_nvme_raid0_is_built_measured_and_taken_apart(guest: Guest, tmp_path: Path) -> None:
    before = disk_ops(guest, [f"nvme{i}" for i in range(4)])
    rc, stderr, doc = run_profile(guest, tmp_path, MD)
    assert rc == 0, stderr[-3000:]
    assert "building RAID0" in stderr and all(m in stderr for m in MEMBERS)
    assert {(r["workload"], r["direction"]) for r in doc["results"]} == {("rr", "read"), ("rw", "write")}
    target = doc["run"]["targets"]["raid/md"]
    assert target["fstype"] == "xfs" and sorted(d["name"] for d in target["devices"]) == [m[5:] for m in MEMBERS]
    # striped: every member took a share of the writes (QEMU's counters; four equal members take 25% each)
    after = disk_ops(guest, [f"nvme{i}" for i in range(4)])
    writes = {d: after[d]["write"] - before[d]["write"] for d in after}
    assert all(w >= 0.15 * sum(writes.values()) > 0 for w in writes.values()), (writes, stderr[-1500:])
    nothing_left(guest, stderr)


def test_a_failing_unit_still_takes_the_array_apart(guest: Guest, tmp_path: Path) -> None:
    """fio refuses the job (an O_DIRECT block size the device cannot take): the run fails, the array goes."""
    rc, stderr, _ = run_profile(guest, tmp_path, MD, [{"name": "bad", "rw": "randwrite", "bs": "1000"}])
    assert rc != 0 and "building RAID0" in stderr, stderr[-3000:]
    nothing_left(guest, stderr)


def test_ctrl_c_in_a_unit_still_takes_the_array_apart(guest: Guest, tmp_path: Path) -> None:
    profile = write_profile(guest, tmp_path, MD, [{"name": "long", "rw": "randwrite", "bs": "4k", "runtime": "60s",
                                                  "time_based": True}])
    with Watched("run", "--profile", str(profile), db=tmp_path / "db.sqlite") as run:
        run.wait_for("long on md", timeout=300)
        run.wait_for("started", timeout=300)
        run.ctrl_c()
        assert run.finish(timeout=300) == 130, run.stderr
    nothing_left(guest, run.stderr)


def test_disks_that_hold_data_are_refused_and_untouched(guest: Guest, tmp_path: Path) -> None:
    before = first_mib(guest)
    for name, (_, reason) in HOLDERS.items():
        rc, stderr, _ = run_profile(guest, tmp_path, {name: {"device": by_id(name), "fs": "xfs"}})
        assert rc != 0, name
        device = guest.check(f"readlink -f {by_id(name)}").strip()  # diskbench names the device itself
        assert f"refusing to write to {device}: it " in stderr and reason in stderr, (name, stderr[-1500:])
        assert "Traceback" not in stderr
    assert first_mib(guest) == before
    # the md superblock disk is still an md member, the PV still a PV
    assert "Magic" in guest.check(f"mdadm --examine {by_id('mdsb')}")
    assert guest.run(f"pvs {by_id('lvm')}")[0] == 0
