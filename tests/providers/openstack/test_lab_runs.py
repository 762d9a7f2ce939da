"""The OVHcloud article end to end on a real kernel: fake OpenStack, real openstacksdk, a QEMU guest.

The server the fake creates boots as an OpenStack-shaped guest (four NVMe devices, the i1-180's
passthrough disks) in a lab network namespace, answering SSH at its address on port 22 with the
host key the test generated; its console is the guest's serial log, to which cloud-init's key
blocks are added once sshd runs, so diskbench pins the key from the console as on a real cloud.
`diskbench run --profile ovh-nvme-raid0` then builds the article's RAID0 over the four devices,
formats it xfs on /mnt, runs both command lines (cut to seconds and four jobs) and deletes the
server. The run record names the four members, each took its share of the writes (QEMU's own
counters, seen from the host), and the guest's own kernel is left with no array and no superblock.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from diskbench.providers.openstack.preflight import local_nvme

from ...conftest import diskbench
from ...fake_openstack import Boot, FakeOpenStack, cloud_init_console
from ...guestlab.guest import Guest, GuestLab, KeyPair
from ...guestlab.probe import disk_ops, md_state
from ...guestlab.spec import DiskSpec, Throttle, openstack
from ...lab import Lab
from .test_run import _env

pytestmark = pytest.mark.guest

SMALL = ["--set", "machines[0].cloud=fake", "--set", "defaults.runtime=3s", "--set", "defaults.numjobs=4",
         "--set", "defaults.size=16m", "--set", "defaults.extra.filesize=16m"]


@pytest.fixture
def cloud(fake: FakeOpenStack, os_config: Path, lab: Lab, guest_lab: GuestLab) -> Iterator[list[Guest]]:
    # QEMU dies with the thread that started it (a parent-death signal): start guests from one
    # thread that lives as long as the test, not from the fake's short-lived request threads.
    starter = ThreadPoolExecutor(1)
    guests: list[Guest] = []

    def on_boot(server: dict[str, Any]) -> Boot:
        ns = lab.add_namespace()
        name = f"os{len(guests)}"
        host_key = KeyPair.generate(guest_lab.root / f"{name}-host-key", f"root@{server['name']}")
        login = fake.keypairs[server["key_name"]]["public_key"]
        specs = fake.servers[server["id"]]["_flavor"]["extra_specs"]
        spec = openstack(name, nvme=local_nvme(specs)[0] or 0).with_(user="ubuntu", memory_mib=640,
                                                                   os_disk=nova_iotune(specs))
        guest = starter.submit(guest_lab.launch, spec, None, (ns.ns, ns.address), host_key.private.read_text(),
                               login).result()
        guests.append(guest)

        def console() -> str:
            log = guest.serial_log.read_text(errors="replace") if guest.serial_log.exists() else ""
            booted = "sshd started" in log
            return log + (cloud_init_console([host_key.public_line], server["name"]) if booted else "")

        return Boot(address=ns.address, host_keys=[host_key.public_line], console=console)

    fake.on_boot = on_boot
    try:
        yield guests
    finally:
        starter.shutdown()


def nova_iotune(extra_specs: dict[str, str]) -> DiskSpec | None:
    """What Nova's libvirt driver does with a flavor's quota:disk_* specs: a throttle on the root disk."""
    iops = int(extra_specs.get("quota:disk_total_iops_sec", 0))
    return DiskSpec("root", cap=Throttle(iops=iops)) if iops else None


def test_ovh_nvme_raid0_end_to_end(cloud: list[Guest], fake: FakeOpenStack, os_config: Path,
                                   tmp_path: Path) -> None:
    out = diskbench("run", "--profile", "ovh-nvme-raid0", "--ssh-source", "127.0.0.1", *SMALL, "--format", "json",
                    db=tmp_path / "db.sqlite", env=_env(os_config), timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads(out.stdout)
    assert {(r["host"], r["workload"], r["direction"]) for r in doc["results"]} == {
        ("db01", "randread-4k", "read"), ("db01", "randwrite-4k", "write")}
    assert all(r["iops"] > 0 for r in doc["results"])
    assert "building RAID0" in out.stderr and "/dev/nvme3n1" in out.stderr
    assert fake.empty(), (fake.servers, fake.keypairs, fake.security_groups)
    (guest,) = cloud
    members = sorted(d["name"] for d in doc["run"]["targets"]["db01/nvme:all"]["devices"])
    assert members == [f"nvme{i}n1" for i in range(4)], members  # the article's four devices, all of them
    writes = {d: ops["write"] for d, ops in disk_ops(guest, [f"nvme{i}" for i in range(4)]).items()}
    assert all(w >= 0.15 * sum(writes.values()) > 0 for w in writes.values()), writes  # striped: ~25% each
    active, carrying = md_state(guest, [f"/dev/{m}" for m in members])
    assert active == [] and carrying == [], (active, carrying, out.stderr[-2000:])


QUOTA_IOPS = 150
FLAVOR_WITH_QUOTA = """\
name: os-flavor-quota
defaults: {size: 8m, runtime: 3s, ramp_time: 0s, ioengine: libaio, direct: true, bs: 4k, iodepth: 8}
workloads:
  - {name: rr, rw: randread}
machines:
  - {name: db01, provider: openstack, cloud: fake, flavor: b2-lab, image: Ubuntu 24.04, network: Ext-Net,
     target: {scratch: true}}
"""


def test_a_flavors_disk_quota_bounds_the_root_disk(cloud: list[Guest], fake: FakeOpenStack, os_config: Path,
                                                   tmp_path: Path) -> None:
    """A flavor with quota:disk_total_iops_sec: the guest's root disk is throttled to it (as Nova's
    libvirt driver does), and diskbench attributes the result to the flavor's cap from its extra specs."""
    fake.flavors["b2-lab"] = {**fake.flavors["b2-7"], "id": "b2-lab", "name": "b2-lab",
                              "extra_specs": {"quota:disk_total_iops_sec": str(QUOTA_IOPS)}}
    profile = tmp_path / "quota.yaml"
    profile.write_text(FLAVOR_WITH_QUOTA)
    out = diskbench("run", "--profile", str(profile), "--ssh-source", "127.0.0.1", "--format", "json",
                    db=tmp_path / "db.sqlite", env=_env(os_config), timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    (result,) = json.loads(out.stdout)["results"]
    assert result["iops"] == pytest.approx(QUOTA_IOPS, rel=0.1), result["iops"]
    bound = result["bound"]
    assert (bound["kind"], bound["limit_kind"], bound["limit"]) == ("disk", "disk_iops", QUOTA_IOPS), bound
    assert "flavor b2-lab" in bound["text"], bound["text"]
    assert fake.empty()
