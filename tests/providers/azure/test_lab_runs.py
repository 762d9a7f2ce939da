"""The bundled Azure profiles end to end against real kernels: fake ARM, real SDK, QEMU guests.

Every VM ``diskbench run`` creates boots as a lab guest shaped like its size (lab_cloud.py): the
data disks at their LUNs with their caching, the temp disk, local NVMe, and throttle groups for
the disk tiers and the VM's limits, scaled by ``SCALE``. The runs are the bundled profiles with
sizes and runtimes cut to what a TCG guest does in seconds (``--set``). What they prove is the
whole path (provision, SSH with the handed-over key, md RAID0, xfs, runs, teardown) and the
seeds' shapes against the emulated limits; never absolute speeds.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from diskbench.profile import load_profile
from diskbench.store import Store

from ...conftest import diskbench
from ...fake_arm import SUB, FakeArm
from ...guestlab.guest import GuestLab
from ...lab import Lab
from .lab_cloud import SCALE, LabCloud
from .test_azure import _skus

pytestmark = pytest.mark.guest


@pytest.fixture
def cloud(lab: Lab, guest_lab: GuestLab) -> Iterator[tuple[FakeArm, LabCloud]]:
    labcloud = LabCloud(guest_lab, lab).start()
    arm = FakeArm(skus=_skus(), usages=[])
    arm.on_vm_created = labcloud.boot
    arm.start()
    try:
        yield arm, labcloud
    finally:
        arm.stop()
        labcloud.stop()


def small(profile: str, size: str = "16M", runtime: str = "3s") -> list[str]:
    """``--set`` overrides that fit a profile into lab guests: small files, short runs."""
    loaded = load_profile(profile)
    sets = [f"defaults.size={size}", f"defaults.runtime={runtime}", "defaults.ramp_time=1s"]
    for i, w in enumerate(loaded.profile.workloads):
        if w.size:
            sets.append(f"workloads[{i}].size={size}")
        if w.numjobs and w.numjobs > 4:
            sets.append(f"workloads[{i}].numjobs=4")
    if (loaded.profile.defaults.numjobs or 1) > 4:
        sets.append("defaults.numjobs=4")
    return [arg for s in sets for arg in ("--set", s)]


def run(arm: FakeArm, labcloud: LabCloud, tmp_path: Path, profile: str, machines: int,
        *args: str) -> dict[str, Any]:
    arm.vm_addresses = [labcloud.address() for _ in range(machines)]
    env = {"DISKBENCH_ARM_URL": arm.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB}
    out = diskbench("run", "--profile", profile, "--ssh-source", "127.0.0.1", *small(profile), *args,
                    "--format", "json", db=tmp_path / "db.sqlite", env=env, timeout=1500)
    assert not labcloud.errors, labcloud.errors
    assert out.returncode == 0, out.stderr[-3000:]
    assert arm.groups == {} and arm.resources == {}  # torn down
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def result(doc: dict[str, Any], workload: str, direction: str, target: str | None = None) -> dict[str, Any]:
    found = [r for r in doc["results"] if r["workload"] == workload and r["direction"] == direction
             and (target is None or r["target"] == target)]
    assert len(found) == 1, (workload, direction, target, [(r["workload"], r["target"]) for r in doc["results"]])
    return found[0]


def test_d8ds_premium_stripes_caches_and_hits_the_vm_cap(cloud: tuple[FakeArm, LabCloud], tmp_path: Path) -> None:
    arm, labcloud = cloud
    doc = run(arm, labcloud, tmp_path, "d8ds-premium", 1)
    vm_cap, p30 = 12_800 * SCALE, 5_000 * SCALE
    write = result(doc, "max-write", "write")
    # three P30s striped: the VM's uncached limit binds, not the sum of the disks' caps
    assert 0.8 * vm_cap < write["iops"] < 1.08 * vm_cap, write["iops"]
    assert write["iops"] < 0.92 * 3 * p30
    read = result(doc, "max-read", "read")
    assert read["iops"] > 2 * p30, read["iops"]  # the warmed ReadOnly cache serves reads above the disk's cap
    reader = result(doc, "mixed/reader1", "read", "cache-reads")
    writer = result(doc, "mixed/writer1", "write", "nocache-writes")
    assert result(doc, "mixed", "total")["ios"] == reader["ios"] + writer["ios"]  # fioreadwrite.ini: one run
    run_record = Store(tmp_path / "db.sqlite").get_run("last")
    jobs = Store(tmp_path / "db.sqlite").get_jobs(run_record["id"])
    assert all(j["status"] == "done" for j in jobs)
    art = Path(run_record["artifacts_dir"])
    assert list(art.glob("*/warmup*.output.json")) and list(art.glob("*/precondition.output.json"))
    assert labcloud.specs["d8ds-v4-premium"].groups["vm"].iops == round(vm_cap)
    assert "raid0" not in subprocess.run(["cat", "/proc/mdstat"], capture_output=True, text=True).stdout
