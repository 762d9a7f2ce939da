"""The OVHcloud article end to end on a real kernel: fake OpenStack, real openstacksdk, a QEMU guest.

The server the fake creates boots as an OpenStack-shaped guest (four NVMe devices, the i1-180's
passthrough disks) in a lab network namespace, answering SSH at its address on port 22 with the
host key the test generated; its console is the guest's serial log, to which cloud-init's key
blocks are added once sshd runs, so diskbench pins the key from the console as on a real cloud.
`diskbench run --profile ovh-nvme-raid0` then builds the article's RAID0 over the four devices,
formats it xfs on /mnt, runs both command lines (cut to seconds and four jobs) and deletes the
server; the guest is left with no array and no superblocks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ...conftest import diskbench
from ...fake_openstack import Boot, FakeOpenStack, cloud_init_console
from ...guestlab.guest import Guest, GuestLab, KeyPair
from ...guestlab.spec import openstack
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
        spec = openstack(name).with_(user="ubuntu", memory_mib=640)
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
    assert "active" not in guest.check("cat /proc/mdstat")
    rc, text, _ = guest.run("mdadm --examine /dev/nvme0n1")
    assert rc != 0 and "Magic" not in text
