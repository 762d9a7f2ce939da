"""A whole Azure run (fake ARM, real SDK, real sshd, real fio) attributes its results; explain says why.

fio's own ``rate_iops`` stands in for the P4 OS disk's 120-IOPS cap here (the guest tests in
test_lab_runs.py have QEMU enforce the caps); what this proves is the path: the provider's limits
for the machine's target, the bound stored with the result, and every format and ``explain`` showing it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...conftest import diskbench, needs_fio
from ...fake_arm import SUB, FakeArm
from ...lab import Lab
from .test_run import cloud  # noqa: F401 - the fixture

pytestmark = needs_fio

PROFILE = """\
name: cloud
defaults: {size: 8M, runtime: 4s, ramp_time: 1s, ioengine: psync, time_based: true}
workloads:
  - {name: capped, rw: randwrite, bs: 8k, numjobs: 8, rate_iops: 15}  # 8 x 15 = the P4's 120
machines:
  - name: vm1
    region: westeurope
    size: Standard_E8ds_v4
    os_disk: {type: Premium_LRS, size_gb: 32, caching: None}
    target: scratch
"""


def test_the_result_carries_its_bound_and_explain_says_why(cloud: tuple[FakeArm, Lab],  # noqa: F811
                                                           tmp_path: Path) -> None:
    arm, _ = cloud
    (tmp_path / "cloud.yaml").write_text(PROFILE)
    env = {"DISKBENCH_ARM_URL": arm.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB}
    out = diskbench("run", "--profile", str(tmp_path / "cloud.yaml"), "--ssh-source", "127.0.0.1", "--format", "json",
                    db=tmp_path / "db.sqlite", env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    (result,) = json.loads(out.stdout)["results"]
    bound = result["bound"]
    assert (bound["kind"], bound["limit"], bound["limit_kind"]) == ("disk", 120, "disk_iops"), bound["text"]
    assert bound["text"].startswith("write ") and "of P4 120 IOPS: bound by the disk" in bound["text"]
    assert "Standard_E8ds_v4 uncached 12,800 IOPS" in [f"{x['scope']} {x['value']:,.0f} IOPS" for x in bound["limits"]]
    assert result["series"] and len(result["series"]["iops"]) >= 2  # fetched over SSH from the host's workspace

    table = diskbench("show", "last", db=tmp_path / "db.sqlite", env={"COLUMNS": "200"})
    assert re.search(r" disk (9\d|1[01]\d)%$", table.stdout, re.M), table.stdout  # the tag column
    csv = diskbench("show", "last", "--format", "csv", db=tmp_path / "db.sqlite")
    assert ",disk," in csv.stdout
    md = diskbench("show", "last", "--format", "markdown", db=tmp_path / "db.sqlite")
    assert "**bound:**" in md.stdout and "bound by the disk" in md.stdout

    text = diskbench("explain", "last", "capped", db=tmp_path / "db.sqlite").stdout
    assert text.startswith("capped write on vm1:scratch: ")
    assert "limits compared:" in text and "P4 burst" in text and "to measure the next limit up: more disks" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    # what the job spent: its own time on vm1, within vm1's whole use as the run recorded it
    (use,) = json.loads(out.stdout)["run"]["machines"]
    (spent,) = [r["spent"] for r in json.loads(diskbench("explain", "last", "--format", "json",
                                                         db=tmp_path / "db.sqlite").stdout)["results"]]
    assert spent["machines"] == ["vm1"] and 4 <= spent["seconds"] <= 60 * use["vm_minutes"]
    assert spent["machine_vm_minutes"] == use["vm_minutes"] and abs(spent["vm_minutes"] - spent["seconds"] / 60) < 1e-3
    assert f"spent: {spent['vm_minutes']:.2f} VM-min ({spent['seconds']:,.0f} s on vm1)" in text
    missing = diskbench("explain", "last", "nope", db=tmp_path / "db.sqlite")
    assert missing.returncode != 0 and missing.stderr.startswith("error: run ") and "Traceback" not in missing.stderr
