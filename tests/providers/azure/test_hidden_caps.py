"""plan warns when a VM size's cap stops a job before the disk cap it means to measure (issue 29 §4).

Seed 003's P30 stops at its own 200 MB/s with 256 KiB reads; on a Standard_D8ds_v4 the VM's uncached
192 MB/s stops it first. Every figure asserted here is read from the tests' own table of Azure's pages
(``lab_limits.py``), never from diskbench's tables.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from diskbench.expand import build_plan
from diskbench.planning import PlanReport, report
from diskbench.profile import load_profile
from diskbench.providers.azure import hidden_caps

from .lab_limits import disk_tier, vm_size

SEED_003_CACHED_READ_IOPS = 32_000  # "Read IOPS is now showing ~32000" (the Standard disk with read caching)

PROFILE = """\
name: hidden
defaults: {ioengine: libaio, direct: true, size: 8G, runtime: 60s, ramp_time: 5s}
machines:
  - name: old-size
    region: westeurope
    size: SIZE
    data_disks:
      - {type: Premium_LRS, size_gb: 1024, caching: CACHING}
    targets:
      p30: {lun: 0, fs: xfs}
workloads:
  - {name: randread-8k, rw: randread, bs: 8k, iodepth: 32}
  - {name: randread-256k, rw: randread, bs: 256k, iodepth: 8DELIBERATE}
"""


def _report(tmp_path: Path, size: str = "Standard_D8ds_v4", caching: str = "None", deliberate: str = "",
            text: str = PROFILE) -> PlanReport:
    path = tmp_path / "hidden.yaml"
    path.write_text(text.replace("SIZE", size).replace("CACHING", caching).replace("DELIBERATE", deliberate))
    return report(build_plan(load_profile(str(path))))


def test_a_p30_on_a_d8ds_v4_warns_that_the_vms_cap_hides_the_disks(tmp_path: Path) -> None:
    vm, p30, larger = vm_size("Standard_D8ds_v4"), disk_tier("Premium_LRS", 1024), vm_size("Standard_D16ds_v4")
    assert p30.tier == "P30" and p30.mbps > vm.uncached_mbps  # 200 > 192: the premise
    assert p30.iops < vm.uncached_iops  # 5,000 < 12,800: 8k reads show the disk's cap
    (warning,) = _report(tmp_path).warnings
    assert warning == (f"old-size: randread-256k on p30 stops at Standard_D8ds_v4 uncached {vm.uncached_mbps} MB/s, "
                       f"below P30 {p30.mbps} MB/s, the disk's own cap at 256k; it measures the VM, not the disk "
                       f"(choose a larger size, e.g. Standard_D16ds_v4 uncached {larger.uncached_iops:,} IOPS / "
                       f"{larger.uncached_mbps} MB/s)")
    assert larger.uncached_mbps > p30.mbps  # the size it names clears the disk


def test_the_suggested_size_ends_the_warning(tmp_path: Path) -> None:
    assert _report(tmp_path, size="Standard_D16ds_v4").warnings == []


def test_a_cached_disk_is_set_against_the_vms_cached_cap(tmp_path: Path) -> None:
    vm, p30 = vm_size("Standard_D2ds_v4"), disk_tier("Premium_LRS", 1024)
    (warning,) = _report(tmp_path, size="Standard_D2ds_v4", caching="ReadOnly").warnings
    assert f"randread-256k on p30 stops at Standard_D2ds_v4 cached+temp {vm.cached_mbps} MB/s, below P30 " \
           f"{p30.mbps} MB/s" in warning
    assert "e.g. Standard_D4ds_v4 cached+temp " in warning  # the next size of the family


def test_a_workload_that_measures_the_vm_on_purpose_gets_a_note(tmp_path: Path) -> None:
    said = _report(tmp_path, deliberate=", deliberate: {vm_cap: the VM's cap is the point}")
    assert said.warnings == []
    (note,) = [n for n in said.notes if "randread-256k" in n]
    assert note.endswith("the disk's own cap at 256k, on purpose: the VM's cap is the point")


def test_a_stripe_sums_its_disks_and_a_rate_below_the_vms_cap_hides_nothing(tmp_path: Path) -> None:
    vm, p30 = vm_size("Standard_D8ds_v4"), disk_tier("Premium_LRS", 1024)
    stripe = PROFILE.replace("{type: Premium_LRS, size_gb: 1024, caching: CACHING}",
                             "{count: 3, type: Premium_LRS, size_gb: 1024, caching: None}")
    stripe = stripe.replace("{lun: 0, fs: xfs}", "{luns: [0, 1, 2], fs: xfs}")
    writes = stripe.split("workloads:")[0] + ("workloads:\n  - {name: max-write, rw: randwrite, bs: 4k, "
                                              "iodepth: 256, numjobs: 4RATE}\n")
    (warning,) = _report(tmp_path, text=writes.replace("RATE", "")).warnings
    assert f"stops at Standard_D8ds_v4 uncached {vm.uncached_iops:,} IOPS, below 3 x P30 {3 * p30.iops:,} IOPS, " \
           "the disks' own cap at 4k; it measures the VM, not the disks" in warning
    held = f", rate_iops: {vm.uncached_iops // 4}"  # four jobs at the VM's cap together: Azure's writer1
    assert _report(tmp_path, text=writes.replace("RATE", held)).warnings == []


@pytest.mark.parametrize("profile", ["premium-cache", "premium-cache-windows"])
def test_the_seed_003_profiles_show_each_disks_own_cap(profile: str) -> None:
    """The size the profiles run on clears the P30 (uncached) and the Standard HDD's cache (cached), so plan
    says nothing of a hidden cap, and the article's figures can show."""
    (machine,) = load_profile(profile).profile.machines
    vm, p30 = vm_size(machine.size), disk_tier("Premium_LRS", 1024)
    hdd = disk_tier("Standard_LRS", 1024)
    assert vm.uncached_iops > p30.iops and vm.uncached_mbps > p30.mbps
    assert vm.cached_iops > SEED_003_CACHED_READ_IOPS and vm.cached_mbps > hdd.mbps
    assert vm.temp_gib > 0  # "Test 7 - Using the Local D: temp disk"
    plan = build_plan(load_profile(profile))
    assert hidden_caps.plan_advice(plan) == []
    assert report(plan).warnings == []
