"""``drain_burst``'s decisions on synthetic series: a step seen, already at the baseline, out of time.

The real thing (a QEMU throttle's credit burst drained before a lab guest's measured run) is in
tests/providers/azure/test_lab_runs.py; a real fio run on this machine, where nothing bursts, in
tests/runner/test_drain.py.
"""

from __future__ import annotations

import pytest

from diskbench.attribution.drain import CONFIRM_S, allowed, baselines, judge
from diskbench.attribution.limit import Limit

P4 = [Limit("disk_iops", 120, "P4", "t"), Limit("disk_mbps", 25, "P4", "t"),
      Limit("disk_burst_iops", 3500, "P4 burst", "t", burst=True, minutes=30),
      Limit("disk_burst_mbps", 170, "P4 burst", "t", burst=True, minutes=30)]


def test_baselines_pair_each_cap_with_its_burst_cap_also_when_scaled() -> None:
    found = baselines(P4)
    assert [(b.limit.kind, b.burst.kind) for b in found] == [("disk_iops", "disk_burst_iops"),
                                                             ("disk_mbps", "disk_burst_mbps")]
    assert found[0].bucket == (3500 - 120) * 30 * 60
    lab = [lim.scaled(0.1) for lim in P4]  # "P4 burst x0.1" still bursts above "P4 x0.1"
    assert [b.limit.scope for b in baselines(lab)] == ["P4 x0.1", "P4 x0.1"]
    vm = [Limit("vm_uncached_iops", 12800, "D8 uncached", "t"),
          Limit("vm_burst_iops", 16000, "D8 uncached burst", "t", burst=True, minutes=30)]
    assert [b.burst.value for b in baselines(vm + P4)] == [16000, 3500, 170]
    assert baselines([Limit("disk_iops", 5000, "P30", "t")]) == []  # no credit burst


def test_a_step_down_that_holds_ends_draining() -> None:
    burst, base = [3500.0] * 12, [120.0, 118.0, 121.0, 119.0, 120.0, 122.0]
    v = judge(burst + base[:3], [0.0] * 15, 1.0, 15, 600, [], 5)  # caps unknown: the step alone decides
    assert not v.done  # three seconds at the baseline: not yet the CONFIRM_S it must hold
    v = judge(burst + base, [0.0] * 18, 1.0, 18, 600, [], 6)
    assert v.done and v.drained and v.phases is not None and v.phases.baseline.duration_s >= CONFIRM_S
    assert v.why.startswith("stepped down after 12 s of draining: 3,500 IOPS for 12 s, then 120 IOPS")


def test_already_at_the_baseline_there_is_nothing_to_drain() -> None:
    v = judge([125.0] * 10, [0.5] * 10, 1.0, 10, 600, baselines(P4), 10)
    assert v.done and v.drained and v.phases is None
    assert v.why == "at the baseline: 125 IOPS, the P4 120 IOPS (no credits left to spend)"
    big_blocks = judge([20.0] * 10, [26.0] * 10, 1.0, 10, 600, baselines(P4), 10)  # MB/s at the 25 MB/s cap
    assert big_blocks.drained and "the P4 25 MB/s" in big_blocks.why
    assert not judge([125.0] * 10, [0.5] * 10, 1.0, 10, 600, [], 10).done  # caps unknown: keep going


def test_out_of_time_is_done_but_not_drained() -> None:
    v = judge([3500.0] * 10, [14.0] * 10, 1.0, 30, 30, baselines(P4), 10)
    assert v.done and not v.drained
    assert v.why == ("no step down within 30 s of draining: the result may still be a burst; allow longer "
                     "(drain_burst: 60s)")
    assert "drain_burst: 40m" in judge([3500.0] * 10, [14.0] * 10, 1.0, 1200, 1200, [], 10).why


def test_the_time_allowed_is_what_a_full_bucket_lasts_at_the_rate_seen() -> None:
    # 3,500 IOPS drains the P4's bucket in 30 min; at 1,000 IOPS it lasts (3,380 x 1,800) / 880 s
    assert allowed(3 * 3600, 3500, 14, baselines(P4)) == pytest.approx(1800 * 1.25 + 20)
    assert allowed(3 * 3600, 1000, 4, baselines(P4)) == pytest.approx(3380 * 1800 / 880 * 1.25 + 20)
    assert allowed(600, 3500, 14, baselines(P4)) == 600  # never more than asked
    assert allowed(600, 3500, 14, []) == 600  # caps unknown
