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
from diskbench.store.raw import read_raw

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
    """A bundled profile, cut to the lab's sizes, on ``machines`` guests: its JSON results."""
    doc: dict[str, Any] = json.loads(run_cli(arm, labcloud, tmp_path, profile, machines, *small(profile),
                                             *args).stdout)
    return doc


def run_cli(arm: FakeArm, labcloud: LabCloud, tmp_path: Path, profile: str, machines: int,
            *args: str) -> subprocess.CompletedProcess[str]:
    """``diskbench run`` of ``profile`` (a name or a file) on lab guests; it must succeed and tear down."""
    arm.vm_addresses = [labcloud.address() for _ in range(machines)]
    env = {"DISKBENCH_ARM_URL": arm.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB,
           "DISKBENCH_LIMITS_SCALE": str(SCALE)}  # results are attributed against the caps the guests enforce
    out = diskbench("run", "--profile", profile, "--ssh-source", "127.0.0.1", *args, "--format", "json",
                    db=tmp_path / "db.sqlite", env=env, timeout=1500)
    assert not labcloud.errors, labcloud.errors
    assert out.returncode == 0, out.stderr[-3000:]
    assert arm.groups == {} and arm.resources == {}  # torn down
    return out


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
    # three P30s striped: the VM's uncached limit binds, not the sum of the disks' caps. The guest is held
    # under it; whether it reaches it depends on the TCG guest's share of this machine (once, in a CI run,
    # 816 of 1,280), so the bound is the VM's when the median second reached the cap, else it says why not.
    assert write["iops"] < 1.08 * vm_cap and write["iops"] < 0.92 * 3 * p30, write["iops"]
    seconds = sorted(write["series"]["iops"])
    reached = seconds[len(seconds) // 2] >= 0.95 * vm_cap
    assert write["bound"]["kind"] in (("vm_uncached",) if reached else ("vm_uncached", "cpu", "none")), \
        (write["bound"]["text"], write["series"]["iops"])
    read = result(doc, "max-read", "read")
    assert read["iops"] > 2 * p30, read["iops"]  # the warmed ReadOnly cache serves reads above the disk's cap
    # above the P30's own (cache-miss) cap: the host cache served it - or, at its ceiling, the VM's cached limit
    # the cache serves it; a one-vCPU TCG guest may run out of CPU first, which is then the bound
    assert read["bound"]["kind"] in ("host_cache", "vm_cached", "cpu"), read["bound"]["text"]
    assert "served by the host cache" in read["bound"]["text"] or read["bound"]["kind"] != "cpu"
    assert "P30 x0.1 500 IOPS: served by the host cache" in read["bound"]["text"] or \
        "Standard_D8ds_v4 cached+temp x0.1 7,700 IOPS" in read["bound"]["text"], read["bound"]["text"]
    if write["bound"]["kind"] != "cpu":  # the nearest cap: the VM's
        assert write["bound"]["limit_kind"] == "vm_uncached_iops", write["bound"]["text"]
    reader = result(doc, "mixed/reader1", "read", "cache-reads")
    writer = result(doc, "mixed/writer1", "write", "nocache-writes")
    assert result(doc, "mixed", "total")["ios"] == reader["ios"] + writer["ios"]  # fioreadwrite.ini: one run
    run_record = Store(tmp_path / "db.sqlite").get_run("last")
    jobs = Store(tmp_path / "db.sqlite").get_jobs(run_record["id"])
    assert all(j["status"] == "done" for j in jobs)
    art = Path(run_record["artifacts_dir"])
    assert list(art.glob("*/precondition.output.json*"))  # kept gzip'd
    # every unit on the cached disk warmed it until the rate stopped rising: passes while it gained,
    # then one that gained less than WARMUP_GAIN, well before the last allowed pass
    fio = registry.engines.get("fio")
    units = {p.parent for p in art.glob("*/warmup*.output.json*")}
    assert units
    for unit in units:
        passes = sorted(unit.glob("warmup*.output.json*"), key=lambda p: int(p.name[6:].split(".")[0]))
        rates = [sum(d.iops for g in fio.parse(read_raw(p.with_suffix("") if p.suffix == ".gz" else p).decode(),
                                               source=str(p)).groups for d in g.directions)
                 for p in passes]
        assert 2 <= len(rates) < WARMUP_MAX_PASSES, (unit.name, rates)
        assert rates[-1] < rates[-2] * (1 + WARMUP_GAIN), (unit.name, rates)
    assert labcloud.specs["d8ds-v4-premium"].groups["vm"].iops == round(vm_cap)
    assert "raid0" not in subprocess.run(["cat", "/proc/mdstat"], capture_output=True, text=True).stdout


BOUNDS_PROFILE = """\
name: lab-bounds
description: which emulated limit binds - the VM's group, one disk's throttle, a P10's credit burst, or none
defaults: {ioengine: libaio, direct: true, bs: 4k, iodepth: 32, numjobs: 4, size: 16M, runtime: 6s, ramp_time: 1s,
           time_based: true}
machines:
  - name: d2ds-bounds
    region: westeurope
    size: Standard_D2ds_v5  # uncached 3,750 IOPS: 375 in the lab, which a TCG guest reaches on a busy machine
    os_disk: {type: Premium_LRS, caching: ReadWrite}
    data_disks:
      - {count: 2, type: Premium_LRS, size_gb: 1024, caching: None}  # LUN 0-1: P30, 5,000 IOPS, no credit burst
      - {count: 1, type: Standard_LRS, size_gb: 16384, caching: None}  # LUN 2: S70, 2,000 IOPS
      - {count: 1, type: Premium_LRS, size_gb: 128, caching: None}   # LUN 3: P10, 500 IOPS, bursts to 3,500
    targets:
      stripe: {luns: [0, 1], fs: xfs, mount: /mnt/stripe}
      single: {lun: 2, raw: true}  # raw: every I/O the throttle counts is fio's (no filesystem journal)
      burst: {lun: 3, raw: true}  # raw: no mkfs or file layout spends the credits before the run
workloads:
  - {name: stripe-write, rw: randwrite, targets: [stripe]}
  - {name: stripe-paced, rw: randwrite, numjobs: 2, rate_iops: 50, targets: [stripe]}
  - {name: single-write, rw: randwrite, targets: [single]}
  - {name: burst-write, rw: randwrite, runtime: 16s, ramp_time: 0s, targets: [burst]}
"""


def capped(res: dict[str, Any], kind: str, limit_kind: str, cap: float) -> None:
    """The result is set against the cap its guest enforces, and bound by it whenever the guest reached it.

    A TCG guest on a machine shared with other tests stalls for parts of seconds, and a throttle's bucket
    never gives a stalled second back; the median second tells whether the cap was reached at all.
    """
    bound, seconds = res["bound"], sorted(res["series"]["iops"])
    assert (bound["limit_kind"], bound["limit"]) == (limit_kind, cap), (bound["text"], seconds)  # the nearest
    assert bound["kind"] in (kind, "none"), (bound["text"], res["series"]["iops"])  # never another limit
    if seconds[len(seconds) // 2] >= 0.95 * cap:
        assert bound["kind"] == kind, (bound["text"], res["series"]["iops"])


def test_each_result_names_the_emulated_limit_that_bound_it(cloud: tuple[FakeArm, LabCloud], tmp_path: Path) -> None:
    """The runner's attribution against the caps QEMU enforces: the tables scaled as the lab scales them."""
    arm, labcloud = cloud
    (tmp_path / "bounds.yaml").write_text(BOUNDS_PROFILE)
    doc = json.loads(run_cli(arm, labcloud, tmp_path, str(tmp_path / "bounds.yaml"), 1).stdout)
    groups = labcloud.specs["d2ds-bounds"].groups
    vm_cap = groups["vm"].iops  # what the guest's VM-level throttle group enforces: 3,750 x SCALE
    disks = {d.lun: d.cap for d in labcloud.specs["d2ds-bounds"].disks if d.lun is not None}
    assert vm_cap == 375 and disks[2] is not None and disks[2].iops == 200
    assert disks[3] is not None and (disks[3].iops, disks[3].burst_iops) == (50, 350)

    stripe = result(doc, "stripe-write", "write")  # 2 x P30 = 1,000 > the VM's 375
    capped(stripe, "vm_uncached", "vm_uncached_iops", vm_cap)
    assert "not the 2 x P30 x0.1 (1,000)" in stripe["bound"]["text"] or stripe["bound"]["kind"] == "none"

    paced = result(doc, "stripe-paced", "write")  # 2 x 50 IOPS: well below every limit, so no bound is claimed
    assert paced["bound"]["kind"] == "none", paced["bound"]["text"]
    assert "below every limit (highest: 2" in paced["bound"]["text"]  # ~100 of the VM's 375

    single = result(doc, "single-write", "write")  # one S70 (200): its own throttle, under the VM's 375
    capped(single, "disk", "disk_iops", disks[2].iops)

    burst = result(doc, "burst-write", "write")
    bound = burst["bound"]
    assert bound["kind"] == "burst" and bound["phases"], (bound["text"], burst["series"]["iops"])
    phases = bound["phases"]
    assert 0.75 * disks[3].burst_iops < phases["burst"]["mean"] < 1.1 * disks[3].burst_iops, phases
    assert 0.7 * disks[3].iops < phases["baseline"]["mean"] < 1.2 * disks[3].iops, phases  # with the drain
    assert 3 <= phases["baseline"]["start_s"] <= 7, phases  # the bucket: 350 x 4 s, drained at 300/s
    # each phase set against the cap the guest enforces for it (the plateau, not the second the bucket ran dry)
    assert "% of the P10 burst x0.1 350 IOPS, baseline" in bound["text"], bound["text"]
    assert bound["text"].endswith("% of the P10 x0.1 50 IOPS"), bound["text"]
    assert len(burst["series"]["iops"]) <= round(burst["runtime_s"])  # whole seconds of the run (and its drain)

    text = diskbench("explain", "last", "burst-write", db=tmp_path / "db.sqlite").stdout
    assert "phases: burst" in text and "P10 x0.1" in text


DRAIN_PROFILE = """\
name: lab-drain
description: a P10's credit burst drained before the measured run, which then measures the baseline
defaults: {ioengine: libaio, direct: true, bs: 4k, iodepth: 32, numjobs: 4, size: 16M, runtime: 6s, ramp_time: 0s,
           time_based: true}
machines:
  - name: d2ds-drain
    region: westeurope
    size: Standard_D2ds_v5
    os_disk: {type: Premium_LRS, caching: ReadWrite}
    data_disks: [{count: 1, type: Premium_LRS, size_gb: 128, caching: None}]  # P10: 500 IOPS, bursts to 3,500
    targets:
      burst: {lun: 0, raw: true}
workloads:
  - {name: drained-write, rw: randwrite, drain_burst: 1m, ramp_time: 1s, targets: [burst]}  # the ramp: see below
"""


def test_drain_burst_spends_the_credits_and_measures_the_baseline(cloud: tuple[FakeArm, LabCloud],
                                                                   tmp_path: Path) -> None:
    """The guest's P10 bursts to 350 IOPS for about 5 s (QEMU's x-iops-total-max) and then holds 50: the
    drain passes see the step, and the measured run that follows is the baseline, bound by the disk."""
    arm, labcloud = cloud
    (tmp_path / "drain.yaml").write_text(DRAIN_PROFILE)
    out = run_cli(arm, labcloud, tmp_path, str(tmp_path / "drain.yaml"), 1)
    (cap,) = [d.cap for d in labcloud.specs["d2ds-drain"].disks if d.lun == 0]
    assert cap is not None and (cap.iops, cap.burst_iops) == (50, 350)
    passes = [ln for ln in out.stderr.splitlines() if ": drain pass " in ln]
    assert 1 <= len(passes) <= 3, out.stderr[-3000:]
    assert "stepped down after" in passes[-1] or "at the baseline" in passes[-1], passes
    assert any("stepped down after" in ln for ln in passes), passes  # the burst was seen ending
    res = result(json.loads(out.stdout), "drained-write", "write")
    assert any(n.startswith("burst drained before measuring: ") for n in res["notes"]), res["notes"]
    assert not [w for w in res["warnings"] if "drain_burst" in w or "burst credits" in w], res["warnings"]
    # The bucket refills a little in the seconds between the last pass and the measured run (fio's start
    # in a TCG guest), and the ramp spends it, as run warns: without one this result read 114% of the cap.
    seconds = res["series"]["iops"]
    assert max(seconds) < 0.5 * cap.burst_iops, seconds  # no burst left in the measured run
    capped(res, "disk", "disk_iops", cap.iops)  # the baseline: the P10's own 50, not its burst's 350
    art = Path(Store(tmp_path / "db.sqlite").get_run("last")["artifacts_dir"])
    assert len(list(art.glob("*/drain-*/output.json.gz"))) == len(passes)


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
