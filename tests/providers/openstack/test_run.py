"""``diskbench run`` on OpenStack: the real openstacksdk, the fake cloud, and a lab host as the server.

A server the fake creates "boots" as a lab host (real sshd in a network namespace): its host
key is printed on the console the way cloud-init prints it, and the run's keypair is what it
authorizes. The run provisions, pins the console's key, benchmarks, stores, and always deletes.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import datetime
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


OS_VM = ("provider: openstack, cloud: fake, flavor: b2-7, image: Ubuntu 24.04, network: Ext-Net, user: root, "
         "price_per_hour: 0.5, target: {scratch: true}")  # what both machines of TWO share
TWO = f"""\
name: two
defaults: {{size: 8M, runtime: 2s, ramp_time: 0s, ioengine: psync}}
workloads:
  - {{name: rr, rw: randread, bs: 4k}}
  - {{name: sr, rw: read, bs: 128k}}
  - {{name: rr64, rw: randread, bs: 64k}}
machines:
  - {{name: short, {OS_VM}, volumes: [{{size_gb: 10, count: 2}}], workloads: [rr]}}
  - {{name: long, {OS_VM}, volumes: [{{size_gb: 10}}]}}
"""


@pytest.fixture
def two(fake: FakeOpenStack, os_config: Path, lab: Lab) -> Iterator[tuple[FakeOpenStack, dict[str, str]]]:
    """Each server boots as a lab host of its own; the second item maps every server's and volume's id to
    ``kind machine`` (filled as the run creates them), to read the fake's record of deletes by."""
    fake.build_polls, fake.volume_polls, fake.delete_polls = 1, 0, 0  # the run's 3 s polls find each step done
    names: dict[str, str] = {}
    booting = threading.Lock()  # the two servers boot at once; the lab adds one host at a time

    def on_boot(server: dict[str, Any]) -> Boot:
        with booting:
            host = lab.add_host(trusted=False)
            with open(lab.authorized_keys, "a") as fh:
                fh.write(fake.keypairs[server["key_name"]]["public_key"] + "\n")
        names[server["id"]] = f"server {server['name'].rsplit('-', 1)[-1]}"
        return Boot(address=host.address, console_polls=0,
                    host_keys=[(host.home / "ssh_host_ed25519_key.pub").read_text().strip()])

    fake.on_boot = on_boot
    yield fake, names


def _deletes(fake: FakeOpenStack, names: dict[str, str]) -> list[tuple[str, float]]:
    """Every DELETE the fake received, in order: what it deleted (``server short``, ``volume long``,
    ``keypair``, ``security group``) and when."""
    for attach in fake.calls("POST", r"/os-volume_attachments$"):
        server = attach.path.split("/servers/")[1].split("/")[0]
        names[attach.body["volumeAttachment"]["volumeId"]] = names[server].replace("server", "volume")
    out = []
    for r in fake.calls("DELETE", r"."):
        last = r.path.rsplit("/", 1)[-1]
        kind = "keypair" if "/os-keypairs/" in r.path else "security group" if "/security-groups/" in r.path \
            else names[last]
        out.append((kind, r.at))
    return out


def _journal(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "openstack-journal.jsonl").read_text().splitlines()]


def test_a_server_is_deleted_when_its_machine_s_last_job_ends(two: tuple[FakeOpenStack, dict[str, str]],
                                                              os_config: Path, tmp_path: Path) -> None:
    """One job on short, three on long: short's server and volumes are deleted while long still runs its
    jobs, the run's keypair and security group only after long's; the run records each machine's
    VM-minutes and money from its create request to its release."""
    fake, names = two
    (tmp_path / "two.yaml").write_text(TWO)
    out = diskbench("run", "--profile", str(tmp_path / "two.yaml"), "--ssh-source", "127.0.0.1", "--format", "json",
                    db=tmp_path / "db.sqlite", env=_env(os_config), timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    jobs = Store(tmp_path / "db.sqlite").get_jobs(doc["run"]["id"])
    assert sorted(j["host"] for j in jobs) == ["long", "long", "long", "short"]
    long_done = max(datetime.fromisoformat(j["finished"]).timestamp() for j in jobs if j["host"] == "long")
    deletes = _deletes(fake, names)
    assert [kind for kind, _ in deletes] == ["server short", "volume short", "volume short", "server long",
                                             "volume long", "keypair", "security group"]
    assert all(at < long_done for _, at in deletes[:3])  # released while long still ran its jobs
    assert all(at >= long_done for _, at in deletes[3:])  # the rest, shared things too, at the end
    assert fake.empty(), (fake.servers, fake.keypairs, fake.security_groups, fake.volumes)
    journal = _journal(tmp_path)
    assert [(e["event"], e.get("machine"), len(e.get("ids", []))) for e in journal[2:]] == [
        ("released", "short", 3), ("released", "long", 2), ("deleted", None, 0)]  # after two "creating"
    uses = {u["machine"]: u for u in doc["run"]["machines"]}
    for name, use in uses.items():
        times = [datetime.fromisoformat(use[k]).timestamp()
                 for k in ("requested", "ready", "last_unit_ended", "released")]
        assert times == sorted(times), (name, use)
        assert use["vm_minutes"] == pytest.approx((times[3] - times[0]) / 60, abs=0.02)
        assert use["usd"] == pytest.approx(use["vm_minutes"] / 60 * 0.5, abs=1e-4)
    assert datetime.fromisoformat(uses["short"]["released"]).timestamp() < long_done
    assert uses["short"]["vm_minutes"] < uses["long"]["vm_minutes"]
    assert "short: its last job is done; deleting its server and volumes" in out.stderr
    assert "long: its last job is done" in out.stderr  # each machine goes as its part ends


def test_a_release_that_fails_is_said_and_left_to_the_teardown(two: tuple[FakeOpenStack, dict[str, str]],
                                                               os_config: Path, tmp_path: Path) -> None:
    """The cloud fails short's release (its listing answers 500): the run goes on, says so, and the teardown
    at the end deletes short's server and volumes; its minutes count until then."""
    fake, names = two
    fake.faults["GET /servers/detail$"] = [500, {"computeFault": {"code": 500, "message": "nova-api is down"}}, 1]
    (tmp_path / "two.yaml").write_text(TWO)
    out = diskbench("run", "--profile", str(tmp_path / "two.yaml"), "--ssh-source", "127.0.0.1", "--format", "json",
                    db=tmp_path / "db.sqlite", env=_env(os_config), timeout=300)
    assert out.returncode == 0, out.stderr
    assert "short: listing its server and volumes: OpenStack said 500: nova-api is down (see the cloud's " \
           "dashboard or `openstack` CLI for more); the teardown at the end of the run deletes what is left of " \
           "short" in out.stderr.splitlines(), out.stderr
    doc = json.loads(out.stdout)
    jobs = Store(tmp_path / "db.sqlite").get_jobs(doc["run"]["id"])
    long_done = max(datetime.fromisoformat(j["finished"]).timestamp() for j in jobs if j["host"] == "long")
    deletes = _deletes(fake, names)
    assert [kind for kind, _ in deletes] == ["server long", "volume long", "server short", "volume short",
                                             "volume short", "keypair", "security group"]
    assert all(at >= long_done for _, at in deletes)
    assert fake.empty(), (fake.servers, fake.keypairs, fake.security_groups, fake.volumes)
    assert [e.get("machine") for e in _journal(tmp_path) if e["event"] == "released"] == ["long"]
    uses = {u["machine"]: u for u in doc["run"]["machines"]}
    assert datetime.fromisoformat(uses["short"]["released"]).timestamp() >= long_done


def test_ctrl_c_after_a_release_deletes_the_rest_and_leaves_the_released_alone(
        two: tuple[FakeOpenStack, dict[str, str]], os_config: Path, tmp_path: Path) -> None:
    """short is released, then Ctrl-C while long runs: the teardown deletes long's server and volume and the
    run's keypair and security group, and never names short's server or volumes again."""
    fake, names = two
    db = tmp_path / "db.sqlite"
    (tmp_path / "two.yaml").write_text(TWO.replace("runtime: 2s", "runtime: 60s").replace(
        "  - {name: rr, rw: randread, bs: 4k}", "  - {name: rr, rw: randread, bs: 4k, runtime: 1s}"))
    proc = start_diskbench("run", "--profile", str(tmp_path / "two.yaml"), "--ssh-source", "127.0.0.1", db=db,
                           env=_env(os_config))
    deadline = time.monotonic() + 120
    while not any(e["event"] == "released" for e in (_journal(tmp_path) if (tmp_path / "openstack-journal.jsonl")
                                                      .exists() else [])):
        assert time.monotonic() < deadline and proc.poll() is None, "short was never released"
        time.sleep(0.2)
    stopped = time.time()
    (released,) = [e for e in _journal(tmp_path) if e["event"] == "released"]
    code, stderr = finish(proc, signal.SIGINT, timeout=120)
    assert code == 130, stderr
    assert fake.empty(), (fake.servers, fake.keypairs, fake.security_groups, fake.volumes)
    assert [kind for kind, _ in _deletes(fake, names)] == [
        "server short", "volume short", "volume short", "server long", "volume long", "keypair", "security group"]
    assert [f"{r.method} {r.path}" for r in fake.requests
            if r.at >= stopped and any(i in r.path for i in released["ids"])] == []
    assert _journal(tmp_path)[-1]["event"] == "deleted"
    assert "short: its last job is done" in stderr and "long: its last job is done" not in stderr
    assert re.search(r"^short: [0-9.]+ VM-min, \$[0-9.]+; .* released ", stderr, re.MULTILINE), stderr
