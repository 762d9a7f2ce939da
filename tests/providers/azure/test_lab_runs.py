"""The bundled Azure profiles end to end against real kernels: fake ARM, real SDK, QEMU guests.

Every VM ``diskbench run`` creates boots as a lab guest shaped like its size (lab_cloud.py): the
data disks at their LUNs with their caching, the temp disk, local NVMe, and throttle groups for
the disk tiers and the VM's limits. The limits are the lab's own table (lab_limits.py, read off
Azure's pages) at a scale each test takes from a calibration of this machine
(tests/guestlab/calibrate.py): the largest cap the test's shapes need a guest to reach sits at 35%
of what a guest reached unthrottled a moment before, so a busy machine lowers the caps instead of
the results falling off them. diskbench attributes against its own tables at the same scale; the
two tables are compared in test_lab_limits.py.

What the tests prove is the whole path (provision, SSH with the handed-over key, md RAID0, xfs,
runs, teardown, the array gone in the guest's own kernel) and the seeds' shapes, each two-sided
around the caps the guest enforces, with the band's source beside it. ``python -m
tests.guestlab.breaks`` breaks the product on purpose, one way at a time, and shows which of these
tests fails.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from diskbench import registry
from diskbench.runner.unit import WARMUP_GAIN, WARMUP_MAX_PASSES
from diskbench.store import Store
from diskbench.store.raw import read_raw

from ...conftest import diskbench
from ...fake_arm import SUB, FakeArm
from ...guestlab.calibrate import Calibration, calibrate
from ...guestlab.guest import Guest, GuestLab
from ...guestlab.probe import disk_ops, md_state
from ...guestlab.spec import GuestSpec, Throttle
from ...lab import Lab
from .lab_cloud import LabCloud, remote_latency_ms
from .lab_limits import disk_tier, vm_size
from .test_azure import _skus

pytestmark = pytest.mark.guest

# The bands around an emulated cap (result / cap). The top is what a measured window of at least
# AT_CAP_WINDOW_S can count beyond the cap: QEMU's bucket lets a tenth of a second's worth through at once
# (util/throttle.c, throttle_fix_bucket: max = avg / 10 when no burst is set; lab-notes: +0.8-1.0% over
# long runs), 3.3% of 3 s, and the I/Os queued in the throttle when fio's window opens after the ramp
# (lab_iodepth: 4% of 3 s of the cap), counted in the window though admitted before it: 7.3%, so 1.08.
# Not all of it is understood: time-based over 6 s beside a busy core, the warmed ReadOnly read came to
# 1.064x its cap (2,539 on 2,387), where these two terms give 3.7%.
# A window that ends early (fio's size reached before its runtime) counts the same extras over fewer
# seconds: at_cap refuses one shorter than AT_CAP_WINDOW_S (a warmed ReadOnly read of 6 MiB files read
# 1.089x its cap in 3.3 s when it was meant to run 6 s). The bottom is what TCG stalls cost a guest whose
# cap sits at 35% of its calibrated rate: the lowest ratio seen in LAB_RUNS below, less a margin of 0.05.
AT_CAP = (0.80, 1.08)
AT_CAP_WINDOW_S = 2.95  # fio's runtime of a 3 s job: 3,000-3,300 ms in these runs
# result / cap seen in the runs of this file on this 2-core machine (quiet, and beside another suite):
# d8ds stripe 0.97-1.0; bounds stripe 0.98-1.0, S70 0.97-1.0; drained P10 baseline 0.92-1.0.
LAB_RUNS = {"quiet": 3, "loaded": 2}
# The calibration measures a raw disk; the emulated host cache (a copy-on-read overlay written back
# by QEMU) and the ephemeral OS disk cost a TCG guest more per I/O. On a quiet 2-core machine they
# reached 665 and 417 IOPS where the raw path's budget was 2,958 and 1,641 (22-25%), so the caps
# those shapes must exceed are placed as if they needed 2.5x more: at 14% of the raw budget
# (passed on a quiet machine at 2,461 IOPS calibrated).
CACHED_PATH_COST = 2.5
# Beside a guest that writes unthrottled at the same time (the L-series' local NVMe, which runs flat out since
# its NVMe devices stopped losing I/O: guestlab README), the ReadWrite-cached OS path reached 492 IOPS where
# one of three guests' budget was 4,447: 11% of it, against 22-25% on a quiet machine. That shape's caps are
# placed as if the path needed 9x the raw one.
CONTENDED_CACHED_PATH_COST = 9.0
SHARE = 0.15  # of a stripe's writes each member takes at least: 4 equal members take 0.25, 3 take 0.33


@pytest.fixture
def calibration(guest_lab: GuestLab) -> Calibration:
    return calibrate(guest_lab)


@contextlib.contextmanager
def open_cloud(lab: Lab, guest_lab: GuestLab, scale: float) -> Iterator[tuple[FakeArm, LabCloud]]:
    labcloud = LabCloud(guest_lab, lab, scale).start()
    arm = FakeArm(skus=_skus(), usages=[])
    arm.on_vm_created = labcloud.boot
    arm.start()
    try:
        yield arm, labcloud
    finally:
        arm.stop()
        labcloud.stop()


def lab_iodepth(cap: float, runtime_s: float = 3, jobs: int = 4) -> int:
    """The queue depth at which ``jobs`` jobs' outstanding I/O drains through ``cap`` within 4% of the runtime.

    fio counts what completes before the runtime ends and then waits for what is still queued: a seed's
    QD256 x 4 jobs is 1,024 I/Os, 0.08 s at Azure's 12,800 IOPS but 2 s at a lab cap of 500, and such a
    result read 83% of its cap (the tail, not the cap, decided it).
    """
    return max(1, int(0.04 * cap * runtime_s / jobs))


def lab_size(mbps: float, jobs: int = 4, seconds: float = 8) -> str:
    """Each job's file size such that laying ``jobs`` files out through ``mbps`` (a cap at the lab's scale,
    MB/s) takes about ``seconds``: 1-16 MiB. At a scale of 0.003 a P30 writes 0.6 MB/s, and 4 x 16 MiB
    would take two minutes to lay out before a 3 s measurement."""
    return f"{max(1, min(16, int(mbps * 1e6 * seconds / jobs / 2**20)))}M"


def small(profile: str, size: str = "16M", runtime: str = "3s", iodepth: int | None = None) -> list[str]:
    """``--set`` overrides that fit a profile into lab guests: small files, short runs, and (``iodepth``)
    at most that queue depth per job (``lab_iodepth``)."""
    from diskbench.profile import load_profile

    loaded = load_profile(profile)
    defaults = loaded.profile.defaults
    sets = [f"defaults.size={size}", f"defaults.runtime={runtime}", "defaults.ramp_time=1s"]
    if iodepth is not None and (defaults.iodepth or 1) > iodepth:
        sets.append(f"defaults.iodepth={iodepth}")
    for i, w in enumerate(loaded.profile.workloads):
        if w.size:
            sets.append(f"workloads[{i}].size={size}")
        if w.numjobs and w.numjobs > 4:
            sets.append(f"workloads[{i}].numjobs=4")
        if iodepth is not None and w.iodepth and w.iodepth > iodepth:
            sets.append(f"workloads[{i}].iodepth={iodepth}")
    if (defaults.numjobs or 1) > 4:
        sets.append("defaults.numjobs=4")
    return [arg for s in sets for arg in ("--set", s)]


def run(arm: FakeArm, labcloud: LabCloud, tmp_path: Path, profile: str, machines: int, *args: str,
        size: str = "16M", runtime: str = "3s", iodepth: int | None = None) -> dict[str, Any]:
    """A bundled profile, cut to the lab's sizes, on ``machines`` guests: its JSON results."""
    doc: dict[str, Any] = json.loads(run_cli(arm, labcloud, tmp_path, profile, machines,
                                             *small(profile, size, runtime, iodepth), *args).stdout)
    return doc


def run_cli(arm: FakeArm, labcloud: LabCloud, tmp_path: Path, profile: str, machines: int,
            *args: str) -> subprocess.CompletedProcess[str]:
    """``diskbench run`` of ``profile`` (a name or a file) on lab guests; it must succeed and tear down."""
    arm.vm_addresses = [labcloud.address() for _ in range(machines)]
    env = {"DISKBENCH_ARM_URL": arm.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB,
           "DISKBENCH_LIMITS_SCALE": str(labcloud.scale)}  # attribution against the caps the guests enforce
    out = diskbench("run", "--profile", profile, "--ssh-source", "127.0.0.1", *args, "--format", "json",
                    db=tmp_path / "db.sqlite", env=env, timeout=1500)
    print(f"scale {labcloud.scale}\n{out.stderr[-6000:]}")
    assert not labcloud.errors, labcloud.errors
    assert out.returncode == 0, out.stderr[-3000:]
    assert arm.groups == {} and arm.resources == {}  # torn down
    return out


def result(doc: dict[str, Any], workload: str, direction: str, target: str | None = None,
           host: str | None = None) -> dict[str, Any]:
    found = [r for r in doc["results"] if r["workload"] == workload and r["direction"] == direction
             and (target is None or r["target"] == target) and (host is None or r["host"] == host)]
    assert len(found) == 1, (workload, direction, target, [(r["workload"], r["target"]) for r in doc["results"]])
    return found[0]


def between(value: float, low: float, high: float, what: str, res: dict[str, Any] | None = None) -> None:
    """``low <= value <= high``, saying which side failed and the per-second series."""
    seconds = res["series"]["iops"] if res and res.get("series") else None
    assert low <= value, f"{what}: {value:,.0f} below {low:,.0f} (per second {seconds})"
    assert value <= high, f"{what}: {value:,.0f} above {high:,.0f} (per second {seconds})"


def at_cap(res: dict[str, Any], cap: float, kind: str, limit_kind: str, what: str) -> None:
    """The result sits at the cap its guest enforces (``AT_CAP``) and is bound by that very limit."""
    assert res["runtime_s"] >= AT_CAP_WINDOW_S, (what, res["runtime_s"])  # AT_CAP's top holds over such a window
    between(res["iops"], AT_CAP[0] * cap, AT_CAP[1] * cap, what, res)
    bound = res["bound"]
    assert (bound["kind"], bound["limit_kind"]) == (kind, limit_kind), (what, bound["text"])
    assert bound["limit"] == pytest.approx(cap, rel=0.02, abs=0.6), (what, bound["limit"], cap)  # QEMU's whole IOPS


def iops_cap(throttle: Throttle | None) -> int:
    assert throttle is not None and throttle.iops is not None
    return throttle.iops


def stripe_members(doc: dict[str, Any], key: str, guest: Guest, disks: list[str], expect: int) -> None:
    """The run record and the guest agree: ``expect`` disks under the filesystem, each given its share of
    the writes (QEMU's counters at each disk's device), and no array or superblock left in the guest."""
    devices = [d["name"] for d in doc["run"]["targets"][key]["devices"]]
    assert len(devices) == expect, devices
    ops = disk_ops(guest, disks)
    total = sum(o["write"] for o in ops.values())
    assert total > 0 and all(o["write"] >= SHARE * total for o in ops.values()), ops
    active, carrying = md_state(guest, [f"/dev/{d}" for d in devices])
    assert active == [] and carrying == [], (active, carrying)


# --- d8ds-premium (seed 001) ------------------------------------------------------------------------

def test_d8ds_striped_writes_stop_at_the_vm_cap(lab: Lab, guest_lab: GuestLab, calibration: Calibration,
                                                 tmp_path: Path) -> None:
    """fiowrite.ini on three P30s striped: the VM's uncached limit binds (the seed: 13,052 write IOPS on a
    12,800 VM), not the sum of the disks' caps; the array had three members and is gone afterwards."""
    vm = vm_size("Standard_D8ds_v4")
    assert vm.uncached_iops is not None
    scale = calibration.scale(vm.uncached_iops)
    print(calibration.describe(vm.uncached_iops))
    with open_cloud(lab, guest_lab, scale) as (arm, labcloud):
        assert vm.uncached_mbps is not None
        doc = run(arm, labcloud, tmp_path, "d8ds-premium", 1, "--workload", "max-write",
                  size=lab_size(vm.uncached_mbps * scale), iodepth=lab_iodepth(vm.uncached_iops * scale))
        spec: GuestSpec = labcloud.specs["d8ds-v4-premium"]
        vm_cap, p30 = iops_cap(spec.groups["vm"]), iops_cap(spec.disks[0].cap)
        assert vm_cap < 0.9 * 3 * p30  # published: 12,800 < 15,000, so the VM binds first
        write = result(doc, "max-write", "write")
        at_cap(write, vm_cap, "vm_uncached", "vm_uncached_iops", "striped write")
        assert f"not the 3 x P30 x{scale:g}" in write["bound"]["text"], write["bound"]["text"]
        stripe_members(doc, "d8ds-v4-premium/nocache-writes", labcloud.booted["d8ds-v4-premium"],
                       ["data0", "data1", "data2"], 3)


def test_d8ds_warmed_readonly_cache_reads_at_the_vms_cached_cap(lab: Lab, guest_lab: GuestLab,
                                                                 calibration: Calibration, tmp_path: Path) -> None:
    """fioread.ini on the ReadOnly-cached P30 after the warm-up: above the disk's own cap and at the VM's
    cached limit (the seed: 78,521 read IOPS on a 77,000 cached limit); fioreadwrite.ini is one run."""
    vm = vm_size("Standard_D8ds_v4")
    assert vm.cached_iops is not None
    scale = calibration.scale(vm.cached_iops)
    print(calibration.describe(vm.cached_iops))
    with open_cloud(lab, guest_lab, scale) as (arm, labcloud):
        p30_mbps = disk_tier("Premium_LRS", 1024).mbps
        # 6 s, time-based: AT_CAP's extras (QEMU's tenth of a second, what is queued when the window opens)
        # weigh half what they weigh over 3 s. The seed's runtime binds (30 GiB files are not read in its
        # 30 s); the lab's files, sized for the P30's layout, are read at the cached cap in about 3 s, and
        # without time_based that shorter window read 108.9% of the cap beside a busy core
        doc = run(arm, labcloud, tmp_path, "d8ds-premium", 1, "--workload", "max-read", "--workload", "mixed",
                  "--set", "defaults.time_based=true",
                  size=lab_size(p30_mbps * scale), iodepth=lab_iodepth(vm.cached_iops * scale), runtime="6s")
        spec = labcloud.specs["d8ds-v4-premium"]
        cached_cap, p30 = iops_cap(spec.vm_cached), iops_cap(spec.disks[3].cap)
        assert cached_cap > 5 * p30  # published: 77,000 against a P30's 5,000
        read = result(doc, "max-read", "read")
        at_cap(read, cached_cap, "vm_cached", "vm_cached_iops", "warmed ReadOnly read")
    reader = result(doc, "mixed/reader1", "read", "cache-reads")
    writer = result(doc, "mixed/writer1", "write", "nocache-writes")
    assert result(doc, "mixed", "total")["ios"] == reader["ios"] + writer["ios"]  # fioreadwrite.ini: one run
    run_record = Store(tmp_path / "db.sqlite").get_run("last")
    art = Path(run_record["artifacts_dir"])
    assert list(art.glob("*/precondition.output.json*"))  # kept gzip'd
    # every unit on the cached disk warmed it until the rate stopped rising: passes while it gained,
    # then one that gained less than WARMUP_GAIN, well before the last allowed pass
    fio = registry.engines.get("fio")
    units = {p.parent for p in art.glob("*/warmup*.output.json*")}
    assert len(units) == 2, units  # max-read and mixed's reader
    for unit in units:
        passes = sorted(unit.glob("warmup*.output.json*"), key=lambda p: int(p.name[6:].split(".")[0]))
        rates = [sum(d.iops for g in fio.parse(read_raw(p.with_suffix("") if p.suffix == ".gz" else p).decode(),
                                               source=str(p)).groups for d in g.directions)
                 for p in passes]
        assert 2 <= len(rates) < WARMUP_MAX_PASSES, (unit.name, rates)
        assert rates[-1] < rates[-2] * (1 + WARMUP_GAIN), (unit.name, rates)


# --- which limit binds, with the lab's own profile --------------------------------------------------

BOUNDS_PROFILE = """\
name: lab-bounds
description: which emulated limit binds - the VM's group, one disk's throttle, a P10's credit burst, or none
defaults: {{ioengine: libaio, direct: true, bs: 4k, iodepth: {iodepth}, numjobs: 4, size: 16M, runtime: 6s,
           ramp_time: 1s, time_based: true}}
machines:
  - name: d2ds-bounds
    region: westeurope
    size: Standard_D2ds_v5  # uncached 3,750 IOPS
    os_disk: {{type: Premium_LRS, caching: ReadWrite}}
    data_disks:
      - {{count: 2, type: Premium_LRS, size_gb: 1024, caching: None}}  # LUN 0-1: P30, 5,000 IOPS, no credit burst
      - {{count: 1, type: Standard_LRS, size_gb: 16384, caching: None}}  # LUN 2: S70, 2,000 IOPS
      - {{count: 1, type: Premium_LRS, size_gb: 128, caching: None}}   # LUN 3: P10, 500 IOPS, bursts to 3,500
    targets:
      stripe: {{luns: [0, 1], fs: xfs, mount: /mnt/stripe}}
      single: {{lun: 2, raw: true}}  # raw: every I/O the throttle counts is fio's (no filesystem journal)
      burst: {{lun: 3, raw: true}}  # raw: no mkfs or file layout spends the credits before the run
workloads:
  - {{name: stripe-write, rw: randwrite, targets: [stripe]}}
  - {{name: stripe-paced, rw: randwrite, numjobs: 2, rate_iops: {paced}, targets: [stripe]}}
  - {{name: single-write, rw: randwrite, targets: [single]}}
  - {{name: burst-write, rw: randwrite, runtime: 16s, ramp_time: 0s, iodepth: {burst_iodepth}, targets: [burst]}}
"""


def test_each_result_names_the_emulated_limit_that_bound_it(lab: Lab, guest_lab: GuestLab, calibration: Calibration,
                                                            tmp_path: Path) -> None:
    """The runner's attribution against the caps QEMU enforces: the VM's group, one disk's own cap, a
    P10's credit burst and then its baseline, and none for a paced job well below every limit."""
    vm, s70, p10 = vm_size("Standard_D2ds_v5"), disk_tier("Standard_LRS", 16384), disk_tier("Premium_LRS", 128)
    assert vm.uncached_iops is not None and p10.burst_iops is not None
    need = max(vm.uncached_iops, s70.iops, p10.burst_iops)
    scale = calibration.scale(need)
    print(calibration.describe(need))
    paced = max(1, round(0.13 * vm.uncached_iops * scale))  # per job: 2 jobs at about a quarter of the VM's cap
    (tmp_path / "bounds.yaml").write_text(BOUNDS_PROFILE.format(
        paced=paced, iodepth=lab_iodepth(s70.iops * scale, 6), burst_iodepth=lab_iodepth(p10.iops * scale, 16)))
    with open_cloud(lab, guest_lab, scale) as (arm, labcloud):
        doc = json.loads(run_cli(arm, labcloud, tmp_path, str(tmp_path / "bounds.yaml"), 1).stdout)
        spec = labcloud.specs["d2ds-bounds"]
    vm_cap = iops_cap(spec.groups["vm"])
    disks = {d.lun: d.cap for d in spec.disks if d.lun is not None}
    single_cap, burst = iops_cap(disks[2]), disks[3]
    assert burst is not None and burst.iops is not None and burst.burst_iops is not None
    assert single_cap < vm_cap < 2 * iops_cap(disks[0])  # the S70 under the VM's cap, two P30s above it

    stripe = result(doc, "stripe-write", "write")  # 2 x P30 > the VM's cap
    at_cap(stripe, vm_cap, "vm_uncached", "vm_uncached_iops", "2 x P30 striped")
    assert f"not the 2 x P30 x{scale:g}" in stripe["bound"]["text"], stripe["bound"]["text"]

    slow = result(doc, "stripe-paced", "write")  # fio's rate_iops holds it: well below every limit
    between(slow["iops"], 0.9 * 2 * paced, 1.05 * 2 * paced, "paced", slow)  # fio's own pacing: a few %
    assert slow["bound"]["kind"] == "none" and "below every limit" in slow["bound"]["text"], slow["bound"]["text"]

    single = result(doc, "single-write", "write")  # one S70: its own throttle, under the VM's cap
    at_cap(single, single_cap, "disk", "disk_iops", "one S70")

    res = result(doc, "burst-write", "write")
    bound = res["bound"]
    assert bound["kind"] == "burst" and bound["phases"], (bound["text"], res["series"]["iops"])
    phases = bound["phases"]
    # the plateau at the burst cap (QEMU's first second runs ~8% over it: lab-notes), then the baseline
    between(phases["burst"]["mean"], 0.8 * burst.burst_iops, 1.1 * burst.burst_iops, "P10 burst phase")
    between(phases["baseline"]["mean"], AT_CAP[0] * burst.iops, 1.2 * burst.iops, "P10 baseline phase")
    # the bucket holds burst x 4 s and drains at burst - baseline: the step comes after 4.6 s (+-2 s: whole
    # seconds, and a slow first second under TCG)
    step = burst.burst_iops * 4 / (burst.burst_iops - burst.iops)
    between(phases["baseline"]["start_s"], step - 2, step + 2.5, "P10 step (s)")
    assert f"% of the P10 burst x{scale:g}" in bound["text"], bound["text"]
    assert f"% of the P10 x{scale:g} " in bound["text"], bound["text"]
    text = diskbench("explain", "last", "burst-write", db=tmp_path / "db.sqlite").stdout
    assert "phases: burst" in text and f"P10 x{scale:g}" in text


DRAIN_PROFILE = """\
name: lab-drain
description: a P10's credit burst drained before the measured run, which then measures the baseline
defaults: {{ioengine: libaio, direct: true, bs: 4k, iodepth: {iodepth}, numjobs: 4, size: 16M, runtime: 8s,
           ramp_time: 0s, time_based: true}}
machines:
  - name: d2ds-drain
    region: westeurope
    size: Standard_D2ds_v5
    os_disk: {{type: Premium_LRS, caching: ReadWrite}}
    data_disks: [{{count: 1, type: Premium_LRS, size_gb: 128, caching: None}}]  # P10: 500 IOPS, bursts to 3,500
    targets:
      burst: {{lun: 0, raw: true}}
workloads:
  - {{name: drained-write, rw: randwrite, drain_burst: 1m, ramp_time: 1s, targets: [burst]}}  # the ramp: see below
"""


def test_drain_burst_spends_the_credits_and_measures_the_baseline(lab: Lab, guest_lab: GuestLab,
                                                                   calibration: Calibration, tmp_path: Path) -> None:
    """The guest's P10 bursts for about 5 s (QEMU's x-iops-total-max) and then holds its baseline: the
    drain passes see the step, and the measured run that follows is the baseline, bound by the disk."""
    p10 = disk_tier("Premium_LRS", 128)
    assert p10.burst_iops is not None
    scale = calibration.scale(p10.burst_iops)
    print(calibration.describe(p10.burst_iops))
    (tmp_path / "drain.yaml").write_text(DRAIN_PROFILE.format(iodepth=lab_iodepth(p10.iops * scale, 8)))
    with open_cloud(lab, guest_lab, scale) as (arm, labcloud):
        out = run_cli(arm, labcloud, tmp_path, str(tmp_path / "drain.yaml"), 1)
        (cap,) = [d.cap for d in labcloud.specs["d2ds-drain"].disks if d.lun == 0]
    assert cap is not None and cap.iops is not None and cap.burst_iops is not None
    passes = [ln for ln in out.stderr.splitlines() if ": drain pass " in ln]
    assert 1 <= len(passes) <= 3, out.stderr[-3000:]
    assert any("stepped down after" in ln for ln in passes), passes  # the burst was seen ending
    res = result(json.loads(out.stdout), "drained-write", "write")
    assert any(n.startswith("burst drained before measuring: ") for n in res["notes"]), res["notes"]
    assert not [w for w in res["warnings"] if "drain_burst" in w or "burst credits" in w], res["warnings"]
    # The bucket refills a little in the seconds between the last pass and the measured run (fio's start
    # in a TCG guest), and the ramp spends it, as run warns: without one this result read 114% of the cap.
    assert max(res["series"]["iops"]) < 0.5 * cap.burst_iops, res["series"]["iops"]  # no burst left
    at_cap(res, cap.iops, "disk", "disk_iops", "drained P10")  # the baseline, not the burst
    art = Path(Store(tmp_path / "db.sqlite").get_run("last")["artifacts_dir"])
    assert len(list(art.glob("*/drain-*/output.json.gz"))) == len(passes)


# --- e8-family (seed 000) ---------------------------------------------------------------------------

def _on(doc: dict[str, Any], machine: str, workload: str) -> dict[str, Any]:
    return result(doc, workload, "write", host=machine)


# The QD1 shape needs what makes it on Azure: an uncached disk's I/O crosses the network to its storage
# (Premium SSD: low single-digit milliseconds; the seed's P4 at QD1: p50 2,474 us) and the host cache
# answers on the host (the seed: p50 51 us). Without that the lab had it backwards (issue 30: p50 1,319 us
# cached, 676 us uncached: a bursting throttle adds nothing at QD1, the cache's overlay costs a TCG guest
# more), so this test's cloud gives its managed disks their latency (lab_cloud.REMOTE_LATENCY_MS / scale).
# The uncached p50 sits between that latency and it plus the guest's own path (GUEST_PATH_US); the cached
# p50 below half of it.
GUEST_PATH_US = 5000  # a TCG guest's own cost of one QD1 8k write through the file system (676-1,319 us
# measured without the emulated latency, issue 30), with room for a loaded machine
FIO_BIN = 1 - 1 / 64  # fio reports a percentile as its latency bin's value: bins are 1/64 of a power of two


def test_e8_family_os_disk_caching_and_the_temp_disk(lab: Lab, guest_lab: GuestLab, calibration: Calibration,
                                                    tmp_path: Path) -> None:
    """The seed's OS-disk and temp-disk shapes: the uncached P4 OS disk never above its burst cap (the
    seed's 3,499 IOPS "because it was bursting"), the ReadWrite host cache and the temp disk well above
    it (the seed: 60.1k and 59.2k IOPS), up to the VM's cached limit at most; QD1 latency far lower."""
    p4 = disk_tier("Premium_LRS", 32)
    vm = vm_size("Standard_E8ds_v4")
    assert p4.burst_iops is not None and vm.cached_iops is not None
    # The cached and temp results must reach 1.5x the P4's burst: an uncached P4 gives at most
    # AT_CAP[1] = 1.08x its burst, so 1.5x cannot come from the disk. (2x was asked first: the cached
    # path reached 674 and 665 of 700 on this machine at the scale 0.1.) The temp disk and the ReadWrite
    # cache run flat out side by side, the contended cached path of the L-series test: beside a one-core
    # CPU hog the temp disk wrote 512 IOPS (per second 386, 619, 123) where one of three guests' budget was
    # 4,196 (12%), below the 525 this asked at the scale 0.1, so the caps are placed as there. At ~0.03 the
    # P4's baseline is a few IOPS, but its QD1 job runs in its burst (~100 IOPS) at the remote latency
    # scaled alike (2 ms / scale), some 40 I/Os in 3 s: enough for the p50 below.
    need = 1.5 * p4.burst_iops
    scale = calibration.scale(need * CONTENDED_CACHED_PATH_COST, guests=3)
    print(calibration.describe(need * CONTENDED_CACHED_PATH_COST, guests=3))
    machines = ["e8ds-v4-temp", "e8ds-v4-os-readwrite", "e8ds-v4-os-nocache"]
    with open_cloud(lab, guest_lab, scale) as (arm, labcloud):
        labcloud.remote_latency = True  # before any VM boots: its managed disks are remote
        # time-based: the seed's jobs end at 60 s or at their size (GiBs); the lab's files are MiBs, and a QD1 job
        # on the cache finished its 4 MiB inside the 1 s ramp, where fio counts no latency (N=0, no percentiles)
        doc = run(arm, labcloud, tmp_path, "e8-family", 3, *[a for m in machines for a in ("--machine", m)],
                  "--set", "defaults.time_based=true",
                  size=lab_size(p4.mbps * scale), iodepth=lab_iodepth(p4.burst_iops * scale))
        os_cap = labcloud.specs["e8ds-v4-os-nocache"].os_disk
        cached_cap = iops_cap(labcloud.specs["e8ds-v4-temp"].vm_cached)
    remote_us = remote_latency_ms("Premium_LRS", scale) * 1000
    assert os_cap is not None and os_cap.latency_ms * 1000 == pytest.approx(remote_us)
    assert os_cap is not None and os_cap.cap is not None and os_cap.cap.burst_iops is not None
    base, burst = iops_cap(os_cap.cap), os_cap.cap.burst_iops
    # QD1 first: the shape the remote latency is for (the IOPS shapes below catch a cache left off too)
    qd1 = {m: _on(doc, m, "sync-os")["clat_us"]["p50"] for m in ("e8ds-v4-os-readwrite", "e8ds-v4-os-nocache")}
    print(f"QD1 p50: {qd1}; the remote disk's emulated latency {remote_us:,.0f} us (scale {scale})")
    between(qd1["e8ds-v4-os-nocache"], FIO_BIN * remote_us, remote_us + GUEST_PATH_US,
            "uncached QD1 p50 (the remote latency ..+ the guest's path)")
    between(qd1["e8ds-v4-os-readwrite"], 0, remote_us / 2, "ReadWrite-cached QD1 p50 (the host answers)")
    assert qd1["e8ds-v4-os-nocache"] > 2 * qd1["e8ds-v4-os-readwrite"], qd1
    nocache = _on(doc, "e8ds-v4-os-nocache", "async-os")
    cached = {m: _on(doc, m, w)["iops"] for m, w in (("e8ds-v4-os-readwrite", "async-os"), ("e8ds-v4-temp", "async"))}
    print(f"async: uncached P4 {nocache['iops']:,.0f} (baseline {base}, burst {burst}), {cached} (cached cap "
          f"{cached_cap})")
    between(nocache["iops"], AT_CAP[0] * base, 1.1 * burst, "uncached P4 OS disk (baseline..burst)", nocache)
    for machine, workload in (("e8ds-v4-os-readwrite", "async-os"), ("e8ds-v4-temp", "async")):
        res = _on(doc, machine, workload)
        between(res["iops"], 1.5 * burst, AT_CAP[1] * cached_cap, f"{machine} {workload} (1.5 x P4 burst..cached cap)",
                res)


def test_l_series_and_ephemeral_os(lab: Lab, guest_lab: GuestLab, calibration: Calibration, tmp_path: Path) -> None:
    """L8s_v2's local NVMe formatted ext4 at /mnt/nvme, the ephemeral OS disk at the VM's cached limit,
    and a size with no temp disk whose HDD OS disk is cached ReadWrite: each writes well above what a
    P4 OS disk gives even in its burst (a regular OS disk would not pass), and no guest above its caps."""
    p4 = disk_tier("Premium_LRS", 32)
    assert p4.burst_iops is not None
    need = 1.5 * p4.burst_iops
    scale = calibration.scale(need * CONTENDED_CACHED_PATH_COST, guests=3)
    print(calibration.describe(need * CONTENDED_CACHED_PATH_COST, guests=3))
    machines = ["l8s-v2-nvme", "e8ds-v4-ephemeral-os", "e8-v4-no-temp"]
    with open_cloud(lab, guest_lab, scale) as (arm, labcloud):
        doc = run(arm, labcloud, tmp_path, "e8-family", 3, *[a for m in machines for a in ("--machine", m)],
                  size=lab_size(p4.mbps * scale), iodepth=lab_iodepth(p4.burst_iops * scale))
        specs = dict(labcloud.specs)
    assert {(r["host"], r["workload"]) for r in doc["results"] if r["direction"] == "write"} == {
        ("l8s-v2-nvme", "sync"), ("l8s-v2-nvme", "async-nvme"), ("e8ds-v4-ephemeral-os", "sync-os"),
        ("e8ds-v4-ephemeral-os", "async-os"), ("e8-v4-no-temp", "sync-os"), ("e8-v4-no-temp", "async-os")}
    p4_burst = p4.burst_iops * scale  # what the VM's OS disk would give at most, were it a P4
    ephemeral = specs["e8ds-v4-ephemeral-os"]
    assert ephemeral.os_disk is not None and ephemeral.os_disk.cap is None  # no disk tier at all
    between(_on(doc, "e8ds-v4-ephemeral-os", "async-os")["iops"], 1.5 * p4_burst,
            AT_CAP[1] * iops_cap(ephemeral.vm_cached), "ephemeral OS disk (1.5 x P4 burst..cached cap)")
    hdd = specs["e8-v4-no-temp"].os_disk
    assert hdd is not None and hdd.cap is not None and hdd.caching == "ReadWrite"
    # E8_v4 publishes no cached limit: nothing caps its ReadWrite cache but the guest itself, so the top
    # of this band is what a guest reached unthrottled, with TCG's swing between two moments (1.5x)
    ceiling = 1.5 * calibration.iops
    between(_on(doc, "e8-v4-no-temp", "async-os")["iops"], 1.5 * p4_burst, ceiling,
            "ReadWrite-cached S4 OS disk (1.5 x P4 burst..unthrottled)")
    between(_on(doc, "l8s-v2-nvme", "async-nvme")["iops"], 1.5 * p4_burst, ceiling, "local NVMe (unthrottled)")
    assert doc["run"]["targets"]["l8s-v2-nvme/nvme:all"]["fstype"] == "ext4"


def test_l_series_nvme_stripes_every_local_nvme(lab: Lab, guest_lab: GuestLab, tmp_path: Path) -> None:
    """l-series-nvme on an L32s_v2: its four local NVMe devices found by the Azure device map, striped
    with md RAID0 (four members in the run record, each given its share of the writes by the guest's
    kernel), formatted xfs and mounted at /mnt/nvme; the array is gone from the guest afterwards.
    No cap is asserted (the lab leaves local NVMe unthrottled), so no calibration."""
    with open_cloud(lab, guest_lab, 0.1) as (arm, labcloud):
        doc = run(arm, labcloud, tmp_path, "l-series-nvme", 1, "--set", "machines[0].size=Standard_L32s_v2")
        assert {(r["workload"], r["direction"]) for r in doc["results"]} >= {
            ("randread-4k", "read"), ("randwrite-4k", "write")}
        assert sum(d.bus == "nvme" for d in labcloud.specs["l8s-v2"].disks) == 4
        assert doc["run"]["targets"]["l8s-v2/nvme:all"]["fstype"] == "xfs"
        stripe_members(doc, "l8s-v2/nvme:all", labcloud.booted["l8s-v2"], [f"nvme{i}" for i in range(4)], 4)


# --- a v6 size as it really is (issue 29 §2) ---------------------------------------------------------

V6_PROFILE = """\
name: lab-v6
description: a v6 size - data disks are namespaces of one NVMe controller, found by LUN; the temp disk comes raw
defaults: {ioengine: libaio, direct: true, bs: 4k, iodepth: 4, numjobs: 1, size: 8M, runtime: 2s, ramp_time: 0s,
           time_based: true}
machines:
  - name: d2ds-v6
    region: westeurope
    size: Standard_D2ds_v6
    os_disk: {type: Premium_LRS, caching: ReadWrite}
    data_disks: [{count: 2, type: Premium_LRS, size_gb: 128, caching: None}]
    targets:
      data: {lun: 1}
      scratchpad: temp
workloads:
  - {name: lun1-write, rw: randwrite, targets: [data]}
  - {name: temp-write, rw: randwrite, targets: [scratchpad]}
"""


def test_v6_data_disks_by_lun_and_the_raw_nvme_temp_disk(lab: Lab, guest_lab: GuestLab, tmp_path: Path) -> None:
    """Standard_D2ds_v6 through the fake cloud into a v6-shaped guest: the VM body asks for the NVMe
    controller; LUN 1 is namespace 3 of the remote controller ("MSFT NVMe Accelerator v1.0"), found as
    /dev/disk/azure/data/by-lun/1; the temp disk, a raw "Microsoft NVMe Direct Disk v2", is made ext4 and
    mounted by diskbench and released afterwards. No cap is asserted (so no calibration)."""
    (tmp_path / "v6.yaml").write_text(V6_PROFILE)
    with open_cloud(lab, guest_lab, 0.1) as (arm, labcloud):
        doc = json.loads(run_cli(arm, labcloud, tmp_path, str(tmp_path / "v6.yaml"), 1).stdout)
        targets = doc["run"]["targets"]
        (lun1,) = [f"/dev/{d['name']}" for d in targets["d2ds-v6/data"]["devices"]]  # the record says nvme0n3
        (temp,) = [f"/dev/{d['name']}" for d in targets["d2ds-v6/scratchpad"]["devices"]]
        facts = labcloud.booted["d2ds-v6"].check(
            f"for d in {lun1} {temp}; do n=${{d#/dev/}}; echo $n $(cat /sys/class/block/$n/nsid) "
            f"$(readlink -f /sys/class/block/$n | grep -o '0000:00:[0-9a-f]*\\.0' | tail -1); done; "
            f"readlink -f /dev/disk/azure/data/by-lun/1 /dev/disk/azure/os; echo $(ls /dev/disk/azure); "
            f"lsblk -d -n -o MODEL {lun1}; lsblk -d -n -o MODEL {temp}; blkid -p -s TYPE -o value {temp}; "
            "findmnt -rn -o TARGET | grep -c diskbench || true").splitlines()
        body, spec = labcloud.bodies["d2ds-v6"], labcloud.specs["d2ds-v6"]
    assert body["properties"]["storageProfile"]["diskControllerType"] == "NVMe"
    assert spec.disk_controller == "NVMe" and spec.temp is None and len(spec.temp_nvme) == 1
    assert {(r["workload"], r["direction"]) for r in doc["results"]} == {("lun1-write", "write"),
                                                                        ("temp-write", "write")}
    assert all(r["ios"] > 0 for r in doc["results"])
    assert targets["d2ds-v6/scratchpad"]["fstype"] == "ext4"
    print("\n".join(facts))
    assert facts[0] == f"{lun1.removeprefix('/dev/')} 3 0000:00:07.0"  # LUN 1: namespace 3 of the remote controller
    assert facts[1] == f"{temp.removeprefix('/dev/')} 1 0000:00:1a.0"  # the temp disk: its own controller
    assert facts[2] == lun1 and facts[3].endswith("n1") and facts[3] != temp  # by-lun/1; the OS disk: namespace 1
    assert sorted(facts[4].split()) == ["data", "local", "os"]  # azure-vm-utils' names; no scsi1, no resource
    assert [m.strip() for m in facts[5:7]] == ["MSFT NVMe Accelerator v1.0", "Microsoft NVMe Direct Disk v2"]
    assert facts[7] == "ext4" and facts[8] == "0"  # formatted by the run, unmounted after it
