"""The knee search on synthetic curves whose knees are known from textbook queueing models.

Every curve here is computed in the test from its model, never with diskbench's code:

- the hockey stick: c servers of a fixed service time behind a closed loop of N I/Os (a device with
  c channels and no queueing below them): X(N) = min(N, c) / S, latency max(S, N S / c) (Little's
  law, R = N / X), so the knee is exactly c;
- the finite-source M/M/1 queue (the machine-repairman model: N I/Os, each spending an exponential
  Z "on the wire" before it reaches one exponential server of rate mu; Kleinrock, *Queueing Systems*
  vol. 1, 3.8): p0 = 1 / sum_k N! / (N - k)! (1 / (mu Z))^k, X(N) = mu (1 - p0): a curve that bends
  gradually, saturation number N* = 1 + mu Z.

The knee is then found by the test's own reading of the definition (docs/knee.md): the smallest
depth whose IOPS are within ``gain`` of the highest measured, once a doubling added less than
``gain``; and it must lie within one step of the exhaustive sweep's (1, 2, 3, 4, 6, 8, 12, ...).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from diskbench.attribution.knee import (
    MAX_DEPTH,
    P99_LIMIT,
    SATURATED,
    Curve,
    KneeRule,
    Point,
    Search,
    curve_of,
    ladder,
    steps_at_most,
)
from diskbench.attribution.stop_rule import CONFIDENT, Sample, StopRule, Watcher

Model = Callable[[int], tuple[float, float]]  # depth -> (IOPS, p99 in µs)
GRID = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]  # doublings and their midpoints


def hockey(channels: int, service_us: float, tail: float = 1.5) -> Model:
    """c channels of a fixed service time: X = min(N, c) / S, every I/O's latency N S / c at least S;
    the p99 a fixed ``tail`` times that (a spread around it)."""
    def at(depth: int) -> tuple[float, float]:
        latency_us = max(service_us, depth * service_us / channels)
        return min(depth, channels) / (service_us / 1e6), tail * latency_us

    return at


def repairman(mu: float, z_s: float) -> Model:
    """The finite-source M/M/1 queue: IOPS mu (1 - p0); the mean response time N / X - Z (Little), the
    p99 of an exponential of that mean (its 99th percentile: mean x ln 100)."""
    def at(depth: int) -> tuple[float, float]:
        rho = 1 / (mu * z_s)
        terms = [math.prod(range(depth - k + 1, depth + 1)) * rho**k for k in range(depth + 1)]
        x = mu * (1 - 1 / sum(terms))
        response_s = depth / x - z_s
        return x, (z_s + response_s * math.log(100)) * 1e6

    return at


def run(model: Model, rule: KneeRule, noise: Callable[[], float] = lambda: 1.0) -> tuple[Curve, list[int]]:
    """The search against a model; the depths in the order it measured them."""
    search = Search(rule)
    order = []
    while (depth := search.next_depth()) is not None:
        assert depth not in order, f"QD {depth} measured twice"
        order.append(depth)
        iops, p99 = model(depth)
        search.add(Point(depth, iops * noise(), p99 / 2, p99))
        assert len(order) <= steps_at_most(rule)
    return search.curve(), order


def point(model: Model, depth: int) -> Point:
    iops, p99 = model(depth)
    return Point(depth, iops, p99 / 2, p99)


def expected_knee(points: list[Point], gain: float) -> int:
    """The definition, read here: the smallest depth within ``gain`` of the highest IOPS measured."""
    top = max(p.iops for p in points)
    return min(p.depth for p in points if p.iops * (1 + gain) >= top)


def within_one_step(a: int, b: int) -> bool:
    return abs(GRID.index(a) - GRID.index(b)) <= 1


def test_the_hockey_stick_knee_is_its_channel_count() -> None:
    curve, order = run(hockey(6, 1000.0), KneeRule(max_depth=64))
    assert order == [1, 2, 4, 8, 16, 6]  # doubling to the plateau (16 adds nothing to 8), then 4..8 halved
    assert curve.reason == SATURATED and curve.knee is not None
    assert (curve.knee.depth, curve.knee.iops) == (6, pytest.approx(6000))
    assert curve.peak.depth == 6  # the highest IOPS, at its smallest depth
    assert curve.knee.p99_us == pytest.approx(1500)  # the service time, as it was at QD 1
    assert "knee at QD 6: 6,000 IOPS" in curve.text() and "6 steps, QD 1-16" in curve.text()


@pytest.mark.parametrize("channels", [1, 2, 3, 5, 6, 7, 11, 12, 20, 24, 40, 48, 60])
def test_the_knee_is_within_one_step_of_the_exhaustive_sweeps(channels: int) -> None:
    model = hockey(channels, 500.0)
    curve, order = run(model, KneeRule(max_depth=256))
    sweep = [point(model, d) for d in GRID]
    assert curve.knee is not None
    assert within_one_step(curve.knee.depth, expected_knee(sweep, 0.10)), (channels, order)
    assert curve.knee.depth == expected_knee(curve.points, 0.10)
    exhaustive = curve_of(sweep, KneeRule(max_depth=256))  # the same definition over every depth of the grid
    assert exhaustive.knee is not None and within_one_step(curve.knee.depth, exhaustive.knee.depth)
    assert len(order) <= steps_at_most(KneeRule(max_depth=256)) < len(GRID) * 2 / 3  # 10 of the sweep's 16


def test_a_gradual_curve_the_finite_source_queue() -> None:
    """mu = 10,000 IOPS, 0.5 ms on the wire: N* = 1 + mu Z = 6. Its IOPS reach 90% of mu only well past
    N* (queueing smooths the corner): the knee is where the curve itself says so, within one step."""
    model = repairman(10_000.0, 0.0005)
    grid = [point(model, d) for d in GRID[:12]]
    xs = [p.iops for p in grid]
    assert all(b >= a for a, b in zip(xs, xs[1:], strict=False)) and xs[-1] <= 10_000  # rising to mu
    curve, order = run(model, KneeRule(max_depth=64))
    assert curve.reason == SATURATED and curve.knee is not None
    assert curve.knee.depth == expected_knee(curve.points, 0.10)
    assert within_one_step(curve.knee.depth, expected_knee(grid, 0.10))
    assert 6 <= curve.knee.depth <= 16, order  # past N*, where the bend is
    assert curve.knee.iops >= 10_000 / 1.2


def test_a_curve_that_never_flattens_stops_at_max_iodepth_and_says_so() -> None:
    def linear(depth: int) -> tuple[float, float]:
        return depth * 1000.0, 800.0

    curve, order = run(linear, KneeRule(max_depth=64))
    assert order == [1, 2, 4, 8, 16, 32, 64]  # no bisection: there is no knee to bracket
    assert curve.reason == MAX_DEPTH and curve.knee is None and curve.peak.depth == 64
    assert curve.text().startswith("no knee up to max_iodepth 64: IOPS still grew 100% from QD 32 to 64")
    assert "raise knee.max_iodepth" in curve.text()


def test_a_max_iodepth_that_is_no_doubling_is_measured_last() -> None:
    assert ladder(KneeRule(min_depth=3, max_depth=100)) == [3, 6, 12, 24, 48, 96, 100]
    assert ladder(KneeRule(min_depth=1, max_depth=2)) == [1, 2]
    assert steps_at_most(KneeRule(max_depth=256)) == 9 + 1
    assert steps_at_most(KneeRule(max_depth=256, p99_under_us=2000, bisect=2)) == 9 + 4


@pytest.mark.parametrize("spread", [0.02, 0.05])
def test_a_noisy_curve_keeps_the_knee_within_one_step(spread: float) -> None:
    """Each step's IOPS off by up to +-spread (uniform, seeded), as a short step's figure is."""
    rng = random.Random(28)
    for _ in range(200):
        curve, order = run(hockey(12, 1000.0), KneeRule(max_depth=128), lambda: 1 + rng.uniform(-spread, spread))
        assert curve.knee is not None, order
        assert within_one_step(curve.knee.depth, 12), (curve.knee.depth, order)


def test_the_highest_iops_under_the_p99_limit() -> None:
    """p99 = 1.5 x max(1 ms, N / 6000 s): 1.5 ms to QD 6, 2 ms at 8, 4 ms at 16; under 2.5 ms the
    highest IOPS is 6,000, first at QD 6. The plateau ends the doubling before the limit does."""
    curve, order = run(hockey(6, 1000.0), KneeRule(max_depth=64, p99_under_us=2500.0))
    assert order == [1, 2, 4, 8, 16, 6]
    assert curve.reason == SATURATED and curve.knee is not None and curve.knee.depth == 6
    assert curve.usable is not None and (curve.usable.depth, curve.usable.iops) == (6, pytest.approx(6000))
    assert "highest IOPS with p99 under 2.50 ms: 6,000 at QD 6 (p99 1.50 ms)" in curve.text()


def test_a_p99_limit_inside_the_rise_is_bracketed() -> None:
    """The same device under a 1.8 ms limit: QD 8's p99 (2 ms) passes it while the IOPS still grew 50%
    from QD 4, so the doubling stops there with no knee, and QD 6 (between 4, under, and 8) is measured:
    the highest IOPS under the limit, 6,000 at QD 6."""
    curve, order = run(hockey(6, 1000.0), KneeRule(max_depth=64, p99_under_us=1800.0))
    assert order == [1, 2, 4, 8, 6]
    assert curve.reason == P99_LIMIT and curve.knee is None
    assert curve.usable is not None and (curve.usable.depth, curve.usable.iops) == (6, pytest.approx(6000))


def test_the_p99_limit_ends_the_doubling_before_the_plateau() -> None:
    """A curve still rising when its p99 (1 ms x N / 4) passes 2 ms at QD 16: no knee below the limit,
    the doubling stops there, and QD 12 (between the last under, 8, and 16) is measured."""
    def rising(depth: int) -> tuple[float, float]:
        return depth * 1000.0, 1000.0 * max(1, depth / 4)

    curve, order = run(rising, KneeRule(max_depth=256, p99_under_us=2000.0))
    assert order == [1, 2, 4, 8, 16, 12]
    assert curve.reason == P99_LIMIT and curve.knee is None
    assert curve.usable is not None and curve.usable.depth == 8  # 12's p99 is 3 ms
    assert curve.text().startswith("no knee below the p99 limit: p99 3.00 ms at QD 12 passed 2.00 ms")


def test_a_p99_limit_never_met_still_finds_the_knee() -> None:
    """Every depth's p99 over the limit: the limit cannot stop the doubling (no depth kept under it),
    the knee is found as without one, and the figure under the limit is none, said with the lowest p99."""
    curve, order = run(hockey(4, 3000.0), KneeRule(max_depth=64, p99_under_us=1000.0))
    assert curve.reason == SATURATED and curve.knee is not None and curve.knee.depth == 4
    assert curve.usable is None
    assert curve.text().endswith("no depth kept p99 under 1.00 ms (lowest p99 4.50 ms at QD 1)")
    assert order == [1, 2, 4, 8, 3]  # the knee's bracket (2, 4) halved: QD 3 gives 75%, the knee stays


def test_bisect_0_doubles_only_and_bisect_2_halves_twice() -> None:
    model = hockey(10, 1000.0)
    _, only = run(model, KneeRule(max_depth=64, bisect=0))
    assert only == [1, 2, 4, 8, 16, 32]
    curve, twice = run(model, KneeRule(max_depth=64, bisect=2))
    assert twice == [1, 2, 4, 8, 16, 32, 12, 10]  # (8, 16) -> 12, then (8, 12) -> 10
    assert curve.knee is not None and curve.knee.depth == 10


def test_a_falling_curve_takes_the_knee_below_its_peak() -> None:
    """IOPS that fall past a peak (an over-queued server): the plateau shows at the first doubling that
    adds under 10%, and the knee is the smallest depth within 10% of the peak."""
    iops = {1: 1000.0, 2: 1900.0, 4: 3500.0, 8: 4000.0, 16: 3000.0, 6: 3700.0}

    def falling(depth: int) -> tuple[float, float]:
        return iops[depth], 1000.0

    curve, order = run(falling, KneeRule(max_depth=64))
    assert order == [1, 2, 4, 8, 16, 6]
    # QD 4: 3,500 x 1.1 < 4,000; QD 6: 3,700 x 1.1 >= 4,000
    assert curve.knee is not None and curve.knee.depth == 6 and curve.peak.depth == 8


def test_the_record_reads_back() -> None:
    curve, _ = run(hockey(6, 1000.0), KneeRule(max_depth=64, p99_under_us=2500.0))
    doc = curve.to_json()
    assert doc["stopped"] == SATURATED and doc["knee"]["iodepth"] == 6 and doc["usable"]["iodepth"] == 6
    assert [p["iodepth"] for p in doc["points"]] == [1, 2, 4, 6, 8, 16]
    assert [Point.from_json(p) for p in doc["points"]] == curve.points
    assert doc["text"] == curve.text()


def test_a_knee_step_without_a_p99_limit_waits_for_its_rates_alone() -> None:
    """A step's IOPS steady at 1,000 and its latency all over the place (each second's I/Os in one bin
    between 100 µs and 100 ms): known within 2% as a rate after 10 s, never as a p99."""
    rng = random.Random(7)
    seconds = [Sample(1.0, 1000, 4_096_000, {int(10 ** rng.uniform(5, 8)): 1000}) for _ in range(30)]
    rates = Watcher(StopRule(0.02, 0.95, 10.0, 30.0, percentile=False))
    both = Watcher(StopRule(0.02, 0.95, 10.0, 30.0))
    for second in seconds:  # as the engine's live stream feeds them, until the watcher says stop
        for watcher in (rates, both):
            if watcher.confident is None:
                watcher.add({"read": second})
                watcher.judge()
    assert rates.confident is not None and rates.confident.reason == CONFIDENT and rates.confident.seconds == 10
    assert rates.confident.detail == "IOPS and MB/s; the p99 as measured"
    assert both.confident is None and both.final().reason != CONFIDENT
