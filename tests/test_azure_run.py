"""The whole `diskbench run` on Azure machines: real SDK, fake Resource Manager, real sshd.

A VM the fake creates "boots" as a lab host: the host key diskbench handed over by cloud-init
becomes the host's sshd key, and the run's login key is authorized for azureuser.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from diskbench.store import Store

from .conftest import diskbench, needs_fio
from .fake_arm import SUB, FakeArm
from .lab import Lab
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
    arm = FakeArm(skus=_skus(), usages=[], vm_addresses=[host.address])

    def boot(vm: dict[str, Any], address: str) -> None:
        target = next(h for h in lab.hosts if h.address == address)
        data = yaml.safe_load(base64.b64decode(vm["properties"]["osProfile"]["customData"]))
        keys = vm["properties"]["osProfile"]["linuxConfiguration"]["ssh"]["publicKeys"]
        with open(lab.authorized_keys, "a") as fh:
            fh.write(keys[0]["keyData"] + "\n")
        target.install_host_key(data["ssh_keys"]["ed25519_private"])

    arm.on_vm_created = boot
    arm.start()
    try:
        yield arm, lab
    finally:
        arm.stop()


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
    assert arm.groups == {} and arm.resources == {}  # nothing left behind
    puts = {r.path.rsplit("/", 2)[-2]: r.body for r in arm.requests if r.method == "PUT" and "/providers/" in r.path}
    assert set(puts) == {"networkSecurityGroups", "virtualNetworks", "publicIPAddresses", "networkInterfaces",
                         "virtualMachines"}
    rule = puts["networkSecurityGroups"]["properties"]["securityRules"][0]["properties"]
    assert rule["sourceAddressPrefix"] == "127.0.0.1/32"
    assert all(b["tags"]["diskbench-run"] == doc["run"]["id"] for b in puts.values())
    vm = puts["virtualMachines"]["properties"]
    assert vm["storageProfile"]["osDisk"]["caching"] == "ReadWrite"
    assert Store(tmp_path / "db.sqlite").get_run("last")["status"] == "completed"


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
