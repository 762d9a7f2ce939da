"""Attribution at its edges: just below, at and just above the 90-110% band, the CPU and queue rules.

The seed tests (test_bound.py) show the shapes on real machines; these pin where each rule
switches, with the figures worked out beside each case: a cap of 10,000 IOPS claims 9,000 and
11,000 but not 8,999 or 11,001; fio's CPU figure (usr_cpu + sys_cpu as it printed them) is the
one a "bound by the client CPU" verdict states.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from diskbench.attribution.bound import CPU_SATURATED, SHALLOW_QUEUE, TOLERANCE, Measured, decide_bound, rate
from diskbench.attribution.limit import Limit
from diskbench.attribution.record import PLATEAU_GAIN, decide
from diskbench.engines.fio.parse import parse_fio_output
from diskbench.model import DirectionResult, Series

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fio"
VM = Limit("vm_uncached_iops", 10_000, "Standard_X uncached", "x-series.md")
VM_MB = Limit("vm_uncached_mbps", 200, "Standard_X uncached", "x-series.md")


def at(iops: float, *, bs: int = 4096, iodepth: int = 32, jobs: int = 1, **kw: object) -> Measured:
    return Measured("read", iops=iops, mbps=iops * bs / 1e6, bs_bytes=bs, iodepth=iodepth, jobs=jobs,
                    **kw)  # type: ignore[arg-type]


def test_the_band_constants() -> None:
    assert TOLERANCE == (0.90, 1.10) and CPU_SATURATED == 90.0 and SHALLOW_QUEUE == 4 and PLATEAU_GAIN == 1.05


@pytest.mark.parametrize(("iops", "kind"), [
    (8_999, "none"),  # 89.99% of 10,000
    (9_000, "vm_uncached"),  # 90%: the band's lower edge is in it
    (11_000, "vm_uncached"),  # 110%: the upper edge too
    (11_001, "none"),  # 110.01%: above the cap, which the table should not allow
])
def test_iops_at_the_band_edges(iops: float, kind: str) -> None:
    b = decide_bound(at(iops), [VM])
    assert b.kind == kind


def test_what_each_edge_says() -> None:
    below = decide_bound(at(8_999), [VM])
    assert (below.limit, below.value, below.ratio) == (10_000, 8_999, 0.8999)
    assert below.text == ("read 8,999 IOPS, 36.9 MB/s (35.2 MiB/s): below every limit (highest: 90% of the "
                          "Standard_X uncached 10,000 IOPS)")
    low = decide_bound(at(9_000), [VM])
    assert (low.limit, low.value, low.ratio, low.limit_kind, low.unit, low.source) == (
        10_000, 9_000, 0.9, "vm_uncached_iops", "IOPS", "x-series.md")
    assert low.text == "read 9,000 IOPS = 90.0% of Standard_X uncached 10,000 IOPS: bound by the VM"
    high = decide_bound(at(11_000), [VM])
    assert high.text == "read 11,000 IOPS = 110.0% of Standard_X uncached 10,000 IOPS: bound by the VM"
    above = decide_bound(at(11_001), [VM])
    assert (above.limit, above.value, above.ratio) == (None, None, None)
    note = "above the published Standard_X uncached 10,000 IOPS (x-series.md): the table may be out of date"
    assert above.notes == (note,)
    assert above.text == f"read 11,001 IOPS, 45.1 MB/s (43.0 MiB/s): above every published limit; {note}"


@pytest.mark.parametrize(("mbps", "kind"), [(179.99, "none"), (180.0, "vm_uncached"), (220.0, "vm_uncached"),
                                            (220.01, "none")])
def test_megabytes_at_the_band_edges(mbps: float, kind: str) -> None:
    m = Measured("read", iops=mbps * 1e6 / (1024 * 1024), mbps=mbps, bs_bytes=1024 * 1024, iodepth=8)
    b = decide_bound(m, [VM_MB])
    assert b.kind == kind
    if kind != "none":
        assert b.text.startswith(f"read {rate(mbps)} = {mbps / 200:.1%} of Standard_X uncached 200 MB/s")


def test_rate_shows_both_units() -> None:
    assert rate(200) == "200.0 MB/s (190.7 MiB/s)"  # 200e6 / 2^20 = 190.73
    assert rate(1048.576) == "1,048.6 MB/s (1,000.0 MiB/s)"


def test_the_tighter_of_two_caps_in_the_band_is_named_and_the_looser_beside_it() -> None:
    disks = Limit("disk_iops", 15_000, "3 x P30", "disks.md")
    # 13,600: 106.25% of the VM's 12,800, 90.7% of the disks' 15,000: both in the band, the VM's higher
    vm = Limit("vm_uncached_iops", 12_800, "Standard_D8ds_v4 uncached", "d.md")
    b = decide_bound(at(13_600), [disks, vm])
    assert (b.kind, b.limit) == ("vm_uncached", 12_800)
    assert b.text == ("read 13,600 IOPS = 106.2% of Standard_D8ds_v4 uncached 12,800 IOPS: bound by the VM, "
                      "not the 3 x P30 (15,000)")
    # 14,000: the VM's 109.4%, the disks' 93.3%; 14,100 is 110.2% of the VM's: past it, so the disks'
    assert decide_bound(at(14_000), [disks, vm]).kind == "vm_uncached"
    past = decide_bound(at(14_100), [disks, vm])
    assert (past.kind, past.text.split(": ")[1].split(";")[0]) == ("disk", "bound by the disks")
    one = decide_bound(at(14_100), [Limit("disk_iops", 15_000, "P40", "disks.md")])
    assert one.text.startswith("read 14,100 IOPS = 94.0% of P40 15,000 IOPS: bound by the disk")
    mixed = decide_bound(at(14_100), [Limit("disk_iops", 15_000, "P30 + P40", "disks.md")])
    assert "bound by the disks" in mixed.text


def test_the_cpu_figure_per_job_and_over_all_cores() -> None:
    # per job: 90% of a core is saturated, 89.99% is not (no limit here, QD32: nothing else binds)
    b = decide_bound(at(50_000, cpu_pct=90.0, cpus=8), [])
    assert (b.kind, b.value, b.limit, b.ratio, b.unit, b.source) == ("cpu", 90.0, 100.0, 0.9, "% CPU",
                                                                      "fio usr_cpu + sys_cpu")
    assert b.text == ("read 50,000 IOPS: bound by the client CPU (fio used 90% of a core per job: each job's "
                      "thread was CPU-bound)")
    assert decide_bound(at(50_000, cpu_pct=89.99, cpus=8), []).kind == "none"
    # all cores: 16 jobs x 22.5% = 360% = 90% of 4 cores; 16 x 22.49% = 359.84% is not
    b = decide_bound(at(50_000, jobs=16, cpu_pct=22.5, cpus=4), [])
    assert (b.kind, b.value, b.limit, b.ratio) == ("cpu", 360.0, 400.0, 0.9)
    assert b.text == "read 50,000 IOPS: bound by the client CPU (fio used 360% of 4 cores: the client ran out of CPU)"
    assert decide_bound(at(50_000, jobs=16, cpu_pct=22.49, cpus=4), []).kind == "none"
    assert decide_bound(at(50_000, jobs=16, cpu_pct=22.5), []).kind == "none"  # core count unknown
    # a platform cap the result reached comes first
    assert decide_bound(at(10_000, cpu_pct=95.0, cpus=8), [VM]).kind == "vm_uncached"


def test_the_cpu_figure_is_fios_own() -> None:
    """fio-3.42-randread-4k-qd16.json printed usr_cpu 10.833333 and sys_cpu 34.866667: 45.7% of a
    core for its one job. Two such jobs on one core use 91.4% of it: the client CPU."""
    (group,) = parse_fio_output((FIXTURES / "fio-3.42-randread-4k-qd16.json").read_text())
    assert group.cpu_pct == pytest.approx(45.7)
    read = group.directions[0]
    b = decide(read, [], bs_bytes=4096, iodepth=16, jobs=2, cpu_pct=group.cpu_pct, cpus=1)
    assert (b.kind, b.value, b.limit) == ("cpu", pytest.approx(91.4), 100.0)
    assert b.text == (f"read {read.iops:,.0f} IOPS: bound by the client CPU (fio used 91% of 1 cores: the client "
                      "ran out of CPU)")
    assert decide(read, [], bs_bytes=4096, iodepth=16, jobs=1, cpu_pct=group.cpu_pct, cpus=1).kind == "none"


@pytest.mark.parametrize(("iodepth", "jobs", "kind"), [(4, 1, "queue"), (5, 1, "none"), (2, 2, "queue"),
                                                       (1, 5, "none"), (1, 1, "queue")])
def test_the_shallow_queue_edge(iodepth: int, jobs: int, kind: str) -> None:
    assert decide_bound(at(2_000, iodepth=iodepth, jobs=jobs), []).kind == kind


def test_what_the_queue_says() -> None:
    # Little's law: 4 I/Os in flight at 100 µs each allow 4 / 0.0001 s = 40,000 IOPS
    b = decide_bound(at(2_000, iodepth=4, lat_mean_us=100.0), [VM])
    assert (b.kind, b.limit, b.value, b.ratio, b.unit, b.source) == ("queue", 4.0, 4.0, None, "I/O in flight",
                                                                     "iodepth x numjobs")
    assert b.text == ("read 2,000 IOPS: bound by the queue (QD4 x 1 job(s)), 4 I/O in flight at 100 µs mean latency "
                      "allow ~40,000 IOPS; 20% of the Standard_X uncached 10,000 IOPS")
    assert decide_bound(at(2_000, iodepth=1), [VM_MB]).text == "read 2,000 IOPS: bound by the queue (QD1 x 1 job(s))"


def test_io_units_count_large_blocks_as_several() -> None:
    capped = Limit("disk_iops", 5000, "P30", "t", io_unit_bytes=256 * 1024)
    # 1 MiB = 4 units of 256 KiB; 1 MiB + 1 byte needs 5; 4 KiB is still 1
    assert decide_bound(at(1_250, bs=1024 * 1024), [capped]).value == 5_000
    assert decide_bound(at(1_000, bs=1024 * 1024 + 1), [capped]).value == 5_000
    small = decide_bound(at(4_900, bs=4096), [capped])
    assert small.value == 4_900 and "counted as several" not in small.text


def test_limits_per_direction() -> None:
    writes = Limit("disk_iops", 10_000, "W", "t", direction="write")
    assert decide_bound(at(10_000), [writes]).kind == "none"  # a read is not held to a write cap
    assert (writes.applies_to("write"), writes.applies_to("read"), VM.applies_to("read")) == (True, False, True)
    assert (VM.metric, VM.unit, VM_MB.metric, VM_MB.unit) == ("iops", "IOPS", "mbps", "MB/s")
    assert VM.label() == "Standard_X uncached 10,000 IOPS"


def test_a_burst_cap_over_its_baseline() -> None:
    base = Limit("disk_iops", 120, "P4", "p.md")
    burst = Limit("disk_burst_iops", 3500, "P4 burst", "p.md", burst=True, minutes=30)
    assert burst.bursts_above(base) and not base.bursts_above(burst)
    assert burst.scaled(0.1).bursts_above(base.scaled(0.1))  # a lab's x0.1 on both
    assert burst.scaled(0.1).scope == "P4 burst x0.1" and burst.scaled(0.1).value == pytest.approx(350)
    assert not Limit("disk_burst_iops", 3500, "P10 burst", "p.md", burst=True).bursts_above(base)
    b = decide_bound(at(3_500, bs=8192, iodepth=64), [base, burst])
    assert b.kind == "burst" and b.text.endswith("lasts up to 30 min at full credits; above the P4 120 IOPS "
                                                 "baseline: on burst credits")
    between = decide_bound(at(2_000, bs=8192, iodepth=64), [base, burst])  # on credits, below the burst cap
    assert (between.kind, between.limit) == ("burst", 120)
    assert between.text == ("read 2,000 IOPS = 1666.7% of P4 120 IOPS: on burst credits, below the burst cap "
                            "(57% of the P4 burst 3,500 IOPS)")


def test_the_median_second_of_a_diluted_throttled_run() -> None:
    """A run at its cap second after second, whose mean the first and last seconds dilute: the
    median second is within the band where the mean is not."""
    series = Series(interval_s=1, iops=[3_000.0, 10_000, 10_000, 10_000, 10_000, 10_000, 4_000])
    mean = sum(series.iops) / 7  # 8,142.9: 81% of the cap
    result = DirectionResult("read", mean, mean * 4096, int(mean * 7), int(mean * 7 * 4096), 7.0, None,
                             series=series)
    b = decide(result, [VM], bs_bytes=4096, iodepth=32, jobs=1, cpu_pct=None, cpus=None)
    assert (b.kind, b.value) == ("vm_uncached", 10_000)
    assert b.text.endswith("(median second; fio's mean 8,143 IOPS includes the first and last seconds)")
    # fewer than 5 seconds, or a median less than 5% above the mean: the mean's verdict stands
    short = DirectionResult("read", 7_000, 0, 0, 0, 3.0, None, series=Series(interval_s=1, iops=[4_000.0, 10_000,
                                                                                                 7_000]))
    assert decide(short, [VM], bs_bytes=4096, iodepth=32, jobs=1, cpu_pct=None, cpus=None).kind == "none"
    flat = [8_000.0, 8_000, 8_000, 8_000, 8_390]  # median 8,000 < 1.05 x mean 8,078
    steady = DirectionResult("read", sum(flat) / 5, 0, 0, 0, 5.0, None, series=Series(interval_s=1, iops=flat))
    assert decide(steady, [VM], bs_bytes=4096, iodepth=32, jobs=1, cpu_pct=None, cpus=None).kind == "none"


def test_what_no_bound_keeps() -> None:
    below = decide_bound(at(8_999), [VM])
    assert (below.limit_kind, below.unit, below.source, below.notes) == ("vm_uncached_iops", "IOPS", "x-series.md", ())
    above = decide_bound(at(11_001), [VM])
    assert (above.source, above.limit_kind, above.unit) == ("", "", "")


def test_which_excess_is_burst_credit_and_which_an_old_table() -> None:
    base = Limit("disk_iops", 120, "P4", "p.md")
    burst = Limit("disk_burst_iops", 3500, "P4 burst", "p.md", burst=True, minutes=30)
    # 3,850 = 110% of the burst cap: still within it, so above the baseline is burst credit
    b = decide_bound(at(3_850, bs=8192, iodepth=64), [base, burst])
    assert b.notes == ("above the P4 120 IOPS baseline: on burst credits",)
    # 3,851 is past the burst cap too: neither explains the other
    b = decide_bound(at(3_851, bs=8192, iodepth=64), [base, burst])
    assert b.notes == ("above the published P4 120 IOPS (p.md): the table may be out of date",
                       "above the published P4 burst 3,500 IOPS (p.md): the table may be out of date")
    # a cap in the band that is not this limit's burst cap explains nothing
    other = Limit("vm_uncached_iops", 15_000, "VM", "v.md")
    b = decide_bound(at(11_500), [VM, other])
    assert b.notes == ("above the published Standard_X uncached 10,000 IOPS (x-series.md): the table may be out of "
                       "date",)


def test_a_cached_disk_above_its_cap() -> None:
    disk = Limit("disk_iops", 5000, "P30", "p.md", cache_miss_only=True)
    mb = Limit("disk_mbps", 100, "P30", "p.md", cache_miss_only=True)
    # reads at 8x and 1.64x of the disk's caps: served by the host cache, named by the higher
    b = decide_bound(at(40_000, host_cache=True), [disk, mb])
    assert (b.kind, b.limit, b.limit_kind, b.value, b.ratio) == ("host_cache", 5000, "disk_iops", 40_000, 8.0)
    assert b.text == ("read 40,000 IOPS = 800.0% of P30 5,000 IOPS: served by the host cache; above the P30 100 MB/s: "
                      "served by the host cache")
    # writes (no cache in their path, host_cache False) above a cached disk's cap: a cache served them anyway
    w = decide_bound(Measured("write", iops=40_000, mbps=163.84, bs_bytes=4096, iodepth=32, host_cache=False), [disk])
    assert w.notes == ("above the P30 5,000 IOPS: a host cache served it (reads may have hit the cache)",)
    assert w.kind == "none"


def test_a_burst_series_against_the_caps() -> None:
    """A series that steps from 3,150 IOPS (90% of the P4's 3,500 burst cap) down to 120 (its baseline)."""
    base = Limit("disk_iops", 120, "P4", "p.md")
    burst = Limit("disk_burst_iops", 3500, "P4 burst", "p.md", burst=True, minutes=30)
    series = tuple([3150.0] * 20 + [120.0] * 20)
    mean = sum(series) / len(series)
    m = Measured("write", iops=mean, mbps=mean * 8192 / 1e6, bs_bytes=8192, iodepth=64, series=series, interval_s=1)
    b = decide_bound(m, [base, burst])
    assert (b.kind, b.limit, b.value, b.ratio, b.source, b.limit_kind, b.unit) == (
        "burst", 3500, 3150, 0.9, "p.md", "disk_burst_iops", "IOPS")
    assert b.text == ("write stepped down: 3,150 IOPS for 20 s, then 120 IOPS for 20 s (96% lower); burst 3,150 IOPS "
                      "= 90.0% of the P4 burst 3,500 IOPS, baseline 120 IOPS = 100.0% of the P4 120 IOPS")
    assert b.phases is not None and b.notes == ("above the P4 120 IOPS baseline: on burst credits",)  # the mean's
    # against MB/s caps the phases' rates scale with the run's bytes per I/O
    mb = Limit("disk_burst_mbps", 3150 * 8192 / 1e6, "P4 burst", "p.md", burst=True)
    assert decide_bound(m, [mb]).limit_kind == "disk_burst_mbps"
    # reaching no cap: the phases alone
    lone = decide_bound(m, [Limit("disk_iops", 100_000, "big", "b.md")])
    assert (lone.kind, lone.limit, lone.value, lone.ratio, lone.source, lone.unit, lone.limit_kind) == (
        "burst", None, 3150.0, None, "per-interval series", "IOPS", "")
    assert lone.text == ("write stepped down: 3,150 IOPS for 20 s, then 120 IOPS for 20 s (96% lower); burst 3,150 "
                         "IOPS, baseline 120 IOPS")
    reads_only = Limit("disk_burst_iops", 3500, "P4 burst", "p.md", burst=True, direction="read")
    assert decide_bound(m, [reads_only]).limit is None  # a read cap says nothing of writes
    # the level of a phase is its median second: one second at half the rate does not pull it down
    dip = tuple([3150.0] * 9 + [1600.0] + [3150.0] * 10 + [120.0] * 20)
    b = decide_bound(replace(m, series=dip, iops=sum(dip) / 40), [base, burst])
    assert b.value == 3150 and b.text.startswith("write stepped down: ")
    even = tuple([3100.0, 3200.0] * 10 + [120.0] * 20)  # 20 seconds: the median of 3,100 and 3,200
    assert decide_bound(replace(m, series=even, iops=sum(even) / 40), [base, burst]).value == 3150
    slow = replace(m, series=tuple([3150.0] * 20 + [120.0] * 20), interval_s=60)
    assert decide_bound(slow, [base, burst]).value == 3150


def test_measured_keeps_what_it_is_given() -> None:
    result = DirectionResult("read", 100, 409_600, 600, 600 * 4096, 6.0, None,
                             series=Series(interval_s=2.0, iops=[100.0, None, 100.0]))  # type: ignore[list-item]
    m = Measured.from_direction(result, bs_bytes=4096, iodepth=4, jobs=2, cpu_pct=5.0, cpus=4, host_cache=True)
    assert (m.host_cache, m.interval_s, m.series, m.jobs, m.cpus, m.cpu_pct, m.lat_mean_us) == (
        True, 2.0, (100.0, 100.0), 2, 4, 5.0, None)
    bare = Measured.from_direction(DirectionResult("read", 1, 4096, 1, 4096, 1.0, None), bs_bytes=4096, iodepth=1,
                                   jobs=1)
    assert (bare.interval_s, bare.series, bare.host_cache) == (1.0, None, None)


def test_limits_as_stored() -> None:
    lim = Limit("disk_burst_iops", 3500, "P4 burst", "p.md", burst=True, minutes=30, io_unit_bytes=262144)
    assert Limit.from_json(lim.to_json()) == lim
    assert Limit.from_json({**lim.to_json(), "retired": True}) == lim  # keys of a later version are ignored
    assert lim.to_json()["kind"] == "disk_burst_iops" and lim.to_json()["minutes"] == 30


# --- the median second, by hand --------------------------------------------------------------------
def _decide(iops: float, series: list[float], limits: list[Limit] | None = None) -> object:
    result = DirectionResult("read", iops, iops * 4096, 0, 0, float(len(series)), None,
                             series=Series(interval_s=1, iops=series))  # type: ignore[arg-type]
    return decide(result, [VM] if limits is None else limits, bs_bytes=4096, iodepth=32, jobs=1, cpu_pct=None,
                  cpus=None)


def test_the_median_second_even_odd_and_short() -> None:
    # six seconds: sorted 3000 4000 9800 10000 10200 10400 -> (9800 + 10000) / 2 = 9900
    b = _decide(6_000, [3000.0, 9800, 10000, 10200, 10400, 4000])
    assert (b.kind, b.value) == ("vm_uncached", 9900)  # type: ignore[attr-defined]
    # seven: sorted 3000 4000 9900 10000 10100 10200 10300 -> 10000
    assert _decide(6_000, [3000.0, 9900, 10000, 10100, 10200, 10300, 4000]).value == 10000  # type: ignore[attr-defined]
    # eight: sorted 1000 2000 3000 9800 10000 10200 10400 10600 -> (9800 + 10000) / 2
    eight = _decide(6_000, [1000.0, 2000, 3000, 9800, 10000, 10200, 10400, 10600])
    assert eight.value == 9900  # type: ignore[attr-defined]
    # five seconds are enough (MIN_ROUNDS); four are not
    assert _decide(6_000, [3000.0, 9900, 10000, 10100, 4000]).value == 9900  # type: ignore[attr-defined]
    assert _decide(6_000, [3000.0, 9900, 10000, 4000]).kind == "none"  # type: ignore[attr-defined]


def test_the_median_second_counts_only_well_above_the_mean() -> None:
    # 9,030 is exactly 1.05 x 8,600: looked at (90.3% of the cap); 9,029 is not
    assert _decide(8_600, [9030.0] * 5).kind == "vm_uncached"  # type: ignore[attr-defined]
    assert _decide(8_600, [9029.0] * 5).kind == "none"  # type: ignore[attr-defined]
    # well above the mean but still at no cap: the mean's verdict, without a word about seconds
    b = _decide(5_000, [6000.0] * 5)
    assert b.kind == "none" and "median second" not in b.text  # type: ignore[attr-defined]
    assert _decide(0, [6000.0] * 5).kind == "none"  # type: ignore[attr-defined]  # no mean: nothing to compare
    # a MB/s cap: the median second's MB/s is the mean's scaled by level / mean (40,960,000 B/s x 2)
    mb = Limit("vm_uncached_mbps", 80, "Standard_X uncached", "x-series.md")
    b = _decide(10_000, [20000.0] * 5, [mb])
    got = (b.kind, b.limit_kind, b.value)  # type: ignore[attr-defined]
    assert got == ("vm_uncached", "vm_uncached_mbps", pytest.approx(81.92))


def test_cpu_and_queue_verdicts_carry_the_notes() -> None:
    note = "above the published Standard_X uncached 10,000 IOPS (x-series.md): the table may be out of date"
    cpu = decide_bound(at(12_000, cpu_pct=95.0), [VM])
    assert (cpu.kind, cpu.notes) == ("cpu", (note,)) and cpu.text.endswith(f"CPU-bound); {note}")
    queue = decide_bound(at(12_000, iodepth=1), [VM])
    assert (queue.kind, queue.notes) == ("queue", (note,)) and queue.text.endswith(f"job(s)); {note}")
    # Little's law at 0.1 µs: 4 / 1e-7 s = 40,000,000 IOPS
    assert "allow ~40,000,000 IOPS" in decide_bound(at(2_000, iodepth=4, lat_mean_us=0.1), []).text
    assert rate(1_048_576) == "1,048,576.0 MB/s (1,000,000.0 MiB/s)"


def test_host_cache_decides_which_caps_bind() -> None:
    disk = Limit("disk_iops", 5000, "P30", "p.md", cache_miss_only=True)
    disk_mb = Limit("disk_mbps", 180, "P30", "p.md", cache_miss_only=True)
    # no cache in this I/O's path: the disk's MB/s cap (91%) binds, whatever its IOPS cap says
    w = decide_bound(Measured("write", iops=40_000, mbps=163.84, bs_bytes=4096, iodepth=32, host_cache=False),
                     [disk, disk_mb])
    assert (w.kind, w.limit_kind) == ("disk", "disk_mbps")
    # cached reads at 95% of the disk's cap, and at exactly 110% of it: nothing says a cache served them
    assert decide_bound(at(4_750, host_cache=True), [disk]).kind == "disk"
    assert decide_bound(at(5_500, host_cache=True), [disk]).kind == "disk"
    # a cap that is not the disk's own, exceeded while a cache is in the path: not the cache's doing
    vm_note = "above the published Standard_X uncached 10,000 IOPS (x-series.md): the table may be out of date"
    assert decide_bound(at(12_000, host_cache=True), [VM]).notes == (vm_note,)
    b = decide_bound(at(40_000, host_cache=True), [disk, disk_mb])
    assert (b.source, b.unit, b.notes) == ("p.md", "IOPS", ("above the P30 5,000 IOPS: served by the host cache",))


def test_on_burst_credits_named_by_the_furthest_exceeded() -> None:
    """2,000 IOPS of 64 KiB (131 MB/s) on a P4: 16.7x its 120 IOPS and 5.2x its 25 MB/s, below both
    burst caps (3,500 IOPS, 170 MB/s): on credits, named by the IOPS."""
    limits = [Limit("disk_mbps", 25, "P4", "p.md"), Limit("disk_iops", 120, "P4", "p.md"),
              Limit("vm_uncached_iops", 12_800, "VM", "v.md"),
              Limit("disk_burst_mbps", 170, "P4 burst", "p.md", burst=True),
              Limit("disk_burst_iops", 3500, "P4 burst", "p.md", burst=True)]
    b = decide_bound(at(2_000, bs=65536, iodepth=64), limits)
    assert (b.kind, b.limit, b.limit_kind, b.value, b.source, b.unit) == ("burst", 120, "disk_iops", 2000, "p.md",
                                                                          "IOPS")
    assert b.ratio == pytest.approx(2000 / 120)
    assert b.text == ("read 2,000 IOPS = 1666.7% of P4 120 IOPS: on burst credits, below the burst cap (57% of the "
                      "P4 burst 3,500 IOPS); above the P4 25 MB/s baseline: on burst credits")
    assert b.notes == ("above the P4 25 MB/s baseline: on burst credits",
                       "above the P4 120 IOPS baseline: on burst credits")


def test_the_text_names_the_level_and_the_looser_cap() -> None:
    nvme = decide_bound(at(9_500), [Limit("nvme_iops", 10_000, "2 x NVMe", "l.md")])
    assert (nvme.kind, nvme.text) == ("nvme", "read 9,500 IOPS = 95.0% of 2 x NVMe 10,000 IOPS: bound by the NVMe "
                                      "devices")
    temp = decide_bound(at(9_500), [Limit("temp_iops", 10_000, "temp", "t.md")])
    assert (temp.kind, temp.text.split(": ")[1]) == ("temp", "bound by the temp disk")
    # minutes without burst: no credit bucket to talk about
    plain = decide_bound(at(9_500), [Limit("disk_iops", 10_000, "P50", "p.md", minutes=30)])
    assert "lasts up to" not in plain.text
    # a looser cap of another level is named; one of equal value, or of the same level, is not
    same = [Limit("disk_iops", 10_000, "P50", "p.md"), Limit("vm_uncached_iops", 10_000, "VM", "v.md")]
    assert decide_bound(at(9_500), same).text == "read 9,500 IOPS = 95.0% of P50 10,000 IOPS: bound by the disk"
    level = [Limit("disk_iops", 10_000, "P50", "p.md"), Limit("disk_iops", 10_400, "P60", "p.md")]
    assert decide_bound(at(9_500), level).text == "read 9,500 IOPS = 95.0% of P50 10,000 IOPS: bound by the disk"
    looser = [Limit("disk_iops", 10_000, "P50", "p.md"), Limit("vm_uncached_iops", 10_500, "VM B", "v.md"),
              Limit("vm_cached_iops", 10_200, "VM A", "v.md")]
    assert decide_bound(at(9_500), looser).text == ("read 9,500 IOPS = 95.0% of P50 10,000 IOPS: bound by the disk, "
                                                    "not the VM A (10,200)")
    big = decide_bound(at(1_240, bs=1024 * 1024), [Limit("disk_iops", 5000, "P30", "t", io_unit_bytes=256 * 1024)])
    assert big.text == ("read 4,960 IOPS = 99.2% of P30 5,000 IOPS (I/O over 256 KiB counted as several): bound by "
                        "the disk")


def test_two_notes_are_joined() -> None:
    base = Limit("disk_iops", 120, "P4", "p.md")
    burst = Limit("disk_burst_iops", 3500, "P4 burst", "p.md", burst=True)
    b = decide_bound(at(3_851, bs=8192, iodepth=64), [base, burst])
    assert b.text == ("read 3,851 IOPS, 31.5 MB/s (30.1 MiB/s): above every published limit; above the published P4 "
                      "120 IOPS (p.md): the table may be out of date; above the published P4 burst 3,500 IOPS (p.md): "
                      "the table may be out of date")
