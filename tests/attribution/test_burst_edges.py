"""A run that steps down (burst, then baseline) at the edges of the 90-110% band, and the level of
each phase: its median second, odd or even, at any interval.

test_bound_edges.py pins the band for a steady run; these pin it for each phase of a stepped
series. A P4 disk: 120 IOPS baseline, 3,500 IOPS burst (Azure's published caps, as in
test_bound_edges.py); every level and ratio is worked out beside its case.
"""

from __future__ import annotations

import pytest

from diskbench.attribution.bound import Measured, decide_bound
from diskbench.attribution.limit import Limit
from diskbench.attribution.record import decide
from diskbench.model import DirectionResult

BASE = Limit("disk_iops", 120, "P4", "p.md")
BURST = Limit("disk_burst_iops", 3500, "P4 burst", "p.md", burst=True, minutes=30)


def stepped(series: list[float], *, interval_s: float = 1, direction: str = "write") -> Measured:
    mean = sum(series) / len(series)
    return Measured(direction, iops=mean, mbps=mean * 8192 / 1e6, bs_bytes=8192, iodepth=64, series=tuple(series),
                    interval_s=interval_s)


def test_a_burst_phase_at_110_percent_of_its_cap_reached_it() -> None:
    # 3,850 = 1.1 x 3,500: the band's upper edge is in the band, for a phase as for a steady run
    b = decide_bound(stepped([3850.0] * 20 + [120.0] * 20), [BASE, BURST])
    assert (b.kind, b.limit, b.value, b.ratio) == ("burst", 3500, 3850, pytest.approx(1.1))
    assert b.text.endswith("burst 3,850 IOPS = 110.0% of the P4 burst 3,500 IOPS, baseline 120 IOPS = 100.0% of "
                           "the P4 120 IOPS")


def test_a_phase_is_held_to_the_cap_it_is_nearest_to() -> None:
    """3,150 IOPS is 90% of the 3,500 burst cap and 95.5% of a 3,300 one: the 3,300 is named, whichever
    comes first in the list."""
    near = Limit("disk_burst_iops", 3300, "P6 burst", "p.md", burst=True)
    for limits in ([BASE, BURST, near], [BASE, near, BURST]):
        b = decide_bound(stepped([3150.0] * 20 + [120.0] * 20), limits)
        assert (b.limit, b.ratio) == (3300, pytest.approx(3150 / 3300)), limits


def test_a_write_cap_holds_a_write_series() -> None:
    writes = Limit("disk_burst_iops", 3500, "P4 burst", "p.md", burst=True, direction="write")
    b = decide_bound(stepped([3150.0] * 20 + [120.0] * 20), [writes])
    assert (b.limit, b.ratio) == (3500, pytest.approx(0.9))


def test_a_series_that_reaches_no_cap_keeps_its_phases_and_notes() -> None:
    # the mean, 1,635 IOPS, is 3.3x a 500 IOPS cap: the table looks wrong; neither phase is near it
    # (3,150 is 6.3x, 120 is 24%)
    small = Limit("disk_iops", 500, "S4", "s.md")
    b = decide_bound(stepped([3150.0] * 20 + [120.0] * 20), [small])
    assert (b.kind, b.limit, b.value) == ("burst", None, 3150.0)
    assert b.phases is not None and (b.phases.burst.duration_s, b.phases.baseline.start_s) == (20.0, 20.0)
    assert b.notes == ("above the published S4 500 IOPS (s.md): the table may be out of date",)


@pytest.mark.parametrize(("burst", "level"), [
    # 21 seconds: ten at 3,100, ten at 3,200 and one at 3,150; the median is the middle one, 3,150
    ([3100.0, 3200.0] * 10 + [3150.0], 3150),
    # 20 seconds: nine at 3,000, one at 3,100, ten at 3,200; the median is (3,100 + 3,200) / 2 = 3,150
    ([3000.0] * 9 + [3100.0] + [3200.0] * 10, 3150),
])
def test_the_level_of_a_phase_is_its_median_second(burst: list[float], level: float) -> None:
    b = decide_bound(stepped(burst + [120.0] * 20), [BASE, BURST])
    assert b.value == level and b.text.endswith(f"burst {level:,} IOPS = 90.0% of the P4 burst 3,500 IOPS, "
                                                "baseline 120 IOPS = 100.0% of the P4 120 IOPS")


@pytest.mark.parametrize("interval_s", [1, 60])
def test_the_baseline_is_read_from_its_own_intervals(interval_s: float) -> None:
    """The baseline's 20 intervals: nineteen at 120 and a last, partial one at 60: its median is 120,
    its mean 117. At one-minute intervals it starts 20 intervals (1,200 s) in, as at one second."""
    b = decide_bound(stepped([3150.0] * 20 + [120.0] * 19 + [60.0], interval_s=interval_s), [BASE, BURST])
    assert b.text.endswith("baseline 120 IOPS = 100.0% of the P4 120 IOPS")


def test_large_blocks_count_as_several_ios_through_decide() -> None:
    """1,240 I/Os of 1 MiB per second against a P30 whose IOPS cap counts 256 KiB units: 4 units
    each, 4,960 IOPS = 99.2% of its 5,000."""
    p30 = Limit("disk_iops", 5000, "P30", "p.md", io_unit_bytes=256 * 1024)
    mib = 1024 * 1024
    result = DirectionResult("read", 1240, 1240 * mib, 1240 * 10, 1240 * 10 * mib, 10.0, None)
    b = decide(result, [p30], bs_bytes=mib, iodepth=8, jobs=1, cpu_pct=None, cpus=None)
    assert (b.kind, b.value, b.ratio) == ("disk", 4960, pytest.approx(0.992))


def test_below_every_cap_it_reached_the_notes_of_the_caps_it_passed_stay() -> None:
    """8,000 IOPS: 80% of a 10,000 VM cap (below the band), 160% of a 5,000 disk cap with no burst
    or cache to explain it (the table looks out of date)."""
    vm = Limit("vm_uncached_iops", 10_000, "Standard_X uncached", "x.md")
    disk = Limit("disk_iops", 5_000, "P30", "p.md")
    m = Measured("read", iops=8_000, mbps=8_000 * 4096 / 1e6, bs_bytes=4096, iodepth=32)
    b = decide_bound(m, [vm, disk])
    assert (b.kind, b.limit, b.ratio) == ("none", 10_000, 0.8)
    assert b.text == ("read 8,000 IOPS, 32.8 MB/s (31.2 MiB/s): below every limit (highest: 80% of the Standard_X "
                      "uncached 10,000 IOPS); above the published P30 5,000 IOPS (p.md): the table may be out of date")
