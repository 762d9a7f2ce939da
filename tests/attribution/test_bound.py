"""Which limit bound a result: the seeds' shapes on their machines, and results bound by nothing on the platform."""

from __future__ import annotations

from diskbench.attribution.bound import BOUND_KINDS, Measured, decide_bound
from diskbench.attribution.limit import Limit
from diskbench.attribution.phases import detect_burst
from diskbench.model import DirectionResult, Latency, Series
from diskbench.providers.azure.limits.targets import DiskSpec, MachineSpec, TargetSpec, target_limits

MiB = 1024 * 1024
P30 = DiskSpec("Premium_LRS", 1024)
D8DS = MachineSpec("Standard_D8ds_v4", os_disk=DiskSpec("Premium_LRS", 32, "ReadWrite"), data_disks=(
    DiskSpec("Premium_LRS", 1024, "None", lun=0), DiskSpec("Premium_LRS", 1024, "None", lun=1),
    DiskSpec("Premium_LRS", 1024, "None", lun=2), DiskSpec("Premium_LRS", 1024, "ReadOnly", lun=3)))
E8DS_OS_NONE = MachineSpec("Standard_E8ds_v4", os_disk=DiskSpec("Premium_LRS", 32, "None"))


def _limits(machine: MachineSpec, target: TargetSpec) -> list[Limit]:
    return target_limits(machine, target)


def test_striped_writes_are_bound_by_the_vm_not_the_disks() -> None:
    # seed 001: DiskSpd -w100 -b8K -F4 -o128 on 3 x P30 striped, caching None: 13,052.65 IOPS, 101.97 MiB/s
    m = Measured("write", iops=13052.65, mbps=101.97 * MiB / 1e6, bs_bytes=8192, duration_s=30, iodepth=128, jobs=4,
                 cpu_pct=20, cpus=8)
    b = decide_bound(m, _limits(D8DS, TargetSpec("lun", (0, 1, 2))))
    assert (b.kind, b.limit, b.limit_kind) == ("vm_uncached", 12800, "vm_uncached_iops")
    assert round(b.ratio or 0, 3) == 1.020
    assert b.text == ("write 13,053 IOPS = 102.0% of Standard_D8ds_v4 uncached 12,800 IOPS: bound by the VM, "
                      "not the 3 x P30 (15,000)")
    assert "ddsv4-series.md" in b.source


def test_uncached_os_disk_at_3499_iops_is_a_p4_burst() -> None:
    # seed 000: async-os.ini on the E8ds_v4's 32 GiB P4 OS disk, caching None: 3,499 IOPS at 8k (27.3 MiB/s)
    m = Measured("write", iops=3499, mbps=27.3 * MiB / 1e6, bs_bytes=8192, duration_s=60, iodepth=256, jobs=4)
    b = decide_bound(m, _limits(E8DS_OS_NONE, TargetSpec("os")))
    assert (b.kind, b.limit, b.limit_kind) == ("burst", 3500, "disk_burst_iops")
    assert b.text.startswith("write 3,499 IOPS = 100.0% of P4 burst 3,500 IOPS: bound by the burst cap")
    assert "lasts up to 30 min at full credits" in b.text
    assert "above the P4 120 IOPS baseline: on burst credits" in b.notes
    assert "above the P4 25 MB/s baseline: on burst credits" in b.notes


def test_cached_reads_hit_the_vm_cached_limit_above_the_disk_cap() -> None:
    # seed 001: DiskSpd 4k random read on the warmed ReadOnly P30: 78,521.23 IOPS, 306.72 MiB/s (77,000 cap)
    m = Measured("read", iops=78521.23, mbps=306.72 * MiB / 1e6, bs_bytes=4096, duration_s=30, iodepth=128, jobs=4,
                 host_cache=True)
    b = decide_bound(m, _limits(D8DS, TargetSpec("lun", (3,))))
    assert (b.kind, b.limit, b.limit_kind) == ("vm_cached", 77000, "vm_cached_iops")
    assert b.text.startswith("read 78,521 IOPS = 102.0% of Standard_D8ds_v4 cached+temp 77,000 IOPS: bound by the "
                             "VM's cached limit")
    assert "above the P30 5,000 IOPS: served by the host cache" in b.text


def test_cached_reads_below_the_cached_limit_are_the_host_cache() -> None:
    m = Measured("read", iops=40000, mbps=40000 * 4096 / 1e6, bs_bytes=4096, iodepth=32, jobs=4)  # cache inferred
    b = decide_bound(m, _limits(D8DS, TargetSpec("lun", (3,))))
    assert (b.kind, b.limit) == ("host_cache", 5000)
    assert b.text.startswith("read 40,000 IOPS = 800.0% of P30 5,000 IOPS: served by the host cache "
                             "(52% of the Standard_D8ds_v4 cached+temp 77,000 IOPS)")


def test_cached_reads_near_the_disks_mb_cap_are_still_the_host_cache() -> None:
    # 46,000 4k reads (188 MB/s, 94% of the P30's 200 MB/s): above its 5,000 IOPS, so from the cache,
    # and the disk's MB/s cap cannot bind them either (a lab run once called this "bound by the disk")
    m = Measured("read", iops=46000, mbps=188.0, bs_bytes=4096, iodepth=32, jobs=4, host_cache=True)
    b = decide_bound(m, _limits(D8DS, TargetSpec("lun", (3,))))
    assert b.kind in ("host_cache", "vm_cached"), b.text


def test_temp_disk_and_cache_writes_meet_the_cached_and_temp_budget() -> None:
    # seed 000, async.ini (8k random write, QD256 x 4): the cached+temp budget is one MB/s cap
    e8ds_temp = _limits(MachineSpec("Standard_E8ds_v4"), TargetSpec("temp"))
    temp = decide_bound(Measured("write", iops=59200, mbps=462 * MiB / 1e6, bs_bytes=8192, iodepth=256, jobs=4),
                        e8ds_temp)
    assert (temp.kind, temp.limit_kind, temp.limit) == ("vm_cached", "vm_cached_mbps", 485)
    eph = MachineSpec("Standard_E8ds_v4", ephemeral_os="CacheDisk")
    os_eph = decide_bound(Measured("write", iops=60600, mbps=474 * MiB / 1e6, bs_bytes=8192, iodepth=256, jobs=4),
                          _limits(eph, TargetSpec("os")))
    assert (os_eph.kind, os_eph.limit_kind) == ("vm_cached", "vm_cached_mbps")
    rw_os = MachineSpec("Standard_E8ds_v4", os_disk=DiskSpec("Premium_LRS", 32, "ReadWrite"))
    cached = decide_bound(Measured("write", iops=60100, mbps=469 * MiB / 1e6, bs_bytes=8192, iodepth=256, jobs=4),
                          _limits(rw_os, TargetSpec("os")))
    assert (cached.kind, cached.limit_kind) == ("vm_cached", "vm_cached_mbps")
    assert "above the P4 120 IOPS: served by the host cache" in cached.notes
    e8as = decide_bound(Measured("write", iops=16300, mbps=128 * MiB / 1e6, bs_bytes=8192, iodepth=256, jobs=4),
                        _limits(MachineSpec("Standard_E8as_v4"), TargetSpec("temp")))
    assert e8as.kind == "vm_cached" and e8as.limit_kind in ("vm_cached_iops", "vm_cached_mbps")


def test_nvme_writes_have_no_published_limit() -> None:
    # seed 000: L8s_v2 NVMe 4k random write, QD512 x 16: 261k IOPS; only read figures are published
    m = Measured("write", iops=261000, mbps=1021 * MiB / 1e6, bs_bytes=4096, iodepth=512, jobs=16)
    b = decide_bound(m, _limits(MachineSpec("Standard_L8s_v2"), TargetSpec("nvme")))
    assert (b.kind, b.limit) == ("none", None)
    assert b.text == "write 261,000 IOPS, 1,070.6 MB/s (1,021.0 MiB/s): no published limit applies"


def test_forty_percent_of_every_limit_is_no_bound() -> None:
    limits = _limits(D8DS, TargetSpec("lun", (0, 1, 2)))
    iops = 0.4 * 12800
    m = Measured("write", iops=iops, mbps=iops * 4096 / 1e6, bs_bytes=4096, iodepth=256, jobs=4, cpu_pct=12, cpus=8)
    b = decide_bound(m, limits)
    assert b.kind == "none"
    assert b.ratio is not None and b.ratio <= 0.4 + 1e-9
    assert b.text == ("write 5,120 IOPS, 21.0 MB/s (20.0 MiB/s): below every limit "
                      "(highest: 40% of the Standard_D8ds_v4 uncached 12,800 IOPS)")


def test_large_blocks_count_as_several_ios_on_premium_ssd() -> None:
    # seed 003: a P30 at 256k hits its 200 MB/s cap; at 1 MiB the IOPS cap counts 4 I/Os per block
    one_p30 = MachineSpec("Standard_D16ds_v5", data_disks=(DiskSpec("Premium_LRS", 1024, lun=0),))
    limits = _limits(one_p30, TargetSpec("lun", (0,)))
    at_256k = Measured("read", iops=760, mbps=199.2, bs_bytes=256 * 1024, iodepth=8)
    bound = decide_bound(at_256k, limits)
    assert (bound.kind, bound.limit_kind, bound.limit) == ("disk", "disk_mbps", 200)
    assert bound.text.endswith("bound by the disk, not the Standard_D16ds_v5 uncached (600)")
    # the same P30 on an E8ds_v4: its 192 MB/s uncached cap comes first
    e8ds = MachineSpec("Standard_E8ds_v4", data_disks=one_p30.data_disks)
    assert decide_bound(at_256k, _limits(e8ds, TargetSpec("lun", (0,)))).limit_kind == "vm_uncached_mbps"
    small = decide_bound(Measured("read", iops=5000, mbps=20.5, bs_bytes=4096, iodepth=32), limits)
    assert (small.kind, small.limit_kind) == ("disk", "disk_iops")
    capped = [Limit(kind="disk_iops", value=5000, scope="P30", source="t", io_unit_bytes=256 * 1024)]
    big = decide_bound(Measured("read", iops=1240, mbps=1240 * MiB / 1e6, bs_bytes=MiB, iodepth=8), capped)
    assert (big.kind, big.value) == ("disk", 4960)
    assert "(I/O over 256 KiB counted as several)" in big.text


def test_client_cpu_bound() -> None:
    limits = _limits(MachineSpec("Standard_L8s_v2"), TargetSpec("nvme"))
    m = Measured("read", iops=180000, mbps=737, bs_bytes=4096, iodepth=32, jobs=1, cpu_pct=99.2, cpus=8)
    b = decide_bound(m, limits)
    assert b.kind == "cpu"
    assert "fio used 99% of a core per job" in b.text
    all_cores = Measured("read", iops=250000, mbps=1024, bs_bytes=4096, iodepth=32, jobs=8, cpu_pct=94, cpus=8)
    assert decide_bound(all_cores, limits).kind == "cpu"
    assert decide_bound(all_cores, []).text.endswith("each job's thread was CPU-bound)")


def test_shallow_queue_is_latency_bound() -> None:
    # seed 000: sync-os.ini (QD1, 8k) on the uncached P4 OS disk: p50 2,474 us -> ~400 IOPS, on burst credits
    m = Measured("write", iops=398, mbps=398 * 8192 / 1e6, bs_bytes=8192, iodepth=1, jobs=1, lat_mean_us=2510,
                 cpu_pct=3, cpus=8)
    b = decide_bound(m, _limits(E8DS_OS_NONE, TargetSpec("os")))
    assert b.kind == "queue"
    assert "QD1 x 1 job(s)" in b.text and "allow ~398 IOPS" in b.text
    assert "above the P4 120 IOPS baseline: on burst credits" in b.notes


def test_a_series_that_steps_down_is_a_burst_with_two_phases() -> None:
    series = tuple([3480.0 + (i % 3) * 10 for i in range(30)] + [119.0 + (i % 2) for i in range(30)])
    mean = sum(series) / len(series)
    m = Measured("write", iops=mean, mbps=mean * 8192 / 1e6, bs_bytes=8192, iodepth=256, jobs=4, series=series,
                 interval_s=60)
    b = decide_bound(m, _limits(E8DS_OS_NONE, TargetSpec("os")))
    assert b.kind == "burst" and b.phases is not None
    assert (b.phases.burst.duration_s, b.phases.baseline.start_s, b.phases.baseline.duration_s) == (1800, 1800, 1800)
    assert (b.limit, b.limit_kind) == (3500, "disk_burst_iops")
    assert b.text.startswith("write stepped down: 3,490 IOPS for 1,800 s, then 120 IOPS for 1,800 s (97% lower); "
                             "burst 3,490 IOPS = 99.7% of the P4 burst 3,500 IOPS, baseline 120 IOPS = 99.6% of the "
                             "P4 120 IOPS")


def test_burst_detection_rejects_trends_noise_and_short_series() -> None:
    assert detect_burst([1000.0 - 10 * i for i in range(40)]) is None  # a slow trend, not a step
    assert detect_burst([1000.0 + (37 * i % 11) * 20 for i in range(40)]) is None  # noise around one level
    assert detect_burst([3500.0, 3500, 120, 120]) is None  # too short to tell
    vm = detect_burst([16000.0] * 10 + [12800.0] * 10)  # a VM burst ending: a 20% step
    assert vm is not None and round(vm.drop, 2) == 0.2 and vm.baseline.start_s == 10


def test_measured_from_a_parsed_result() -> None:
    clat = Latency(min=50, mean=2510, max=9000, stdev=100, samples=1000)
    result = DirectionResult("write", iops=400, bw_bytes_per_s=400 * 8192, ios=24000, io_bytes=24000 * 8192,
                             runtime_s=60, clat=clat, series=Series(interval_s=1, iops=[390, 410, 400]))
    m = Measured.from_direction(result, bs_bytes=8192, iodepth=1, jobs=1, cpu_pct=2.5)
    assert (m.mbps, m.lat_mean_us, m.series, m.duration_s) == (400 * 8192 / 1e6, 2510, (390, 410, 400), 60)
    assert decide_bound(m, []).kind == "queue"


def test_every_bound_kind_is_known() -> None:
    assert set(BOUND_KINDS) >= {"vm_uncached", "vm_cached", "temp", "disk", "burst", "host_cache", "cpu", "queue",
                                "none"}
