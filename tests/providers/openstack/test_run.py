"""``diskbench run`` on OpenStack: the real openstacksdk, the fake cloud, and a lab host as the server.

A server the fake creates "boots" as a lab host (real sshd in a network namespace): its host
key is printed on the console the way cloud-init prints it, and the run's keypair is what it
authorizes. The run provisions, pins the console's key, benchmarks, stores, and always deletes.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from diskbench.expand import build_plan
from diskbench.profile import load_profile
from diskbench.store import Store

from ...conftest import diskbench, finish, needs_fio, start_diskbench, wait_for_job
from ...fake_openstack import Boot, FakeOpenStack
from ...lab import Lab

pytestmark = needs_fio

PROFILE = """\
name: os
defaults: {size: 8M, runtime: 1s, ramp_time: 0s, ioengine: psync}
workloads:
  - {name: rr, rw: randread, bs: 4k}
machines:
  - name: db01
    provider: openstack
    cloud: fake
    flavor: i1-180
    image: Ubuntu 24.04
    network: Ext-Net
    user: root
    price_per_hour: 2.5
    target: {dir: /var/tmp}
"""


@pytest.fixture
def cloud(fake: FakeOpenStack, os_config: Path, lab: Lab) -> Iterator[tuple[FakeOpenStack, Lab]]:
    def on_boot(server: dict[str, Any]) -> Boot:
        host = lab.add_host(trusted=False)  # only the console vouches for its key
        with open(lab.authorized_keys, "a") as fh:
            fh.write(fake.keypairs[server["key_name"]]["public_key"] + "\n")  # cloud-init's part
        return Boot(address=host.address, host_keys=[(host.home / "ssh_host_ed25519_key.pub").read_text().strip()])

    fake.on_boot = on_boot
    yield fake, lab


def _env(os_config: Path) -> dict[str, str]:
    return {"OS_CLIENT_CONFIG_FILE": str(os_config), "OS_CLIENT_SECURE_FILE": str(os_config.parent / "none.yaml"),
            "HOME": str(os_config.parent), "XDG_CONFIG_HOME": str(os_config.parent / ".config")}


def test_run_provisions_pins_the_console_key_benchmarks_and_deletes(cloud: tuple[FakeOpenStack, Lab],
                                                                     os_config: Path, tmp_path: Path) -> None:
    fake, lab = cloud
    (tmp_path / "os.yaml").write_text(PROFILE)
    out = diskbench("run", "--profile", str(tmp_path / "os.yaml"), "--ssh-source", "127.0.0.1", "--format", "json",
                    db=tmp_path / "db.sqlite", env=_env(os_config))
    assert out.returncode == 0, out.stderr
    (result,) = json.loads(out.stdout)["results"]
    assert result["host"] == "db01" and result["ios"] > 0
    assert "db01: creating a i1-180 server" in out.stderr
    assert fake.empty(), (fake.servers, fake.keypairs, fake.security_groups, fake.volumes)
    rules = [r for req in fake.requests if req.method == "POST" and "security-group-rules" in req.path
             for r in [req.body["security_group_rule"]]]
    assert [(r["port_range_min"], r["remote_ip_prefix"]) for r in rules] == [(22, "127.0.0.1/32")]
    run = Store(tmp_path / "db.sqlite").get_run("last")
    assert run["options"]["host_keys"] == {lab.hosts[0].address: lab.hosts[0].host_key_fingerprint()}
    assert "i1-180" in run["facts"]["openstack_flavors"]


def test_plan_shows_flavors_and_cost_and_preflight_problems_create_nothing(
        cloud: tuple[FakeOpenStack, Lab], os_config: Path, tmp_path: Path) -> None:
    fake, _ = cloud
    (tmp_path / "os.yaml").write_text(PROFILE)
    plan = diskbench("plan", "--profile", str(tmp_path / "os.yaml"), db=tmp_path / "db.sqlite")
    assert plan.returncode == 0 and "i1-180" in plan.stdout and "2.5" not in plan.stdout.split("estimate")[0]
    assert "estimate USD" in plan.stdout
    (tmp_path / "bad.yaml").write_text(PROFILE.replace("flavor: i1-180", "flavor: x9-999"))
    bad = diskbench("run", "--profile", str(tmp_path / "bad.yaml"), "--ssh-source", "127.0.0.1",
                    db=tmp_path / "db.sqlite", env=_env(os_config))
    assert bad.returncode == 2 and "pre-flight: db01" in bad.stderr and "x9-999" in bad.stderr
    assert not [r for r in fake.requests if r.method == "POST" and "/servers" in r.path]
    assert Store(tmp_path / "db.sqlite").list_runs() == []


def test_plan_of_the_bundled_seed_profile() -> None:
    plan = build_plan(load_profile("ovh-nvme-raid0"))
    assert [(j.machine, j.workload.name, j.target_label) for j in plan.units] == [
        ("db01", "randread-4k", "nvme:all"), ("db01", "randwrite-4k", "nvme:all")]


@pytest.mark.parametrize("stage", ["provisioning", "running"])
def test_ctrl_c_at_each_stage_leaves_nothing(cloud: tuple[FakeOpenStack, Lab], os_config: Path, tmp_path: Path,
                                             stage: str) -> None:
    fake, _ = cloud
    db = tmp_path / "db.sqlite"
    if stage == "provisioning":
        fake.build_polls = 10**6  # the server never leaves BUILD
    (tmp_path / "os.yaml").write_text(PROFILE.replace("runtime: 1s", "runtime: 30s"))
    proc = start_diskbench("run", "--profile", str(tmp_path / "os.yaml"), "--ssh-source", "127.0.0.1", db=db,
                           env=_env(os_config))
    if stage == "provisioning":
        import time

        deadline = time.monotonic() + 60
        while not fake.servers and time.monotonic() < deadline:
            time.sleep(0.1)
        assert fake.servers
    else:
        wait_for_job(db, "rr")
    code, stderr = finish(proc, signal.SIGINT, timeout=120)
    assert code == 130, stderr
    assert fake.empty(), (fake.servers, fake.keypairs, fake.security_groups, fake.volumes)
    assert subprocess.run(["pgrep", "-f", "fio.*diskbench"], capture_output=True).returncode == 1
