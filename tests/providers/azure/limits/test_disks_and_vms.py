"""Azure limit arithmetic against the published figures (tier tables, v2/Ultra rules, the seeds' VM sizes)."""

from __future__ import annotations

import math

import pytest

from diskbench.attribution.limit import Limit
from diskbench.errors import DiskbenchError
from diskbench.providers.azure.limits.disks import (
    LimitsError,
    burst_seconds,
    disk_limits,
    effective_iops,
    size_names,
    tier_for,
    vm_limits,
)
from diskbench.providers.azure.limits.targets import DiskSpec, MachineSpec, TargetSpec, target_limits
from diskbench.providers.azure.sizes import lookup

# includes/disk-storage-premium-ssd-sizes.md, ms.date 03/16/2023: tier, GiB, IOPS, MB/s
PREMIUM = [("P1", 4, 120, 25), ("P2", 8, 120, 25), ("P3", 16, 120, 25), ("P4", 32, 120, 25), ("P6", 64, 240, 50),
           ("P10", 128, 500, 100), ("P15", 256, 1100, 125), ("P20", 512, 2300, 150), ("P30", 1024, 5000, 200),
           ("P40", 2048, 7500, 250), ("P50", 4096, 7500, 250), ("P60", 8192, 16000, 500),
           ("P70", 16384, 18000, 750), ("P80", 32767, 20000, 900)]


@pytest.mark.parametrize(("tier", "gib", "iops", "mbps"), PREMIUM)
def test_premium_ssd_table(tier: str, gib: int, iops: int, mbps: int) -> None:
    d = disk_limits("Premium_LRS", gib)
    assert (d.tier, d.size_gib, d.iops, d.mbps) == (tier, gib, iops, mbps)
    assert d.io_unit_bytes == 256 * 1024 and "disk-storage-premium-ssd-sizes.md" in d.source
    if gib <= 512:  # credit bursting: P20 and smaller, 3,500 IOPS / 170 MB/s for 30 minutes
        assert (d.burst_iops, d.burst_mbps, d.burst_minutes, d.burst_model) == (3500, 170, 30, "credit")
    else:
        assert d.burst_iops is None
        on_demand = disk_limits("Premium_LRS", gib, on_demand_burst=True)
        assert (on_demand.burst_iops, on_demand.burst_mbps, on_demand.burst_minutes) == (30000, 1000, None)


def test_tier_is_the_smallest_that_fits() -> None:
    assert tier_for("Premium_LRS", 1) == "P1"
    assert tier_for("Premium_LRS", 32) == "P4"
    assert tier_for("Premium_LRS", 33) == "P6"
    assert tier_for("Premium_LRS", 129) == "P15"
    assert tier_for("premium_zrs", 32767) == "P80"
    assert tier_for("StandardSSD_LRS", 200) == "E15"  # disks-types.md: a 200 GiB Standard SSD is billed as E15
    assert tier_for("Standard_LRS", 10) == "S4"  # the HDD table starts at S4
    with pytest.raises(LimitsError, match="up to 32,767 GiB"):
        disk_limits("Premium_LRS", 32768)


def test_standard_ssd_and_hdd() -> None:
    e10 = disk_limits("StandardSSD_LRS", 128)
    assert (e10.tier, e10.iops, e10.mbps, e10.burst_iops, e10.burst_mbps) == ("E10", 500, 60, 600, 150)
    e30 = disk_limits("StandardSSD_LRS", 1024)
    assert (e30.burst_iops, e30.burst_mbps, e30.burst_minutes) == (1000, 250, 30)
    assert disk_limits("StandardSSD_LRS", 2048).burst_iops is None
    e80 = disk_limits("StandardSSD_LRS", 32767)
    assert (e80.iops, e80.mbps) == (6000, 750)
    s4 = disk_limits("Standard_LRS", 32)
    assert (s4.tier, s4.iops, s4.mbps, s4.burst_iops, s4.io_unit_bytes) == ("S4", 500, 60, None, None)
    assert (disk_limits("Standard_LRS", 32767).iops, disk_limits("Standard_LRS", 32767).mbps) == (2000, 500)


def test_large_io_counts_several_times() -> None:
    assert effective_iops(5000, 4096) == 5000
    assert effective_iops(800, 256 * 1024) == 800
    assert effective_iops(200, 1024 * 1024) == 800
    assert effective_iops(100, 257 * 1024) == 200
    with pytest.raises(ValueError):
        effective_iops(1, 0)


def test_credit_bucket_lasts_30_minutes_at_the_burst_rate() -> None:
    p4 = disk_limits("Premium_LRS", 32)
    assert burst_seconds(p4, 3500) == pytest.approx(1800)
    assert burst_seconds(p4, 9999) == pytest.approx(1800)  # cannot spend faster than the burst cap
    assert burst_seconds(p4, 120 + 3380 / 2) == pytest.approx(3600)
    assert burst_seconds(p4, 100) == math.inf
    assert burst_seconds(disk_limits("Premium_LRS", 1024), 6000) is None


def test_premium_ssd_v2_rules() -> None:
    d = disk_limits("PremiumV2_LRS", 64)
    assert (d.iops, d.mbps, d.tier, d.host_caching) == (3000, 125, "PremiumV2", False)  # the free baseline
    assert disk_limits("PremiumV2_LRS", 8, 4000).iops == 4000  # "an 8-GiB disk can have up to 4,000 IOPS"
    assert disk_limits("PremiumV2_LRS", 10, 5000).iops == 5000
    assert disk_limits("PremiumV2_LRS", 160, 80000).iops == 80000  # 80,000 needs at least 160 GiB
    with pytest.raises(LimitsError, match="a 159 GiB Premium SSD v2 takes 3,000-79,500 IOPS, not 80,000"):
        disk_limits("PremiumV2_LRS", 159, 80000)
    with pytest.raises(LimitsError, match="3,000-3,000 IOPS"):
        disk_limits("PremiumV2_LRS", 6, 3001)
    assert disk_limits("PremiumV2_LRS", 64, 3000, 750).mbps == 750  # 3,000 IOPS allow 750 MB/s
    with pytest.raises(LimitsError, match="125-750 MB/s"):
        disk_limits("PremiumV2_LRS", 64, 3000, 751)
    assert disk_limits("PremiumV2_LRS", 64, 8000, 2000).mbps == 2000  # 2026-08 page: up to 2,000 MB/s
    with pytest.raises(LimitsError, match="125-1,200 MB/s"):  # the 2022 page: up to 1,200 MB/s
        disk_limits("PremiumV2_LRS", 64, 8000, 2000, doc_version="2022-06-17")
    assert disk_limits("PremiumV2_LRS", 64, 8000, 1200, doc_version="2022-06-17").doc_version == "2022-06-17"
    with pytest.raises(LimitsError, match="bundled: 2026-08-11, 2022-06-17"):
        disk_limits("PremiumV2_LRS", 64, doc_version="2019-01-01")


def test_ultra_rules() -> None:
    with pytest.raises(LimitsError, match="give the disk's iops and mbps"):
        disk_limits("UltraSSD_LRS", 1024)
    assert disk_limits("UltraSSD_LRS", 4, 4000, 1000).iops == 4000  # the table's 4 GiB row: 4,000 / 1,000
    with pytest.raises(LimitsError, match="100-4,000 IOPS"):
        disk_limits("UltraSSD_LRS", 4, 4001, 100)
    with pytest.raises(LimitsError, match="1-1,000 MB/s"):
        disk_limits("UltraSSD_LRS", 4, 4000, 1001)
    assert disk_limits("UltraSSD_LRS", 512, 400000, 10000).iops == 400000  # capped at 400,000 / 10,000
    with pytest.raises(LimitsError, match="100-400,000 IOPS"):
        disk_limits("UltraSSD_LRS", 1024, 400001, 10000)
    # the 2022 page: 300 IOPS per GiB up to 160,000 (its table: 4 GiB 1,200; 512 GiB 153,600; 1 TiB+ 160,000)
    old = "2022-06-17"
    assert disk_limits("UltraSSD_LRS", 4, 1200, 300, doc_version=old).iops == 1200
    with pytest.raises(LimitsError, match="100-153,600 IOPS"):
        disk_limits("UltraSSD_LRS", 512, 153601, 300, doc_version=old)
    with pytest.raises(LimitsError, match="100-160,000 IOPS"):
        disk_limits("UltraSSD_LRS", 2048, 160001, 300, doc_version=old)


def test_unknown_disk_type_is_one_line_with_a_fix() -> None:
    with pytest.raises(DiskbenchError) as err:
        disk_limits("Premium_SSD", 32)
    assert str(err.value).startswith("unknown disk type 'Premium_SSD' (use one of Premium_LRS, Premium_ZRS")
    assert "\n" not in str(err.value)


# The seeds' sizes (size pages; cached+temp from the legacy series pages): uncached, burst, cached, temp
SEED_SIZES = {
    "Standard_D8ds_v4": ((12800, 192), (16000, 400), (77000, 485), 300, (38000, 500)),
    "Standard_E8ds_v4": ((12800, 192), (16000, 400), (77000, 485), 300, (38000, 500)),
    "Standard_E8as_v4": ((12800, 192), (16000, 400), (16000, 128), 128, (16000, 128)),
    "Standard_E8s_v4": ((12800, 192), (16000, 400), (77000, 485), 0, (None, None)),
    "Standard_E8_v4": ((12800, 192), (16000, 400), (None, None), 0, (None, None)),
    "Standard_L8s_v2": ((8000, 160), (8000, 1280), (None, None), 80, (4000, 80)),
}


@pytest.mark.parametrize("name", sorted(SEED_SIZES))
def test_seed_vm_sizes(name: str) -> None:
    uncached, burst, cached, temp, temp_read = SEED_SIZES[name]
    vm = vm_limits(name)
    assert vm is not None
    assert (vm.uncached_iops, vm.uncached_mbps) == uncached
    assert (vm.burst_iops, vm.burst_mbps) == burst
    assert (vm.cached_iops, vm.cached_mbps) == cached
    assert (vm.temp_gib, (vm.temp_read_iops, vm.temp_read_mbps)) == (temp, temp_read)
    assert vm.source.startswith("MicrosoftDocs/") and "ms.date" in vm.doc_version


def test_l_series_nvme() -> None:
    l8 = vm_limits("Standard_L8s_v2")
    assert l8 is not None and (l8.nvme_disks, l8.nvme_read_iops, l8.nvme_read_mbps, l8.host_caching) == (
        1, 400000, 2000, False)
    l80 = vm_limits("standard_l80s_v2")
    assert l80 is not None and (l80.nvme_disks, l80.nvme_read_iops, l80.uncached_iops, l80.uncached_mbps) == (
        10, 3800000, 80000, 1400)
    l8v3, l8av3 = vm_limits("L8s_v3"), vm_limits("L8as_v3")
    assert l8v3 is not None and (l8v3.uncached_mbps, l8v3.burst_iops, l8v3.nvme_read_iops) == (290, 20000, 400000)
    assert l8av3 is not None and (l8av3.uncached_mbps, l8av3.burst_mbps) == (200, 1280)
    l8v4 = vm_limits("Standard_L8s_v4")  # no SCSI temp disk: its four NVMe disks are the temp disks
    assert l8v4 is not None and (l8v4.temp_gib, l8v4.nvme_disks, l8v4.temp_nvme) == (0, 4, True)
    assert (l8v4.nvme_read_iops, l8v4.nvme_read_mbps, l8v4.nvme_write_iops, l8v4.nvme_write_mbps) == (
        550000, 3000, 220000, 1500)


def test_current_families() -> None:
    d8s5, d8ds5, d8as5 = vm_limits("Standard_D8s_v5"), vm_limits("Standard_D8ds_v5"), vm_limits("Standard_D8as_v5")
    assert d8s5 is not None and (d8s5.uncached_iops, d8s5.uncached_mbps, d8s5.burst_iops, d8s5.burst_mbps) == (
        12800, 290, 20000, 1200)
    assert d8s5.temp_gib == 0 and d8s5.ephemeral_placements == ()
    assert d8ds5 is not None and (d8ds5.temp_gib, d8ds5.temp_read_iops, d8ds5.cached_iops) == (300, 38000, None)
    assert d8as5 is not None and (d8as5.uncached_mbps, d8as5.burst_mbps) == (200, 600)
    e104 = vm_limits("Standard_E104is_v5")
    assert e104 is not None and (e104.uncached_iops, e104.uncached_mbps, e104.max_data_disks) == (120000, 4000, 64)
    assert vm_limits("Standard_E8ds_v5").temp_read_mbps == 500  # type: ignore[union-attr]
    d8s6, d8ds6 = vm_limits("Standard_D8s_v6"), vm_limits("Standard_D8ds_v6")
    assert d8s6 is not None and (d8s6.uncached_mbps, d8s6.burst_iops, d8s6.ultra_v2_iops, d8s6.ultra_v2_mbps) == (
        424, 40000, 16667, 496)
    assert d8ds6 is not None and d8ds6.temp_nvme and d8ds6.temp_gib == 440
    assert (d8ds6.temp_read_iops, d8ds6.temp_read_mbps, d8ds6.temp_write_iops, d8ds6.temp_write_mbps) == (
        150000, 720, 60000, 360)
    assert vm_limits("Standard_D64ds_v6").temp_gib == 4 * 880  # type: ignore[union-attr]
    assert vm_limits("Standard_D8ds_v9") is None


def test_every_size_names_its_document() -> None:
    for name in size_names():
        vm = vm_limits(name)
        assert vm is not None and vm.source.startswith("MicrosoftDocs/"), name
        assert vm.doc_version != "unknown", name
        assert vm.uncached_iops or not vm.premium_io, name


def test_capabilities_still_read_the_bundle() -> None:
    d8s5 = lookup("Standard_D8s_v5")
    assert d8s5 is not None and (d8s5.uncached_iops, d8s5.uncached_mbps, d8s5.temp_disk_gb) == (12800, 290, 0)
    e8ds = lookup("Standard_E8ds_v4")
    assert e8ds is not None and (e8ds.cached_iops, e8ds.uncached_iops, e8ds.temp_disk_gb) == (77000, 12800, 300)


D8DS = MachineSpec("Standard_D8ds_v4", os_disk=DiskSpec("Premium_LRS", 32, "ReadWrite"), data_disks=(
    DiskSpec("Premium_LRS", 1024, "None", lun=0), DiskSpec("Premium_LRS", 1024, "None", lun=1),
    DiskSpec("Premium_LRS", 1024, "None", lun=2), DiskSpec("Premium_LRS", 1024, "ReadOnly", lun=3)))


def _by_kind(limits: list[Limit]) -> dict[str, Limit]:
    return {lim.kind: lim for lim in limits}


def test_stripe_uncached_is_min_of_disk_sum_and_vm() -> None:
    got = _by_kind(target_limits(D8DS, TargetSpec("lun", (0, 1, 2)), "write"))
    assert got["vm_uncached_iops"].value == 12800 and got["vm_uncached_mbps"].value == 192
    assert got["disk_iops"].value == 15000 and got["disk_iops"].scope == "3 x P30"
    assert got["disk_mbps"].value == 600
    assert got["vm_burst_iops"].burst and got["vm_burst_iops"].value == 16000
    assert "disk_burst_iops" not in got  # P30 has no credit burst
    effective = min(got["vm_uncached_iops"].value, got["disk_iops"].value)
    assert effective == 12800


def test_read_only_cache_reaches_the_vm_cached_limit() -> None:
    reads = target_limits(D8DS, TargetSpec("lun", (3,)), "read")
    got = _by_kind(reads)
    assert got["vm_cached_iops"].value == 77000 and got["vm_cached_mbps"].value == 485
    assert got["disk_iops"].value == 5000 and got["disk_iops"].cache_miss_only
    assert "vm_uncached_iops" not in got
    writes = _by_kind(target_limits(D8DS, TargetSpec("lun", (3,)), "write"))
    assert not writes["disk_iops"].cache_miss_only  # ReadOnly: writes go through to the disk
    rw_os = _by_kind(target_limits(D8DS, TargetSpec("os"), "write"))
    assert rw_os["disk_iops"].cache_miss_only and rw_os["disk_iops"].value == 120


def test_os_disk_without_cache_has_disk_and_vm_burst() -> None:
    e8ds = MachineSpec("Standard_E8ds_v4", os_disk=DiskSpec("Premium_LRS", 32, "None"))
    got = _by_kind(target_limits(e8ds, TargetSpec("os"), "write"))
    assert (got["disk_iops"].value, got["disk_burst_iops"].value) == (120, 3500)
    assert got["disk_burst_iops"].minutes == 30 and got["disk_burst_iops"].burst
    assert got["vm_burst_iops"].value == 16000


def test_temp_ephemeral_and_nvme_targets() -> None:
    e8ds = MachineSpec("Standard_E8ds_v4")
    reads = _by_kind(target_limits(e8ds, TargetSpec("temp"), "read"))
    assert (reads["temp_iops"].value, reads["vm_cached_iops"].value) == (38000, 77000)
    writes = _by_kind(target_limits(e8ds, TargetSpec("temp"), "write"))
    assert "temp_iops" not in writes  # only random-read figures are published for v4 temp disks
    assert writes["vm_cached_iops"].value == 77000
    eph = MachineSpec("Standard_E8ds_v4", ephemeral_os="CacheDisk")
    assert {lim.kind for lim in target_limits(eph, TargetSpec("os"))} == {"vm_cached_iops", "vm_cached_mbps"}
    with pytest.raises(LimitsError, match="Standard_E8s_v4 has no temp disk"):
        target_limits(MachineSpec("Standard_E8s_v4"), TargetSpec("temp"))
    l8 = MachineSpec("Standard_L8s_v2")
    assert [(lim.kind, lim.value) for lim in target_limits(l8, TargetSpec("nvme"), "read")] == [
        ("nvme_iops", 400000), ("nvme_mbps", 2000)]
    assert target_limits(l8, TargetSpec("nvme"), "write") == []  # NVMe write figures are not published
    half = _by_kind(target_limits(MachineSpec("Standard_L32s_v2"), TargetSpec("nvme", nvme_devices=2), "read"))
    assert half["nvme_iops"].value == 750000
    lsv4 = _by_kind(target_limits(MachineSpec("Standard_L8s_v4"), TargetSpec("temp"), "write"))
    assert lsv4["temp_iops"].value == 220000
    d8ds6 = _by_kind(target_limits(MachineSpec("Standard_D8ds_v6"), TargetSpec("temp"), "write"))
    assert (d8ds6["temp_iops"].value, d8ds6["temp_mbps"].value) == (60000, 360)


def test_premium_v2_uses_the_separate_vm_caps_of_v6_sizes() -> None:
    m = MachineSpec("Standard_D8s_v6", data_disks=(DiskSpec("PremiumV2_LRS", 200, lun=0, iops=20000, mbps=500),))
    got = _by_kind(target_limits(m, TargetSpec("lun", (0,)), "read"))
    assert (got["vm_uncached_iops"].value, got["vm_uncached_mbps"].value) == (16667, 496)
    assert got["disk_iops"].value == 20000 and got["disk_iops"].scope == "PremiumV2 20,000 IOPS/500 MB/s"


def test_machine_mistakes_are_one_line_errors() -> None:
    with pytest.raises(LimitsError, match="no data disk at LUN 7"):
        target_limits(D8DS, TargetSpec("lun", (7,)))
    mixed = TargetSpec("lun", (2, 3))
    with pytest.raises(LimitsError, match="mixes host caching"):
        target_limits(D8DS, mixed)
    with pytest.raises(LimitsError, match="not in diskbench's size data"):
        target_limits(MachineSpec("Standard_D8ds_v9"), TargetSpec("temp"))
    with pytest.raises(LimitsError, match="has no local NVMe disks"):
        target_limits(D8DS, TargetSpec("nvme"))
