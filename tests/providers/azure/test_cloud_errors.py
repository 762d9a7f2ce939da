"""Azure going wrong mid-run, as users met it (issue 24, item 17): the real SDK against the fake
Resource Manager, ``diskbench`` as a child process, and no SSH: every case ends before a VM answers.

A Resource Manager lost after the resource group exists must say so, never "nothing was changed";
Ctrl-C while VMs are being created says what became of each, not the SDK's text for a canceled
operation; a second Ctrl-C during the group's delete stops waiting and says what is left.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ...conftest import diskbench
from ...fake_arm import SUB, FakeArm
from ...interrupting import Watched, stop_waiting_for_teardown, until
from .test_azure import _skus

PROFILE = """\
name: cloud
defaults: {size: 8M, runtime: 1s, ramp_time: 0s, ioengine: psync}
workloads:
  - {name: rr, rw: randread, bs: 4k}
machines:
"""
VM = """\
  - name: {name}
    region: westeurope
    size: Standard_E8ds_v4
    os_disk: {{type: Premium_LRS, caching: ReadWrite}}
    target: {{dir: /var/tmp}}
"""


@pytest.fixture
def arm() -> Iterator[FakeArm]:
    fake = FakeArm(skus=_skus(), usages=[]).start()
    try:
        yield fake
    finally:
        fake.stop()


def _profile(tmp_path: Path, *machines: str) -> str:
    path = tmp_path / "cloud.yaml"
    path.write_text(PROFILE + "".join(VM.format(name=m) for m in machines))
    return str(path)


def _env(arm: FakeArm) -> dict[str, str]:
    return {"DISKBENCH_ARM_URL": arm.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB}


def _run_id(stderr: str) -> str:
    found = re.search(r"^run (\S+): profile cloud", stderr, re.MULTILINE)
    assert found, stderr
    return found.group(1)


def _cleanup(arm: FakeArm, db: Path, run_id: str) -> None:
    """The command the error named deletes what was left, once Azure answers again."""
    out = diskbench("cleanup", "--provider", "azure", "--run", run_id, db=db, env=_env(arm))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"azure: deleted diskbench-{run_id}"]
    assert arm.groups == {} and arm.resources == {}


@pytest.mark.parametrize("mode", ["reset", "refuse"])
def test_resource_manager_lost_mid_provisioning_names_the_group_and_how_to_delete_it(
        arm: FakeArm, tmp_path: Path, mode: str) -> None:
    arm.outage_after = ("PUT /virtualMachines/vm1$", mode)  # the VM is accepted, then Azure is gone
    db = tmp_path / "db.sqlite"
    out = diskbench("run", "--profile", _profile(tmp_path, "vm1"), "--ssh-source", "127.0.0.1", db=db,
                    env=_env(arm), timeout=120)
    assert out.returncode == 1, out.stderr
    run_id = _run_id(out.stderr)
    group = f"diskbench-{run_id}"
    lost = (f"the connection to Azure Resource Manager broke off ({arm.url})" if mode == "reset" else
            f"cannot reach Azure Resource Manager at {arm.url}")
    check = "" if mode == "reset" else "check the network, a proxy, or DISKBENCH_ARM_URL; "
    assert f"FAILED: vm1: creating Standard_E8ds_v4: {lost} ({check}resource group {group} exists; diskbench " \
           "deletes it as the run ends)" in out.stderr.splitlines()
    assert f"azure: deleting {group} and everything in it" in out.stderr.splitlines()
    assert out.stderr.splitlines()[-1] == (
        f"error: deleting {group}: {lost} ({check}resource group {group} is left behind: delete it with "
        f"`diskbench cleanup --provider azure --run {run_id}` or `az group delete -n {group}`)")
    assert "nothing was changed" not in out.stderr
    assert group.lower() in arm.groups  # it does exist: what the error said
    arm.restore()
    _cleanup(arm, db, run_id)


def test_resource_manager_lost_before_anything_was_created_says_nothing_was_changed(
        arm: FakeArm, tmp_path: Path) -> None:
    arm.outage_after = ("GET /usages$", "refuse")  # the pre-flight's last question, before the group
    out = diskbench("run", "--profile", _profile(tmp_path, "vm1"), "--ssh-source", "127.0.0.1",
                    db=tmp_path / "db.sqlite", env=_env(arm), timeout=120)
    assert out.returncode == 1, out.stderr
    assert out.stderr.splitlines()[-1] == (
        f"error: creating the resource group: cannot reach Azure Resource Manager at {arm.url} (check the "
        "network, a proxy, or DISKBENCH_ARM_URL; nothing was changed)")
    assert arm.groups == {}


def test_ctrl_c_while_creating_vms_says_what_became_of_each(arm: FakeArm, tmp_path: Path) -> None:
    arm.slow_vm = (10**6, 0.01)  # the VMs never finish creating; deleting their group cancels them
    db = tmp_path / "db.sqlite"
    with Watched("run", "--profile", _profile(tmp_path, "vm1", "vm2"), "--ssh-source", "127.0.0.1", db=db,
                 env=_env(arm)) as run:
        until(lambda: {"vm1", "vm2"} <= {r.path.rsplit("/", 1)[-1] for r in list(arm.requests) if r.method == "PUT"})
        run.ctrl_c()
        assert run.finish() == 130, run.stderr
    group = f"diskbench-{_run_id(run.stderr)}"
    for vm in ("vm1", "vm2"):
        assert f"FAILED: {vm}: creation stopped (Ctrl-C); deleted with resource group {group}" in run.lines
    assert "invalid status" not in run.stderr and "Azure said" not in run.stderr
    assert f"azure: deleted {group}" in run.lines
    assert arm.groups == {} and arm.resources == {}


def test_an_operation_azure_cancels_by_itself_is_said_as_such(arm: FakeArm, tmp_path: Path) -> None:
    """Not a Ctrl-C: the VM vanishes while it is created (someone deleted it), and Azure cancels."""
    arm.slow_vm = (10**6, 0.01)
    out: list[str] = []
    with Watched("run", "--profile", _profile(tmp_path, "vm1"), "--ssh-source", "127.0.0.1",
                 db=tmp_path / "db.sqlite", env=_env(arm)) as run:
        until(lambda: any(r.method == "PUT" and r.path.endswith("/vm1") for r in list(arm.requests)))
        vm = next(k for k in list(arm.resources) if k.endswith("/virtualmachines/vm1"))
        del arm.resources[vm]
        assert run.finish() == 1, run.stderr
        out = run.lines
    group = f"diskbench-{_run_id(run.stderr)}"
    assert f"FAILED: vm1: creating Standard_E8ds_v4: Azure ended the operation as failed or canceled, without a " \
           f"reason (see the Azure activity log of the resource group; resource group {group} exists; diskbench " \
           "deletes it as the run ends)" in out
    assert "invalid status" not in run.stderr and f"azure: deleted {group}" in out
    assert arm.groups == {}


def test_second_ctrl_c_stops_waiting_for_the_group_delete_and_says_what_is_left(
        arm: FakeArm, tmp_path: Path) -> None:
    arm.slow_vm = (10**6, 0.01)
    arm.delete_polls = 10**9  # the group's delete never completes
    db = tmp_path / "db.sqlite"
    with Watched("run", "--profile", _profile(tmp_path, "vm1"), "--ssh-source", "127.0.0.1", db=db,
                 env=_env(arm)) as run:
        until(lambda: any(r.method == "PUT" and r.path.endswith("/vm1") for r in list(arm.requests)))
        run.ctrl_c()  # stop the run: the teardown starts deleting the group
        run.wait_for("azure: deleting diskbench-")
        stop_waiting_for_teardown(run, lambda: any(r.method == "DELETE" for r in list(arm.requests)))
    run_id = _run_id(run.stderr)
    group = f"diskbench-{run_id}"
    assert "warning: teardown in progress: diskbench is deleting what it created; press Ctrl-C again to stop " \
           "waiting (what is left is listed, with the command that deletes it)" in run.lines
    left = [f"azure: stopped waiting; left in Azure: resource group {group} (id /subscriptions/{SUB}/resourceGroups/"
            f"{group}) and everything in it",
            f"azure: delete it with `diskbench cleanup --provider azure --run {run_id}` (or `az group delete -n "
            f"{group}`)"]
    after = run.lines[run.lines.index(f"azure: deleting {group} and everything in it"):]
    assert after[after.index(left[0]):][:2] == left  # (other threads' lines may come between)
    assert run.lines[-1].startswith(f"error: interrupted: run {run_id}")
    assert group.lower() in arm.groups
    arm.delete_polls = 1
    _cleanup(arm, db, run_id)
