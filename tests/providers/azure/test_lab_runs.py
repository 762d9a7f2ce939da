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

from diskbench import registry
from diskbench.profile import load_profile
from diskbench.runner.unit import WARMUP_GAIN, WARMUP_MAX_PASSES
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
    assert list(art.glob("*/precondition.output.json"))
    # the warm-up read until the rate stopped rising: faster passes while the cache filled, then one
    # that gained less than WARMUP_GAIN, well before the last allowed pass
    passes = sorted(art.glob("*/warmup*.output.json"), key=lambda p: int(p.name[6:].split(".")[0]))
    fio = registry.engines.get("fio")
    rates = [sum(d.iops for g in fio.parse(p.read_text(), source=str(p)).groups for d in g.directions)
             for p in passes]
    assert 2 <= len(rates) < WARMUP_MAX_PASSES, rates
    assert rates[-1] < rates[-2] * (1 + WARMUP_GAIN), rates
    assert max(rates) > 1.2 * rates[0], rates  # the first pass read at the disk's cap, later ones from cache
    assert labcloud.specs["d8ds-v4-premium"].groups["vm"].iops == round(vm_cap)
    assert "raid0" not in subprocess.run(["cat", "/proc/mdstat"], capture_output=True, text=True).stdout


def test_e8_family_os_disk_caching_and_the_temp_disk(cloud: tuple[FakeArm, LabCloud], tmp_path: Path) -> None:
    """The seed's OS-disk and temp-disk shapes: ReadWrite host cache far faster for writes than None
    (a P4 whose baseline is 120 IOPS, 12 here), and the temp disk faster than the uncached OS disk."""
    arm, labcloud = cloud
    machines = ["e8ds-v4-temp", "e8ds-v4-os-readwrite", "e8ds-v4-os-nocache"]
    doc = run(arm, labcloud, tmp_path, "e8-family", 3, *[a for m in machines for a in ("--machine", m)])
    nocache = _on(doc, "e8ds-v4-os-nocache", "async-os")
    cached = _on(doc, "e8ds-v4-os-readwrite", "async-os")
    temp = _on(doc, "e8ds-v4-temp", "async")
    p4 = labcloud.specs["e8ds-v4-os-nocache"].os_disk
    assert p4 is not None and p4.cap is not None and p4.cap.iops is not None and p4.cap.burst_iops is not None
    # uncached: never above the P4's burst cap (350 here: the seed's 3,499 IOPS "because it was bursting")
    assert nocache["iops"] < 1.1 * p4.cap.burst_iops, nocache["iops"]
    assert cached["iops"] > 3 * nocache["iops"], (cached["iops"], nocache["iops"])
    assert temp["iops"] > 3 * nocache["iops"], (temp["iops"], nocache["iops"])
    qd1 = {m: _on(doc, m, "sync-os")["clat_us"]["p50"] for m in ("e8ds-v4-os-readwrite", "e8ds-v4-os-nocache")}
    assert qd1["e8ds-v4-os-nocache"] > 2 * qd1["e8ds-v4-os-readwrite"], qd1


def test_l_series_and_ephemeral_os(cloud: tuple[FakeArm, LabCloud], tmp_path: Path) -> None:
    """L8s_v2's local NVMe formatted ext4 at /mnt/nvme, the ephemeral OS disk at the VM's cached
    limit, and a size with no temp disk whose HDD OS disk is cached ReadWrite (as the article
    created it): each machine runs its jobs end to end."""
    arm, labcloud = cloud
    machines = ["l8s-v2-nvme", "e8ds-v4-ephemeral-os", "e8-v4-no-temp"]
    doc = run(arm, labcloud, tmp_path, "e8-family", 3, *[a for m in machines for a in ("--machine", m)])
    assert {(r["host"], r["workload"]) for r in doc["results"] if r["direction"] == "write"} == {
        ("l8s-v2-nvme", "sync"), ("l8s-v2-nvme", "async-nvme"), ("e8ds-v4-ephemeral-os", "sync-os"),
        ("e8ds-v4-ephemeral-os", "async-os"), ("e8-v4-no-temp", "sync-os"), ("e8-v4-no-temp", "async-os")}
    ephemeral = _on(doc, "e8ds-v4-ephemeral-os", "async-os")
    hdd = _on(doc, "e8-v4-no-temp", "async-os")
    s4 = labcloud.specs["e8-v4-no-temp"].os_disk
    assert s4 is not None and s4.cap is not None and s4.cap.iops == 50  # a Standard HDD S4: 500 IOPS
    # the ephemeral OS disk has no disk tier at all, and the HDD's ReadWrite cache takes writes above its cap
    assert ephemeral["iops"] > 3 * s4.cap.iops and hdd["iops"] > 3 * s4.cap.iops, (ephemeral["iops"], hdd["iops"])


def _on(doc: dict[str, Any], machine: str, workload: str) -> dict[str, Any]:
    found = [r for r in doc["results"] if r["host"] == machine and r["workload"] == workload
             and r["direction"] == "write"]
    assert len(found) == 1, (machine, workload, [(r["host"], r["workload"]) for r in doc["results"]])
    return found[0]


def test_l_series_nvme_stripes_every_local_nvme(cloud: tuple[FakeArm, LabCloud], tmp_path: Path) -> None:
    """l-series-nvme on an L32s_v2: its four local NVMe devices found by the Azure device map,
    striped with md RAID0, formatted xfs and mounted at /mnt/nvme (the temp disk stays on /mnt)."""
    arm, labcloud = cloud
    doc = run(arm, labcloud, tmp_path, "l-series-nvme", 1, "--set", "machines[0].size=Standard_L32s_v2")
    assert {(r["workload"], r["direction"]) for r in doc["results"]} >= {
        ("randread-4k", "read"), ("randwrite-4k", "write")}
    spec = labcloud.specs["l8s-v2"]
    assert sum(d.bus == "nvme" for d in spec.disks) == 4
    assert doc["run"]["targets"]["l8s-v2/nvme:all"]["fstype"] == "xfs"
