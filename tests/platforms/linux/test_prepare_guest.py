"""md RAID0 and the safety rule on real block devices, in a guest with its own kernel.

One OpenStack-shaped guest (four NVMe devices, as in the OVHcloud article) with four more virtio
disks that hold data the way users' disks do: a partition table, a filesystem, an md superblock
and an LVM physical volume. diskbench stripes the NVMe devices, formats, mounts, runs, and then
leaves nothing behind (array stopped, superblocks zeroed, unmounted); it refuses each data disk
with its reason, and their first MiB is the same byte for byte afterwards.
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
from tests.guestlab.spec import DiskSpec, openstack

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


def run_profile(guest: Guest, tmp_path: Path, targets: dict[str, Any]) -> tuple[int, str, dict[str, Any]]:
    profile = tmp_path / "p.yaml"
    profile.write_text(yaml.safe_dump({"name": "raid", "defaults": DEFAULTS, "workloads": WORKLOADS,
                                       "hosts": [guest.profile_host(targets=targets)]}, sort_keys=False))
    db = tmp_path / "db.sqlite"
    out = diskbench("run", "--profile", str(profile), "--format", "json", db=db, timeout=600)
    return out.returncode, out.stderr, json.loads(out.stdout) if out.returncode == 0 else {}


def first_mib(guest: Guest) -> dict[str, str]:
    return {n: guest.check(f"dd if={by_id(n)} bs=1M count=1 status=none | md5sum").split()[0] for n in HOLDERS}


def test_nvme_raid0_is_built_measured_and_taken_apart(guest: Guest, tmp_path: Path) -> None:
    rc, stderr, doc = run_profile(guest, tmp_path, {"md": {"nvme": "all", "raid": 0, "fs": "xfs", "mount": "/mnt"}})
    assert rc == 0, stderr[-3000:]
    assert "building RAID0" in stderr and all(f"/dev/nvme{i}n1" in stderr for i in range(4))
    assert {(r["workload"], r["direction"]) for r in doc["results"]} == {("rr", "read"), ("rw", "write")}
    assert doc["run"]["targets"]["raid/md"]["fstype"] == "xfs"
    # nothing left: no array, no superblock on the members, nothing mounted on /mnt
    assert "active" not in guest.check("cat /proc/mdstat"), stderr
    for i in range(4):
        rc_examine, out, _ = guest.run(f"mdadm --examine /dev/nvme{i}n1")
        assert rc_examine != 0 and "Magic" not in out
    assert guest.run("mountpoint -q /mnt")[0] != 0


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
