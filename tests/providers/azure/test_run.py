"""The whole `diskbench run` on Azure machines: real SDK, fake Resource Manager, real sshd.

A VM the fake creates "boots" as a lab host: the host key diskbench handed over by cloud-init
becomes the host's sshd key, and the run's login key is authorized for azureuser.
"""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from diskbench.profile import parse_profile
from diskbench.providers.azure.pricing import load_prices, machine_hourly
from diskbench.store import Store

from ...conftest import diskbench, finish, needs_fio, start_diskbench, wait_for_job
from ...fake_arm import SUB, FakeArm
from ...lab import Lab
from .test_azure import _skus

pytestmark = needs_fio

PROFILE = """\
name: cloud
defaults: {size: 8M, runtime: 1s, ramp_time: 0s, ioengine: psync}
workloads:
  - {name: rr, rw: randread, bs: 4k}
machines:
  - name: vm1
    region: westeurope
    size: Standard_E8ds_v4
    os_disk: {type: Premium_LRS, caching: ReadWrite}
    target: {dir: /var/tmp}
"""


@pytest.fixture
def cloud(lab: Lab) -> Iterator[tuple[FakeArm, Lab]]:
    lab.add_sudo_user("azureuser")
    host = lab.add_host()
    # like Ubuntu's: `cloud-init status --wait` returns once the first boot is done (here: 2 s after boot)
    marker = lab.shared / "cloud-init-done"
    host.add_command("cloud-init", f'while [ ! -e {marker} ]; do sleep 0.2; done; echo "status: done"\n')
    arm = FakeArm(skus=_skus(), usages=[], vm_addresses=[host.address])

    def boot(vm: dict[str, Any], address: str) -> None:
        target = next(h for h in lab.hosts if h.address == address)
        data = yaml.safe_load(base64.b64decode(vm["properties"]["osProfile"]["customData"]))
        keys = vm["properties"]["osProfile"]["linuxConfiguration"]["ssh"]["publicKeys"]
        with open(lab.authorized_keys, "a") as fh:
            fh.write(keys[0]["keyData"] + "\n")
        target.install_host_key(data["ssh_keys"]["ed25519_private"])
        assert data["packages"] == ["fio", "mdadm", "nvme-cli", "xfsprogs"]
        threading.Timer(2.0, marker.touch).start()

    arm.on_vm_created = boot
    arm.start()
    try:
        yield arm, lab
    finally:
        arm.stop()


def lab_shared(cloud: tuple[FakeArm, Lab]) -> Path:
    return cloud[1].shared


def _run(arm: FakeArm, tmp_path: Path, *args: str) -> Any:
    (tmp_path / "cloud.yaml").write_text(PROFILE)
    env = {"DISKBENCH_ARM_URL": arm.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB}
    return diskbench("run", "--profile", str(tmp_path / "cloud.yaml"), "--ssh-source", "127.0.0.1", *args,
                     db=tmp_path / "db.sqlite", env=env, timeout=300)


def test_run_provisions_benchmarks_and_tears_down(cloud: tuple[FakeArm, Lab], tmp_path: Path) -> None:
    arm, _ = cloud
    out = _run(arm, tmp_path, "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [(r["host"], r["workload"]) for r in doc["results"]] == [("vm1", "rr")]
    assert "azure: deleted diskbench-" in out.stderr
    assert out.stderr.index("waiting for SSH at") < out.stderr.index("[1/1] rr on dir:/var/tmp @ vm1: started")
    # fio started only after cloud-init said it was done
    started = Store(tmp_path / "db.sqlite").get_jobs(json.loads(out.stdout)["run"]["id"])[0]["started"]
    assert datetime.fromisoformat(started).timestamp() >= (lab_shared(cloud) / "cloud-init-done").stat().st_mtime - 1
    assert arm.groups == {} and arm.resources == {}  # nothing left behind
    puts = {r.path.rsplit("/", 2)[-2]: r.body for r in arm.requests if r.method == "PUT" and "/providers/" in r.path}
    assert set(puts) == {"networkSecurityGroups", "virtualNetworks", "publicIPAddresses", "networkInterfaces",
                         "virtualMachines"}
    rule = puts["networkSecurityGroups"]["properties"]["securityRules"][0]["properties"]
    assert rule["sourceAddressPrefix"] == "127.0.0.1/32"
    assert all(b["tags"]["diskbench-run"] == doc["run"]["id"] for b in puts.values())
    vm = puts["virtualMachines"]["properties"]
    assert vm["storageProfile"]["osDisk"]["caching"] == "ReadWrite"
    run = Store(tmp_path / "db.sqlite").get_run("last")
    assert run["status"] == "completed"
    assert run["facts"]["azure_sizes"]["Standard_E8ds_v4"]["uncached_iops"] == 12800  # saved with the run


def test_allocation_failure_is_explained_and_torn_down(cloud: tuple[FakeArm, Lab], tmp_path: Path) -> None:
    arm, _ = cloud
    arm.fail_vm_after_polls = {"code": "AllocationFailed", "message": "Allocation failed. Please try again later."}
    out = _run(arm, tmp_path)
    assert out.returncode == 1
    assert "Azure said AllocationFailed" in out.stderr and "try another region or later" in out.stderr
    assert "Traceback" not in out.stderr
    assert arm.groups == {} and arm.resources == {}


def test_quota_problem_creates_nothing(cloud: tuple[FakeArm, Lab], tmp_path: Path) -> None:
    arm, _ = cloud
    arm.usages = [{"name": {"value": "standardEDSv4Family", "localizedValue": "EDSv4"}, "currentValue": 20,
                   "limit": 24, "unit": "Count"}]
    out = _run(arm, tmp_path)
    assert out.returncode == 2
    assert "standardEDSv4Family vCPUs: 8 needed, 4 of 24 free" in out.stderr
    assert not [r for r in arm.requests if r.method == "PUT"]


def _start(arm: FakeArm, tmp_path: Path) -> subprocess.Popen[str]:
    (tmp_path / "cloud.yaml").write_text(PROFILE.replace("runtime: 1s", "runtime: 20s"))
    env = {"DISKBENCH_ARM_URL": arm.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB}
    return start_diskbench("run", "--profile", str(tmp_path / "cloud.yaml"), "--ssh-source", "127.0.0.1",
                           db=tmp_path / "db.sqlite", env=env)


def _until(check: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


@pytest.mark.parametrize("stage", ["provisioning", "waiting for SSH", "running", "running (SIGTERM)"])
def test_ctrl_c_at_every_stage_leaves_nothing(cloud: tuple[FakeArm, Lab], tmp_path: Path, stage: str) -> None:
    arm, lab = cloud
    if stage == "provisioning":
        arm.slow_vm = (2000, 0.02)  # the VM takes long to create; the network does not
    if stage == "waiting for SSH":
        lab.hosts[0].kill_sshd()
        arm.on_vm_created = lambda vm, address: None  # the VM never answers SSH
    proc = _start(arm, tmp_path)
    if stage == "provisioning":
        _until(lambda: any(r.method == "PUT" and r.path.endswith("/vm1") for r in arm.requests))
    elif stage == "waiting for SSH":
        _until(lambda: any(r.path.endswith("/vm1-ip") and r.method == "GET" for r in arm.requests))
        time.sleep(1)
    else:
        wait_for_job(tmp_path / "db.sqlite", "rr")
        time.sleep(1)
    code, stderr = finish(proc, signal.SIGTERM if "SIGTERM" in stage else signal.SIGINT)
    assert code == 130, stderr
    assert "Traceback" not in stderr and "azure: deleted diskbench-" in stderr
    assert arm.groups == {} and arm.resources == {}


def test_throttling_is_retried(cloud: tuple[FakeArm, Lab], tmp_path: Path) -> None:
    arm, _ = cloud
    arm.faults["PUT /virtualNetworks/"] = [429, {"error": {"code": "TooManyRequests", "message": "slow down"}}, 1]
    out = _run(arm, tmp_path)
    assert out.returncode == 0, out.stderr
    assert len([r for r in arm.requests if r.method == "PUT" and "/virtualNetworks/" in r.path]) == 2


@pytest.mark.parametrize(("code", "remedy"), [
    ("SkuNotAvailable", "try another region or zone"),
    ("InvalidParameter", "fix it and run again"),
    ("OperationNotAllowed", "request more vCPU quota"),
])
def test_azure_errors_are_explained(cloud: tuple[FakeArm, Lab], tmp_path: Path, code: str, remedy: str) -> None:
    arm, _ = cloud
    arm.faults["PUT /virtualMachines/"] = [400, {"error": {"code": code, "message": f"{code} happened"}}]
    out = _run(arm, tmp_path)
    assert out.returncode == 1
    assert f"Azure said {code}: {code} happened" in out.stderr and remedy in out.stderr
    assert arm.groups == {}


def test_the_fake_applies_azures_rules(cloud: tuple[FakeArm, Lab], tmp_path: Path) -> None:
    """What pre-flight prevents, the fake (like Azure) refuses: the tests cannot pass by accident."""
    from azure.core.exceptions import HttpResponseError

    from diskbench.profile import parse_profile
    from diskbench.providers.azure.session import connect
    from diskbench.providers.azure.vmspec import KeyPair, vm_body

    arm, _ = cloud
    session = connect(SUB, base_url=arm.url, token="t", polling_interval=0)
    session.resources.resource_groups.create_or_update("rg", {"location": "westeurope"})
    key = KeyPair.generate()
    cases = {
        "Standard_E8_v4, os_disk: {type: Premium_LRS}": "is not supported for VM size",
        "Standard_E8ds_v4, os_disk: {ephemeral: CacheDisk, caching: ReadWrite}": "requires caching ReadOnly",
        "Standard_L8s_v2, os_disk: {ephemeral: CacheDisk, caching: ReadOnly}":
            "Placement of type 'CacheDisk' is not supported",
        "Standard_E99_v9": "is not available in location",
    }
    for spec, message in cases.items():
        size, _, rest = spec.partition(", ")
        machine = parse_profile("name: p\nworkloads:\n  - {name: a, rw: read}\nmachines:\n"
                                f"  - {{name: m, region: westeurope, size: {size}, target: temp"
                                f"{', ' + rest if rest else ''}}}\n").machines[0]
        body = vm_body(machine, tags={}, nic_id="/nic", login=key, host_key=key)
        with pytest.raises(HttpResponseError) as info:
            session.compute.virtual_machines.begin_create_or_update("rg", "m", body).result()
        assert message in str(info.value), (spec, str(info.value))


def test_unreachable_azure_is_one_line_and_records_no_run(tmp_path: Path) -> None:
    (tmp_path / "cloud.yaml").write_text(PROFILE)
    env = {"DISKBENCH_ARM_URL": "http://127.0.0.1:9", "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB}
    out = diskbench("run", "--profile", str(tmp_path / "cloud.yaml"), "--ssh-source", "127.0.0.1",
                    db=tmp_path / "db.sqlite", env=env)
    assert out.returncode == 1
    assert out.stderr.splitlines()[-1] == (
        "error: pre-flight against the subscription: cannot reach Azure Resource Manager at "
        "http://127.0.0.1:9 (check the network, a proxy, or DISKBENCH_ARM_URL; nothing was changed)")
    assert Store(tmp_path / "db.sqlite").list_runs() == []
    for args in (["cleanup"], ["sizes", "--refresh"]):
        other = diskbench(*args, db=tmp_path / "db.sqlite", env=env)
        assert other.returncode == 1 and "cannot reach Azure Resource Manager" in other.stderr


TWO = """\
name: two
defaults: {size: 8M, runtime: 2s, ramp_time: 0s, ioengine: psync}
workloads:
  - {name: rr, rw: randread, bs: 4k}
  - {name: sr, rw: read, bs: 128k}
  - {name: rr64, rw: randread, bs: 64k}
machines:
  - {name: short, region: westeurope, size: Standard_E8ds_v4, target: {scratch: true}, workloads: [rr]}
  - {name: long, region: westeurope, size: Standard_E8ds_v4, target: {scratch: true}}
"""


def test_a_machine_is_released_when_its_last_job_ends(cloud: tuple[FakeArm, Lab], tmp_path: Path) -> None:
    """Two VMs, one job and three: the short one's VM is deleted while the long one still runs, and the
    run records (and shows) each machine's VM-minutes and money, from its create request to its delete."""
    arm, lab = cloud
    second = lab.add_host()
    marker = lab.shared / "cloud-init-done"
    second.add_command("cloud-init", f'while [ ! -e {marker} ]; do sleep 0.2; done; echo "status: done"\n')
    arm.vm_addresses.append(second.address)
    (tmp_path / "two.yaml").write_text(TWO)
    env = {"DISKBENCH_ARM_URL": arm.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB}
    out = diskbench("run", "--profile", str(tmp_path / "two.yaml"), "--ssh-source", "127.0.0.1", "--format", "json",
                    db=tmp_path / "db.sqlite", env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    jobs = Store(tmp_path / "db.sqlite").get_jobs(doc["run"]["id"])
    assert sorted(j["host"] for j in jobs) == ["long", "long", "long", "short"]
    long_done = max(datetime.fromisoformat(j["finished"]).timestamp() for j in jobs if j["host"] == "long")
    deletes = {r.path.rsplit("/", 1)[-1]: r.at for r in arm.requests
               if r.method == "DELETE" and "/virtualMachines/" in r.path}
    assert deletes["short"] < long_done  # released while the long one still ran its jobs
    assert deletes["long"] >= long_done
    assert arm.groups == {} and arm.resources == {}  # and the group's delete took everything else
    uses = {u["machine"]: u for u in doc["run"]["machines"]}
    machine = parse_profile(TWO).machines[0]
    hourly, missing = machine_hourly(machine, load_prices()["regions"]["westeurope"])  # the table plan uses
    assert hourly is not None and hourly > 0.692 and not missing  # the VM's price and its OS disk's
    assert set(uses) == {"short", "long"} and "machine_use" not in doc["run"]["host"]
    for name, use in uses.items():
        times = [datetime.fromisoformat(use[k]).timestamp()
                 for k in ("requested", "ready", "last_unit_ended", "released")]
        assert times == sorted(times), (name, use)
        assert use["vm_minutes"] == pytest.approx((times[3] - times[0]) / 60, abs=0.02)
        assert use["usd"] == pytest.approx(use["vm_minutes"] / 60 * hourly, abs=1e-4)
    assert uses["short"]["vm_minutes"] < uses["long"]["vm_minutes"]
    assert datetime.fromisoformat(uses["short"]["released"]).timestamp() < long_done
    assert "short: its last job is done; deleting its VM" in out.stderr
    lines = [line for line in out.stderr.splitlines() if " VM-min, $" in line]
    assert sorted(line.split(":")[0] for line in lines) == ["long", "short"], out.stderr
    assert all(len(line) <= 80 for line in lines), lines
    assert "VM-minutes: " in out.stderr and " in all, $" in out.stderr
