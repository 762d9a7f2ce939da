"""The adaptive stop's decisions, figure by figure, on series whose answers are worked out here.

Most series alternate within each batch: batch means m_1..m_5, every batch made of the seconds
m + 200 and m - 200. The seconds' lag-1 correlation is then strongly negative (r1 near -0.9), which
the rule takes as none (no widening), so each figure's interval is the textbook one over the five
batch means: ``t(0.975, 4) * s / sqrt(5)``, s the batch means' standard deviation (scipy's t). The
bytes are 4 MB every second (MB/s known exactly: half-width 0) and every I/O sits in the 100 us bin
(the p99 known exactly) unless a test says otherwise; the rest is numpy's. Nothing here runs fio or
waits: a Watcher is fed its intervals by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from diskbench.attribution import stop_rule
from diskbench.attribution.confidence import Interval
from diskbench.attribution.order_stats import order_interval
from diskbench.attribution.stop_rule import (
    CONFIDENT,
    MAX_REACHED,
    NOT_STEADY,
    RATES_ONLY,
    Decision,
    Sample,
    StopRule,
    Watcher,
    drain_widened,
    head_bias,
)

T4 = float(stats.t.ppf(0.975, 4))  # 2.776: five batches, four degrees of freedom
# The five pair means of the first ten seconds: mean 1,000, deviations -10 10 0 -5 5,
# s^2 = (100 + 100 + 0 + 25 + 25) / 4 = 62.5, so r0 = t * sqrt(62.5 / 5) / 1,000 = 0.98%.
STEADY = (990.0, 1010.0, 1000.0, 995.0, 1005.0)
R0 = T4 * math.sqrt(62.5 / 5) / 1000


def _second(ios: float, p99: int | None = 100) -> Sample:
    """One second: 4 MB, its I/Os all in the ``p99`` bin (None: no latencies reported)."""
    return Sample(1.0, int(ios), 4_000_000, {p99: int(ios)} if p99 is not None else {})


def _pairs(means: Sequence[float], p99: int | None = 100) -> list[Sample]:
    """Two seconds per mean, 200 I/Os above and below it."""
    return [_second(m + s, p99) for m in means for s in (200, -200)]


def _feed(w: Watcher, samples: Sequence[Sample]) -> list[Decision]:
    """Add each second (reads) and ask the watcher, as the engine's live stream does; every answer."""
    out = []
    for s in samples:
        w.add({"read": s})
        out.append(w.judge())
    return out


def _rel(means: Sequence[float]) -> float:
    """The relative half-width of five batch means (no widening: see the module's docstring)."""
    m = np.asarray(means)
    return T4 * float(stats.sem(m)) / float(m.mean())


def test_the_worked_example_is_what_scipy_says() -> None:
    assert _rel(STEADY) == pytest.approx(R0, rel=1e-12)
    d = np.array([s.ios for s in _pairs(STEADY)], float) - 1000
    assert np.dot(d[:-1], d[1:]) / np.dot(d, d) < -0.8  # so the bias-corrected estimate is below 0: no widening


# --- Decision: what a result stores and a screen shows -------------------------------------------

def test_decision_text() -> None:
    assert Decision(CONFIDENT, 42.4, 0.0134, 0.95).text() == \
        "adaptive stop: confident after 42 s; known within +-1.3% at 95%"
    assert Decision(MAX_REACHED, 60.0, 0.0251, 0.9, "widest: read p99; asked +-2%").text() == \
        "adaptive stop: max reached after 60 s; known within +-2.5% at 90% (widest: read p99; asked +-2%)"
    assert Decision(NOT_STEADY, 30.0, None, 0.95, "read IOPS trend").text() == \
        "adaptive stop: not steady after 30 s; not known at 95% (read IOPS trend)"
    assert Decision(MAX_REACHED, 30.0, math.inf, 0.99).text() == \
        "adaptive stop: max reached after 30 s; not known at 99%"
    # past 100% a width tells a reader nothing; exactly 100% is still a width
    assert Decision(NOT_STEADY, 60.0, 15.239, 0.95).text() == \
        "adaptive stop: not steady after 60 s; not known within +-100% at 95%"
    assert Decision(MAX_REACHED, 60.0, 1.0, 0.95).text() == \
        "adaptive stop: max reached after 60 s; known within +-100.0% at 95%"
    assert Decision(MAX_REACHED, 60.0, 1.5, 0.95).text() == \
        "adaptive stop: max reached after 60 s; not known within +-100% at 95%"


def test_decision_json_round_trip() -> None:
    d = Decision(MAX_REACHED, 60.0, 0.0251, 0.9, "widest: read p99; asked +-2%")
    assert d.to_json() == {"reason": "max reached", "seconds": 60.0, "reached": 0.0251, "confidence": 0.9,
                           "detail": "widest: read p99; asked +-2%"}
    assert Decision.from_json(d.to_json()) == d
    # an unknown width is stored as null, whether it was None or inf
    assert Decision(NOT_STEADY, 5.0, math.inf, 0.95).to_json()["reached"] is None
    assert Decision(NOT_STEADY, 5.0, None, 0.95).to_json()["reached"] is None
    assert Decision.from_json({}) == Decision("", 0.0, None, 0.0, "")
    assert Decision.from_json({"reason": CONFIDENT, "seconds": "12", "confidence": "0.9", "detail": 7}) == \
        Decision(CONFIDENT, 12.0, None, 0.9, "7")


# --- Watcher.add: the per-direction series --------------------------------------------------------

def test_add_keeps_every_direction_in_step() -> None:
    w = Watcher(StopRule(0.02, 0.95, 10, 60))
    w.add({})  # no direction at all: no interval
    w.add({"read": Sample(0.0, 0, 0)})  # an interval of no length: nothing
    assert (w.seconds, w.series, w.p99s) == (0.0, {}, {})
    r1, r2 = Sample(1.0, 10, 40960, {50: 10}), Sample(1.0, 20, 81920, {60: 19, 70: 1})
    w2 = Sample(1.0, 5, 20480, {900: 5})
    w.add({"read": r1})
    w.add({"read": r2, "write": w2})  # write starts: its earlier interval did nothing
    w.add({"write": Sample(0.5, 1, 4096, {300: 1})})  # read missing: it did nothing for those 0.5 s
    assert w.seconds == 2.5
    assert w.series == {"read": [r1, r2, Sample(0.5, 0, 0)],
                        "write": [Sample(1.0, 0, 0), w2, Sample(0.5, 1, 4096, {300: 1})]}
    # each interval's own p99 (19 of 20 I/Os is 95%: the 99th percentile is the 70 us bin)
    assert w.p99s == {"read": [50.0, 70.0, None], "write": [None, 900.0, 300.0]}
    # a direction that first shows up late gets each earlier interval's own length, not the newest
    # one's: 0.5 + 2.0 s before a 1.0 s interval make 3.5 s of writes, at 4 I/Os in all
    late = Watcher(StopRule(0.02, 0.95, 10, 60))
    late.add({"read": Sample(0.5, 5, 20480)})
    late.add({"read": Sample(2.0, 20, 81920)})
    late.add({"read": Sample(1.0, 10, 40960), "write": Sample(1.0, 4, 16384)})
    assert [x.seconds for x in late.series["write"]] == [0.5, 2.0, 1.0]
    assert [x.seconds for x in late.series["read"]] == [0.5, 2.0, 1.0]
    assert late.seconds == 3.5 and late.p99s["write"] == [None, None, None]


# --- figures and steadiness ----------------------------------------------------------------------

def test_figures_of_the_worked_example() -> None:
    w = Watcher(StopRule(0.02, 0.95, 10, 60))
    _feed(w, _pairs(STEADY))
    got = w.figures()
    assert list(got) == ["read iops", "read MB/s", "read p99"]
    iops, mbs, p99 = got["read iops"], got["read MB/s"], got["read p99"]
    assert iops is not None and mbs is not None and p99 is not None
    assert iops.batch_values == pytest.approx(STEADY) and iops.adjustment == 1.0
    assert iops.relative == pytest.approx(R0, rel=1e-9)
    assert (mbs.center, mbs.half, mbs.batch_values) == (pytest.approx(4.0), 0.0, pytest.approx((4.0,) * 5))
    assert (p99.center, p99.half, p99.batches) == (100.0, 0.0, 5)
    # closely: the figures up to the first not known as closely as asked (the rest is not computed);
    # one exactly as wide as asked is known
    for within, shown in ((1e-6, ["read iops"]), (1.0, list(got)), (iops.relative, list(got))):
        w.rule = replace(w.rule, within=within)
        assert list(w.figures(closely=True)) == shown
    assert list(w.figures()) == list(got)
    # a knee step without a p99 limit: the rates alone
    rates = Watcher(StopRule(0.02, 0.95, 10, 60, percentile=False))
    _feed(rates, _pairs(STEADY))
    assert list(rates.figures()) == ["read iops", "read MB/s"]


def test_a_direction_without_io_is_left_out_and_one_io_is_not_none() -> None:
    w = Watcher(StopRule(0.02, 0.95, 100, 200))
    for s in _pairs(STEADY):
        w.add({"read": Sample(1.0, 0, 0), "write": s})
    assert list(w.figures()) == ["write iops", "write MB/s", "write p99"]
    assert w.steady() == (True, "")
    # a single I/O in ten seconds is a direction that did I/O: its rate is all trend
    one = Watcher(StopRule(0.02, 0.95, 100, 200))
    one.add({"read": Sample(1.0, 1, 4096, {80: 1})})
    for _ in range(9):
        one.add({"read": Sample(1.0, 0, 0)})
    assert list(one.figures()) == ["read iops", "read MB/s", "read p99"]
    # batch rates 0.5 0 0 0 0: mean 0.1, range 0.5 (allowed 20% of 0.1), least-squares slope
    # (-2 * 0.4 - 1 * -0.1 + 1 * -0.1 + 2 * -0.1) / 10 = -0.1, excursion 0.4 (allowed 10% of 0.1)
    assert one.steady() == (False, "read IOPS trend: rounds 1-5, mean 0.1; range 0.5 (allowed 0.0), "
                                   "slope excursion 0.4 (allowed 0.0)")


def test_steady_is_about_rates_per_second() -> None:
    """Two-second intervals of 2,000 to 2,240 I/Os: rates 1,000 1,030 ... 1,120 a second, mean 1,060,
    range 120 (allowed 20% = 212), slope 30 a batch, excursion 4 * 30 = 120 (allowed 10% = 106)."""
    w = Watcher(StopRule(0.02, 0.95, 100, 200))
    for _ in range(3):
        w.add({"write": Sample(2.0, 2000, 0)})
    assert w.steady() == (False, "write: fewer than 5 intervals")
    w = Watcher(StopRule(0.02, 0.95, 100, 200))
    for ios in (2000, 2060, 2120, 2180, 2240):
        w.add({"read": Sample(2.0, 0, 0), "write": Sample(2.0, ios, 0)})
    assert w.steady() == (False, "write IOPS trend: rounds 1-5, mean 1,060.0; range 120.0 (allowed 212.0), "
                                 "slope excursion 120.0 (allowed 106.0)")


def _reference(samples: Sequence[Sample]) -> dict[str, tuple[float, float, float]]:
    """Each figure's (center, half, widening) by numpy and scipy: five batches over the newest
    5 * (n // 5) intervals; a batch's rate is its amount over its time and its p99 numpy's
    inverted-CDF percentile of its I/Os; the widening is the AR(1) one for the bias-corrected lag-1
    correlation ((n r1 + 1) / (n - 3), within [0, 0.99]) of the per-interval figures, taken from the
    covariance matrix as in test_confidence.py."""
    n = len(samples)
    size = n // 5
    used = samples[n - 5 * size:]
    batches = [used[i * size:(i + 1) * size] for i in range(5)]

    def widening(values: list[float]) -> float:
        x = np.asarray(values, float)
        if len(x) < 4 or np.ptp(x) == 0:
            return 1.0
        d = x - x.mean()
        phi = float(np.clip((len(x) * np.dot(d[:-1], d[1:]) / np.dot(d, d) + 1) / (len(x) - 3), 0.0, 0.99))
        if phi == 0:
            return 1.0
        gamma = phi ** np.abs(np.subtract.outer(np.arange(5 * size), np.arange(5 * size)))
        means = np.kron(np.eye(5), np.ones((1, size))) / size
        form = size * means.T @ (np.eye(5) - 1 / 5) @ means / 4
        return max(1.0, (1 + phi) / (1 - phi) / float(np.trace(form @ gamma)))

    def figure(values: list[float], per_interval: list[float]) -> tuple[float, float, float]:
        f = widening(per_interval)
        return float(np.mean(values)), T4 * float(stats.sem(values)) * math.sqrt(f), f

    def p99(hists: list[dict[int, int]]) -> float:
        return float(np.percentile([v for h in hists for v, c in h.items() for _ in range(c)], 99,
                                   method="inverted_cdf"))

    timed = [s for s in used if s.seconds > 0]
    return {
        "iops": figure([sum(s.ios for s in b) / sum(s.seconds for s in b) for b in batches],
                       [s.ios / s.seconds for s in timed]),
        "MB/s": figure([sum(s.io_bytes for s in b) / 1e6 / sum(s.seconds for s in b) for b in batches],
                       [s.io_bytes / s.seconds for s in timed]),
        "p99": figure([p99([s.hist for s in b]) for b in batches], [p99([s.hist]) for s in used if s.hist]),
    }


def test_each_figure_is_widened_for_its_own_correlation() -> None:
    """40 intervals of unequal length (status lines 0.5 s and 1 s apart) of slowly moving rates,
    bytes and latencies: five batches of 8 (not sqrt(40) = 6), each figure widened for the lag-1
    correlation of its own per-second values; a direction's interval of no length (it reported
    nothing in a status line the other one did) has no per-second value."""
    rng = np.random.default_rng(40)
    wave = np.sin(np.arange(40) / 4)
    seconds = np.where(np.arange(40) % 2 == 0, 1.0, 0.5)
    reads = [Sample(float(t), int(round((10_000 + 900 * w + 300 * rng.normal()) * t)),
                    int(round((40e6 + 9e6 * np.cos(i / 3) + 2e6 * rng.normal()) * t)),
                    {int(400 + 60 * w + 20 * rng.normal()): 99, 5000: 1})
             for i, (w, t) in enumerate(zip(wave, seconds, strict=True))]
    writes = [Sample(0.0, 0, 0) if i % 5 == 3 else Sample(float(t), 500 + 50 * (i % 3), 2_048_000, {800: 500})
              for i, t in enumerate(seconds)]
    w = Watcher(StopRule(0.02, 0.95, 100, 200))
    for r, wr in zip(reads, writes, strict=True):
        w.add({"read": r, "write": wr})
    got = w.figures()
    assert list(got) == [f"{d} {f}" for d in ("read", "write") for f in ("iops", "MB/s", "p99")]
    for direction, samples in (("read", reads), ("write", writes)):
        ref = _reference(samples)
        for figure in ("iops", "MB/s", "p99"):
            interval = got[f"{direction} {figure}"]
            assert interval is not None and interval.batches == 5
            assert (interval.center, interval.half, interval.adjustment) == pytest.approx(ref[figure], rel=1e-9), \
                (direction, figure)
    assert all(_reference(reads)[f][2] > 1.2 for f in ("iops", "MB/s", "p99"))  # each widened, by its own


# --- judge: when to stop ---------------------------------------------------------------------------

def test_never_before_min_and_confident_at_it() -> None:
    """within 1%: r0 = 0.98% at min (10 s) is narrow enough, the batches are steady (range 20 of
    allowed 200; slope (20 - 10 + 0 - 5 + 10) / 10 = 1.5, excursion 6 of allowed 100)."""
    w = Watcher(StopRule(0.01, 0.95, 10, 60))
    said = _feed(w, _pairs(STEADY))
    assert said[:9] == [Decision("", float(t), None, 0.95) for t in range(1, 10)]
    last = said[9]
    assert (last.reason, last.seconds, last.confidence, last.detail) == (CONFIDENT, 10.0, 0.95, "")
    assert last.reached == pytest.approx(R0, rel=1e-9)
    assert w.confident == last and w.final() == last and w.first == (10.0, last.reached)
    assert last.text() == "adaptive stop: confident after 10 s; known within +-1.0% at 95%"
    # a knee step that waits for its rates alone says so
    rates = Watcher(StopRule(0.01, 0.95, 10, 60, percentile=False))
    last = _feed(rates, _pairs(STEADY))[-1]
    assert (last.reason, last.seconds, last.detail) == (CONFIDENT, 10.0, RATES_ONLY)
    assert RATES_ONLY == "IOPS and MB/s; the p99 as measured"


def test_intervals_a_hair_short_of_min_count_as_min() -> None:
    """Status lines 0.999999999 s apart add up to 9.999999999 s by the tenth: that is min (10 s)."""
    w = Watcher(StopRule(0.01, 0.95, 10, 60))
    samples = _pairs(STEADY)
    _feed(w, samples[:9])
    last = samples[9]
    w.add({"read": Sample(1 - 1e-9, last.ios, last.io_bytes, last.hist)})
    assert w.seconds < 10
    assert w.judge().reason == CONFIDENT


def test_sub_second_intervals() -> None:
    """Five 0.2 s intervals of a constant rate: known exactly (+-0%) after a second."""
    w = Watcher(StopRule(0.01, 0.95, 1, 60))
    said = _feed(w, [Sample(0.2, 200, 819_200, {100: 200})] * 5)
    assert w.two_stage() == 0.0
    assert (said[-1].reason, said[-1].seconds, said[-1].reached) == (CONFIDENT, pytest.approx(1.0), 0.0)


def test_the_first_stage_waits_for_every_figure() -> None:
    """The first two seconds' I/Os came without latencies: at min (10 s) the first batch has no p99, so
    the first stage waits; a second later the batches (1-3, 3-5, ...) all have one."""
    w = Watcher(StopRule(0.01, 0.95, 10, 60))
    samples = _pairs(STEADY)
    samples[:2] = [Sample(1.0, s.ios, s.io_bytes) for s in samples[:2]]
    said = _feed(w, samples)
    assert said[-1] == Decision("", 10.0, None, 0.95) and w.first is None and w.two_stage() is None
    assert w.first_each == {}
    w.add({"read": _second(1000)})
    w.judge()
    assert w.first is not None and w.first[0] == 11.0


def test_two_stages_run_as_long_as_the_first_stage_says() -> None:
    """within = r0 / 2: the first stage (10 s) says 10 * 2^2 = 40 s. Until then the width is r0 carried
    to now, r0 * sqrt(10 / t), though the whole run's own intervals are narrower from 11 s on (at 11 s,
    batches of 2 from the second second: (790 + 1210) / 2 = 1000, (810 + 1200) / 2 = 1005, 997.5, 1000,
    1002.5; after the first ten seconds the pairs are all at 1,000). At 40 s: the carried width is r0 / 2, the run's own
    (batches of 8: (990 + 1010 + 1000 + 995) / 4 = 998.75, (1005 + 3 * 1000) / 4 = 1001.25, 1000, 1000,
    1000) narrower still: confident, with the carried width."""
    within = R0 / 2
    w = Watcher(StopRule(within, 0.95, 10, 100))
    said = _feed(w, _pairs(STEADY + (1000.0,) * 15))
    assert w.first == (10.0, pytest.approx(R0, rel=1e-9))
    for t in range(11, 40):
        d = said[t - 1]
        assert (d.reason, d.seconds, d.confidence) == ("", float(t), 0.95)
        assert d.reached == pytest.approx(R0 * math.sqrt(10 / t), rel=1e-9)
    assert _rel((1000, 1005, 997.5, 1000, 1002.5)) < within  # the run's own at 11 s
    final = said[39]
    assert (final.reason, final.seconds) == (CONFIDENT, 40.0)
    assert final.reached == pytest.approx(within, rel=1e-9)
    assert _rel((998.75, 1001.25, 1000, 1000, 1000)) < within


def test_the_whole_runs_own_intervals_must_agree() -> None:
    """As above, but the seconds after the first stage move more: at 40 s the batch means are 998.75,
    1001.25, 1020, 980, 1000 (s^2 = (2 * 1.5625 + 800) / 4), wider than asked: the job goes on, and the
    width it reports is the IOPS interval's (the first figure not known closely enough), though the
    p99 of those seconds (150 us, then 60 us) is wider still."""
    within = R0 / 2
    w = Watcher(StopRule(within, 0.95, 10, 100))
    later = [1000.0] * 3 + [1020.0] * 4 + [980.0] * 4 + [1000.0] * 4
    p99s = [100] * 3 + [150] * 4 + [60] * 4 + [100] * 4
    samples = _pairs(STEADY) + [s for m, p in zip(later, p99s, strict=True) for s in _pairs([m], p)]
    said = _feed(w, samples)
    whole = _rel((998.75, 1001.25, 1020, 980, 1000))
    assert whole > within
    assert said[39].reason == ""
    assert (said[39].seconds, said[39].confidence) == (40.0, 0.95)
    assert said[39].reached == pytest.approx(whole, rel=1e-9)


def test_a_figure_unknown_at_the_two_stage_length_is_no_stop() -> None:
    """As the confident case, but the last eight seconds came without latencies: the last batch has
    no p99 at 40 s, so the job is not known at all (an infinite width), and at max neither."""
    w = Watcher(StopRule(R0 / 2, 0.95, 10, 100))
    samples = _pairs(STEADY + (1000.0,) * 11) + _pairs((1000.0,) * 4, p99=None)
    said = _feed(w, samples)
    assert said[39] == Decision("", 40.0, math.inf, 0.95)
    final = w.final()
    assert (final.reason, final.seconds, final.reached) == (MAX_REACHED, 40.0, None)
    assert final.detail == f"widest: read iops; asked +-{R0 / 2 * 100:g}%"


@pytest.mark.parametrize("edge", ["equal", "within the tolerance"])
def test_a_width_exactly_as_asked_is_enough(edge: str) -> None:
    """The widths are compared with a tolerance of 1e-12 for rounding: a first stage whose r0 equals
    ``within`` exactly, or ``within + 1e-12`` exactly, stops at min."""
    probe = Watcher(StopRule(1.0, 0.95, 10, 60))
    r0 = _feed(probe, _pairs(STEADY))[-1].reached
    assert r0 == pytest.approx(R0, rel=1e-9)
    within = r0
    if edge != "equal":
        within = r0 - 1e-12
        for _ in range(64):  # the float below r0 - 1e-12 whose sum with 1e-12 is r0 itself
            if within + 1e-12 == r0:
                break
            within = math.nextafter(within, r0 if within + 1e-12 < r0 else 0.0)
        assert within + 1e-12 == r0
    w = Watcher(StopRule(within, 0.95, 10, 60))
    assert _feed(w, _pairs(STEADY))[-1].reason == CONFIDENT


def test_a_trend_known_closely_goes_on_and_ends_not_steady() -> None:
    """Batch means 1,000 1,030 ... 1,120: known within 10% (r0 = t * sqrt(2,250 / 5) / 1,060 = 5.6%)
    but a trend (slope excursion 120, allowed 106): go on; at max, not steady, with the width."""
    means = (1000.0, 1030.0, 1060.0, 1090.0, 1120.0)
    r0 = T4 * math.sqrt(2250 / 5) / 1060
    assert r0 == pytest.approx(_rel(means), rel=1e-12)
    w = Watcher(StopRule(0.1, 0.95, 10, 10))
    said = _feed(w, _pairs(means))
    assert (said[-1].reason, said[-1].seconds, said[-1].confidence) == ("", 10.0, 0.95)
    assert said[-1].reached == pytest.approx(r0, rel=1e-9)
    why = ("read IOPS trend: rounds 1-5, mean 1,060.0; range 120.0 (allowed 212.0), "
           "slope excursion 120.0 (allowed 106.0)")
    final = w.final()
    assert (final.reason, final.seconds, final.confidence, final.detail) == (NOT_STEADY, 10.0, 0.95, why)
    assert final.reached == pytest.approx(r0, rel=1e-9)


def _tail_moves() -> list[Sample]:
    """The worked example's rates (IOPS +-0.98%, MB/s exact), but each pair of seconds has 1% of its
    I/Os in a slower bin (97, 103, 100, 98 and 102 us over the five pairs), its first second 2%: a
    batch's p99 is that bin, known within t * sqrt(6.5 / 5) / 100 = 3.2%, not widened (the
    per-second p99s alternate between the slow bin and 50 us: no positive correlation)."""
    out = []
    for mean, slow in zip(STEADY, (97, 103, 100, 98, 102), strict=True):
        for delta in (200, -200):
            ios = int(mean + delta)
            tail = ios // 50 if delta > 0 else 0
            out.append(Sample(1.0, ios, 4_000_000, {50: ios - tail, slow: tail} if tail else {50: ios}))
    return out


def test_the_p99_may_be_asked_a_width_of_its_own() -> None:
    """Against the reference (numpy, scipy): the rates are known within 0.98%, the p99 within 3.2%. At
    ``within: 2%`` the p99 is too wide and the first stage says 10 * (3.2 / 2)^2 = 25 s; with
    ``p99_within: 5%`` too, every figure is within what was asked of it at min: confident at 10 s,
    the width reported the widest figure's, the p99's 3.2%. The final detail names both asks."""
    samples = _tail_moves()
    ref = _reference(samples)
    iops_rel, p99_rel = ref["iops"][1] / ref["iops"][0], ref["p99"][1] / ref["p99"][0]
    assert iops_rel == pytest.approx(R0, rel=1e-9) and ref["MB/s"][1] == 0
    assert p99_rel == pytest.approx(T4 * math.sqrt(6.5 / 5) / 100, rel=1e-9) and ref["p99"][2] == 1.0
    alone = Watcher(StopRule(0.02, 0.95, 10, 20))
    said = _feed(alone, samples)
    assert said[-1].reason == "" and said[-1].reached == pytest.approx(p99_rel, rel=1e-9)
    assert alone.final().detail == "widest: read p99; asked +-2%"
    both = Watcher(StopRule(0.02, 0.95, 10, 20, p99_within=0.05))
    last = _feed(both, samples)[-1]
    assert (last.reason, last.seconds, last.detail) == (CONFIDENT, 10.0, "asked +-2%, p99 +-5%")
    assert last.reached == pytest.approx(p99_rel, rel=1e-9)
    assert last.text() == "adaptive stop: confident after 10 s; known within +-3.2% at 95% (asked +-2%, p99 +-5%)"
    assert both.first_each == pytest.approx({"read iops": iops_rel, "read MB/s": 0.0, "read p99": p99_rel})
    # the rates are still held to ``within``: asked 0.5%, the IOPS keep the job going
    # a knee step that waits for its rates alone says so, whatever the p99 was asked
    knee = Watcher(StopRule(0.02, 0.95, 10, 20, percentile=False, p99_within=0.05))
    assert _feed(knee, samples)[-1].detail == RATES_ONLY
    rates = Watcher(StopRule(0.005, 0.95, 10, 20, p99_within=0.05))
    assert _feed(rates, samples)[-1].reason == "" and rates.two_stage_short()
    assert rates.final().detail == "widest: read p99; asked +-0.5%, p99 +-5%"
    # and the p99 to its own: asked 3%, it is too wide (the rates alone would stop)
    tail = Watcher(StopRule(0.02, 0.95, 10, 20, p99_within=0.03))
    assert _feed(tail, samples)[-1].reason == "" and tail.two_stage_short()


def test_the_whole_runs_p99_is_held_to_its_own_width() -> None:
    """The first stage (the worked example, p99 exact) allows a stop at 40 s (within r0 / 2, as in
    test_two_stages_run_as_long_as_the_first_stage_says); the rates stay put after it but the p99 moves
    (150 us, then 60 us): at 40 s the whole run's p99 (the reference's width) decides. Asked a hair
    under it, the job goes on; a hair over it, it stops."""
    later = [1000.0] * 15
    p99s = [100] * 3 + [150] * 4 + [60] * 4 + [100] * 4
    samples = _pairs(STEADY) + [s for m, p in zip(later, p99s, strict=True) for s in _pairs([m], p)]
    ref = _reference(samples)
    p99_rel = ref["p99"][1] / ref["p99"][0]
    assert ref["iops"][1] / ref["iops"][0] < R0 / 2 < 0.05 < p99_rel < 1  # 87%: widened for its correlation
    for asked, reason in ((p99_rel * 0.99, ""), (p99_rel * 1.01, CONFIDENT)):
        w = Watcher(StopRule(R0 / 2, 0.95, 10, 100, p99_within=asked))
        said = _feed(w, samples)
        assert [d.reason for d in said[:39]] == [""] * 39 and w.first is not None
        assert (said[39].reason, said[39].seconds) == (reason, 40.0)
        assert said[39].reached == pytest.approx(p99_rel, rel=1e-9)


# --- final: how a job that did not stop ended --------------------------------------------------------

def test_max_reached_names_the_widest_figure() -> None:
    """within 0.5%: the first stage says 10 * (0.98 / 0.5)^2 = 38.5 s; at max (20 s) the run's own IOPS
    interval (batches of 4: 1000, 997.5, 1002.5, 1000, 1000: s^2 = 12.5 / 4) is 0.22%, the carried
    first stage r0 * sqrt(10 / 20) = 0.69%: that is the width; the widest figure is the IOPS."""
    for percentile, detail in ((True, "widest: read iops; asked +-0.5%"),
                               (False, "widest: read iops; asked +-0.5%; IOPS and MB/s; the p99 as measured")):
        w = Watcher(StopRule(0.005, 0.95, 10, 20, percentile=percentile))
        said = _feed(w, _pairs(STEADY + (1000.0,) * 5))
        assert not any(d.reason for d in said)
        final = w.final()
        assert (final.reason, final.seconds, final.confidence, final.detail) == (MAX_REACHED, 20.0, 0.95, detail)
        assert final.reached == pytest.approx(R0 * math.sqrt(0.5), rel=1e-9)
    assert _rel((1000, 997.5, 1002.5, 1000, 1000)) == pytest.approx(T4 * math.sqrt(12.5 / 4 / 5) / 1000)


def test_a_job_that_ended_before_min_reports_its_own_width() -> None:
    """The engine stopped after 20 s, before min (30 s): there was no first stage; the width is the
    run's own (0.22%, above)."""
    w = Watcher(StopRule(0.005, 0.95, 30, 60))
    _feed(w, _pairs(STEADY + (1000.0,) * 5))
    final = w.final()
    assert w.two_stage() is None
    assert (final.reason, final.detail) == (MAX_REACHED, "widest: read iops; asked +-0.5%")
    assert final.reached == pytest.approx(_rel((1000, 997.5, 1002.5, 1000, 1000)), rel=1e-9)


def test_a_job_without_io_ends_unknown() -> None:
    for percentile, detail in ((True, ""), (False, RATES_ONLY)):
        w = Watcher(StopRule(0.02, 0.95, 2, 3, percentile=percentile))
        said = _feed(w, [Sample(1.0, 0, 0)] * 3)
        assert said[-1] == Decision("", 3.0, None, 0.95)
        assert w.final() == Decision(MAX_REACHED, 3.0, None, 0.95, detail)


# --- a head: the first seconds differ from a steady rest --------------------------------------------

def _burst_head(head: int, total: int) -> list[Sample]:
    """``head`` seconds at 1,700 IOPS (a burst bucket), then 550 a second with +-10 alternating."""
    return [_second(1700) for _ in range(head)] + [_second(550 + (10 if i % 2 else -10))
                                                   for i in range(total - head)]


def test_a_head_of_burst_credits_is_named_with_the_ramp_that_leaves_it_out() -> None:
    """4 s at 1,700 then 56 s at 550 (+-10): the first 12 s batch reads 933, the others 550, a trend;
    the hint names the head, both rates and a ramp one second longer than it."""
    w = Watcher(StopRule(0.02, 0.95, 10, 60))
    assert not any(d.reason for d in _feed(w, _burst_head(4, 60)))
    final = w.final()
    assert final.reason == NOT_STEADY
    assert final.detail.startswith("read IOPS trend: rounds 1-5")
    assert final.detail.endswith("; read's first 4 s ran at 1,700 IOPS, the rest at 550: ramp_time: 5s "
                                 "leaves them out")


@pytest.mark.parametrize(("head", "total", "said"), [
    (0, 60, False),    # no head: nothing to say
    (1, 60, True),     # one second is a head
    (20, 60, True),    # a third of the run still is
    (21, 60, False),   # more than a third is the run's own behaviour, not a head
])
def test_a_head_is_at_most_a_third_of_the_run(head: int, total: int, said: bool) -> None:
    w = Watcher(StopRule(0.0001, 0.95, total, total))  # never confident before the end
    _feed(w, _burst_head(head, total))
    assert ("ramp_time" in w.final().detail) is said


def test_no_head_when_the_rest_is_not_steady_or_the_seconds_are_near_the_median() -> None:
    """A rest that still climbs (550 to 1,000 over 50 s) is a trend, not a head; seconds 19% off the
    median are not a head (HEAD_OFF 20%), 21% off are."""
    climbing = [_second(1700)] * 3 + [_second(550 + 9 * i) for i in range(50)]
    w = Watcher(StopRule(0.0001, 0.95, 53, 53))
    _feed(w, climbing)
    assert "ramp_time" not in w.final().detail
    for off, said in ((1.19, False), (1.21, True)):
        w = Watcher(StopRule(0.0001, 0.95, 30, 30))
        _feed(w, [_second(1000 * off)] * 2 + [_second(1000)] * 28)
        assert ("ramp_time" in w.final().detail) is said, off


# --- the drain: I/Os in flight when the job is stopped ---------------------------------------------

def test_the_p99_interval_reaches_the_percentile_the_drain_can_push_it_to() -> None:
    """10,000 I/Os, 9,900 in the 100 bin and 100 in the 200 bin: the p99 is 100 (rank 9,900). One I/O in
    flight drains 1.5 more after the stop; if they all land above, fio's p99 is the histogram's
    99.015th percentile, rank 9,901.5: the 200 bin. fio's figure can then be 200 and the truth a spread
    (1) below 100, so the half-width is the shift plus the spread: 101 (150 + 100 = 250 for a wider one).
    A rank interval's low end is its own: from 90 the distance is 110; from the center itself it is 100,
    within a half-width of 150 already."""
    samples = [Sample(1.0, 1000, 4_000_000, {100: 990, 200: 10})] * 10
    got = Interval(100.0, 1.0, 5, (100.0,) * 5)
    assert drain_widened(got, samples, 0) is got
    assert drain_widened(None, samples, 8) is None
    wide = drain_widened(got, samples, 1)
    assert wide is not None and (wide.center, wide.half) == (100.0, 101.0)
    assert drain_widened(Interval(100.0, 150.0, 5, (100.0,) * 5), samples, 1).half == 250.0  # not the larger
    ranks = Interval(100.0, 50.0, 1, (90.0, 150.0), 1.0, 90.0)
    assert drain_widened(ranks, samples, 1).half == 110.0
    held = Interval(100.0, 150.0, 1, (100.0, 250.0), 1.0, 100.0)
    assert drain_widened(held, samples, 1) is held
    assert drain_widened(got, [Sample(1.0, 0, 0, {})], 4) is got  # no latencies: nothing to shift


@pytest.mark.parametrize(("in_flight", "stops"), [(0, True), (10, True), (40, False)])
def test_a_job_with_a_deep_queue_is_not_stopped_while_its_drain_can_move_the_p99(in_flight: int,
                                                                                 stops: bool) -> None:
    """Every second 1,000 I/Os, 995 at 100 us and 5 at 300 us: p99 100 at 10 s (9,950 of 10,000 at 100).
    10 in flight drain 15: the 99.15th percentile (rank 9,915) is still 100, the job stops at min. 40 drain
    60: the 99.6th (rank 9,960) is 300, the p99 is not known within 2% while that many are in flight."""
    w = Watcher(StopRule(0.02, 0.95, 10, 60, in_flight=in_flight))
    said = _feed(w, [Sample(1.0, 1000, 4_000_000, {100: 995, 300: 5})] * 10)
    assert (said[-1].reason == CONFIDENT) is stops


def test_the_drain_widening_at_its_edges() -> None:
    """Nothing in flight: the interval as it was, even where the histogram's own p99 lies above it. One
    I/O in flight drains 1.5: over 150 I/Os that is the 99 + 100 * 1.5 / 150 = 100th percentile, the
    largest bin with I/Os in it (a bin left empty above it is none), 50 past the center, and the spread (1)
    added; over 149 (or one) more than the 1% above the p99 can drain, so fio's p99 is a drained I/O's
    latency: not known (an infinite width).
    The quantile 99 + 100 * 1.5 * 2 / 10,000 = 99.03 is rank 9,903, still in the 100 bin here."""
    got = Interval(100.0, 1.0, 5, (100.0,) * 5)
    above = [Sample(1.0, 100, 400_000, {100: 98, 200: 2})]  # its p99 is 200
    assert drain_widened(got, above, 0) is got
    mid = Interval(50.0, 1.0, 5, (50.0,) * 5)
    edge = drain_widened(mid, [Sample(1.0, 150, 614_400, {50: 148, 100: 2, 900: 0})], 1)
    assert edge is not None and edge.half == 51.0
    for ios in (149, 1):
        past = drain_widened(mid, [Sample(1.0, ios, 4096 * ios, {50: ios - 1, 100: 1})], 1)
        assert past is not None and past.center == 50.0 and past.half == math.inf
    exact = [Sample(1.0, 10_000, 40_960_000, {100: 9_903, 200: 97})]
    assert drain_widened(got, exact, 2) is got


def test_the_first_stage_leaves_even_one_io_in_flight_out() -> None:
    """100 I/Os a second, 99 at 100 us and 1 at 300 us: the p99 is the 100 bin with no spread, but one I/O
    in flight drains 1.5, the 99 + 150 / 1,000 = 99.15th percentile at 10 s, the 300 bin. The first stage
    plans from the spread alone (0), not from that +-200%; the whole run's check keeps the job going."""
    w = Watcher(StopRule(0.02, 0.95, 10, 60, in_flight=1))
    said = _feed(w, [Sample(1.0, 100, 409_600, {100: 99, 300: 1})] * 10)
    assert w.first == (10.0, 0.0) and said[-1].reason == "" and said[-1].reached == pytest.approx(2.0)


def test_the_first_stage_waits_for_a_figure_whose_center_is_zero() -> None:
    """I/Os reported without bytes: the MB/s is 0, its relative width infinite; the first stage is not
    taken on it, and the watcher says so (the width not known)."""
    w = Watcher(StopRule(0.02, 0.95, 5, 60))
    said = _feed(w, [Sample(1.0, 1000, 0, {100: 1000})] * 5)
    assert w.first is None and said[-1].reason == "" and said[-1].reached == math.inf


def test_a_job_whose_drain_outnumbers_the_tail_runs_on_until_it_does_not() -> None:
    """1,000 I/Os a second at 100 us, 64 in flight (96 to drain): at 9 s (9,000 I/Os) 96 is more than
    9,000 / 99 of them, so the p99 is not known (at 5 s, where the batches hold every second, the
    whole run's check says so); the job goes on and stops once the seconds hold 99 * 96 = 9,504 I/Os:
    at 10 s. Its first stage is at min (5 s), from the spread alone (none here)."""
    w = Watcher(StopRule(0.02, 0.95, 5, 60, in_flight=64))
    said = _feed(w, [Sample(1.0, 1000, 4_000_000, {100: 1000})] * 10)
    assert [d.reason for d in said[4:9]] == [""] * 5 and said[4].reached == math.inf
    assert (said[9].reason, said[9].seconds) == (CONFIDENT, 10.0) and w.first == (5.0, 0.0)


def test_the_drain_plans_no_stage_it_only_holds_the_stop() -> None:
    """Every second 1,000 I/Os, 995 at 100 us and 5 at 300 us, 40 in flight (60 to drain): the p99 is 100
    with no spread, but the drain reaches the 99 + 6,000 / n th percentile, in the 300 bin while it is past
    99.5 (n under 12,000). The first stage (10 s) plans from the spread alone, so the job stops once the
    drain cannot move the p99, at 15 s (the first second past 12 s where the five batches hold every
    second); carried as a spread, the drain's +-200% at 10 s would have planned 10 * (200 / 2)^2 s and
    run to max."""
    w = Watcher(StopRule(0.02, 0.95, 10, 60, in_flight=40))
    said = _feed(w, [Sample(1.0, 1000, 4_000_000, {100: 995, 300: 5})] * 60)
    assert w.first == (10.0, 0.0)
    assert [d.reason for d in said[9:14]] == [""] * 5 and said[9].reached == pytest.approx(2.0)
    assert (said[14].reason, said[14].seconds, said[14].reached) == (CONFIDENT, 15.0, 0.0)


def test_a_head_shorter_than_a_second_is_named_as_such() -> None:
    """fio's first document can come a part of a second into the run (its first interval then is that
    part): a 0.3 s head at 2,000 IOPS reads as 0.3 s, not 0 s, and its ramp is 2 s."""
    w = Watcher(StopRule(0.0001, 0.95, 30, 30))
    _feed(w, [Sample(0.3, 600, 600 * 4096, {100: 600})] + [_second(550)] * 30)
    assert w.final().detail.endswith("read's first 0.3 s ran at 2,000 IOPS, the rest at 550: ramp_time: 2s "
                                     "leaves them out")


def test_a_head_of_ten_seconds_or_more_is_named_in_whole_seconds() -> None:
    """12 s at 1,700 IOPS in a 40 s run (at most a third) reads "first 12 s", not one digit ("1e+01")."""
    w = Watcher(StopRule(0.0001, 0.95, 40, 40))
    _feed(w, _burst_head(12, 40))
    assert "read's first 12 s ran at 1,700 IOPS" in w.final().detail


def test_a_head_is_counted_second_by_second_from_the_median_rate() -> None:
    """A 3 s head is named as 3 s (ramp 4s); a second exactly 20% off the median is not a head (more than
    HEAD_OFF is); two half-second intervals at the rate of the rest are none (the rate is I/Os over
    seconds: 275 I/Os in half a second is 550 IOPS)."""
    w = Watcher(StopRule(0.0001, 0.95, 60, 60))
    _feed(w, _burst_head(3, 60))
    assert w.final().detail.endswith("read's first 3 s ran at 1,700 IOPS, the rest at 550: ramp_time: 4s "
                                     "leaves them out")
    w = Watcher(StopRule(0.0001, 0.95, 30, 30))
    _feed(w, [_second(1200)] * 2 + [_second(1000)] * 28)
    assert "ramp_time" not in w.final().detail
    uneven = [Sample(s, int(550 * s), 4_000_000, {100: int(550 * s)}) for s in (0.5, 0.5) + (1.0,) * 38]
    w = Watcher(StopRule(0.0001, 0.95, 40, 40))
    _feed(w, uneven)
    assert "ramp_time" not in w.final().detail


@pytest.mark.parametrize(("total", "said"), [(9, False), (10, True)])
def test_a_head_needs_ten_intervals(total: int, said: bool) -> None:
    """Twice the five batches: a 1 s head of a 10 s run is named, of a 9 s run not."""
    w = Watcher(StopRule(0.0001, 0.95, total, total))
    _feed(w, _burst_head(1, total))
    assert ("ramp_time" in w.final().detail) is said


# --- the head: fio's first interval, where its reset leaves the queue (rule.head) ------------------------

def test_head_bias_is_what_the_first_interval_moves_each_whole_run_figure() -> None:
    """Ten seconds: the first 1,500 I/Os and 6 MB with 20 of its I/Os at 300 us, the rest 1,000 I/Os
    and 4 MB at 100 us. IOPS 10,500 / 10 = 1,050 against 1,000 after it: 50; MB/s 42 / 10 = 4.2
    against 4.0: 0.2; p99 of all 10,500 I/Os: the 10,395th, in the 100 bin (10,480 at or below
    it), as after it: 0. With 120 at 300 us the 10,395th is past the 10,380 at 100: 200."""
    samples = [Sample(1.0, 1500, 6_000_000, {100: 1480, 300: 20})] + [_second(1000)] * 9
    assert head_bias("read iops", samples, 1) == pytest.approx(50.0)
    assert head_bias("read MB/s", samples, 1) == pytest.approx(0.2, rel=1e-9)
    assert head_bias("read p99", samples, 1) == 0.0
    tail = [Sample(1.0, 1500, 6_000_000, {100: 1380, 300: 120})] + samples[1:]
    assert head_bias("read p99", tail, 1) == 200.0
    assert head_bias("read iops", samples, 0) == 0.0
    # half-second documents: 150 I/Os and 1.5 MB in 1 s against 50 and 0.5 MB in the last 0.5 s
    halves = [Sample(0.5, 100, 1_000_000), Sample(0.5, 50, 500_000)]
    assert (head_bias("read iops", halves, 1), head_bias("read MB/s", halves, 1)) == (50.0, 0.5)
    for key in ("read iops", "read MB/s"):
        assert head_bias(key, [Sample(0.0, 0, 0)] * 2, 1) == math.inf  # no time: not known
        assert head_bias(key, [Sample(1.0, 100, 400_000), Sample(0.0, 0, 0)], 1) == math.inf  # none after


def test_a_head_is_a_bias_of_the_whole_run_not_a_spread_of_its_batches() -> None:
    """fio's reset leaves its queue in the first second: 1,500 I/Os there, then STEADY's pairs over
    and over. Batched with the rest (no head), the first batch reads (1,500 + 810) / 2 = 1,155 and the
    first stage's spread plans far past max: the job runs to 60 s. With the head, the first stage
    waits until five batches hold every second after it (11 s) and plans from them (STEADY's r0,
    0.98%, under the asked 2%); the whole run's width is then that spread plus the head's bias,
    (1,500 - 1,000) / 11 = 45.45 IOPS: 0.98% + 4.55% = 5.53% at 11 s. The job stops once the bias
    has faded with the spread under what is left: at 31 s (the bias 500 / 31 = 1.61%; at 21 s it was
    2.38%, and at 16 and 26 s the 3 s and 5 s batches split the pairs, their spread wide)."""
    seconds = [_second(1500)] + _pairs(STEADY) * 11
    plain = Watcher(StopRule(0.02, 0.95, 10, 60))
    said = _feed(plain, seconds[:60])
    assert plain.first is not None and plain.first[0] == 10 and plain.first[1] > 0.05
    assert all(d.reason == "" for d in said)
    w = Watcher(StopRule(0.02, 0.95, 10, 60, head=True))
    said = _feed(w, seconds)
    assert [d.reached for d in said[:10]] == [None] * 10  # the first stage waits for the 11th second
    assert said[9] == Decision("", 10.0, None, 0.95)
    assert w.first == (11.0, pytest.approx(R0, rel=1e-9))
    assert (said[10].reason, said[10].reached) == ("", pytest.approx(R0 + 500 / 11 / 1000, rel=1e-9))
    stop = next(d for d in said if d.reason)
    assert (stop.reason, stop.seconds) == (CONFIDENT, 31.0)
    assert 500 / 31 / 1000 < stop.reached <= 0.02
    assert said[20].reason == "" and said[20].reached > 500 / 21 / 1000


def test_the_head_is_left_out_of_the_steady_state_batches() -> None:
    """Ten seconds, the first at 3,000 IOPS and the rest at 1,000: without a head the first of five
    2 s batches reads 2,000, twice the others, and the SNIA range rule (20%) says trend; with the
    head, the batches are over the nine seconds after it (five of 1 s, the four oldest left over)."""
    seconds = [_second(3000)] + [_second(1000)] * 9
    plain, w = Watcher(StopRule(0.02, 0.95, 60, 60)), Watcher(StopRule(0.02, 0.95, 60, 60, head=True))
    _feed(plain, seconds)
    _feed(w, seconds)
    assert plain.steady()[0] is False and "trend" in plain.steady()[1]
    assert w.steady() == (True, "")


def _qd1(seconds: int, stall_at: int | None, seed: int = 21) -> list[Sample]:
    """A QD1 read at 46 IOPS, its I/Os 21-27 ms (bins of 0.1 ms), 8 KiB each; one 106 ms stall in
    second ``stall_at``."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(seconds):
        lat = [int(x) for x in rng.integers(210, 271, 46) * 100]
        if t == stall_at:
            lat[0] = 106_000
        hist: dict[int, int] = {}
        for x in lat:
            hist[x] = hist.get(x, 0) + 1
        out.append(Sample(1.0, 46, 46 * 8192, hist))
    return out


def test_a_slow_jobs_p99_is_known_from_its_ranks_once_they_are_past_a_stall() -> None:
    """At 46 IOPS a batch of two seconds holds 92 I/Os, and its p99 is its slowest: the stall's batch
    made the first stage's p99 spread +-103% and the job ran to max. With fewer than ``TAIL_IOS`` I/Os
    in a batch the p99 is judged by the ranks of the whole run's I/Os instead, at 1 - 5% / 3 a look
    (three doublings from 10 to 60 s): unbounded at 11 s (460 I/Os after the head: its upper rank past
    the slowest I/O), within 5% at 16 s (690 I/Os: its upper rank the 689th, below the stall)."""
    rule = StopRule(within=0.02, confidence=0.95, min_s=10, max_s=60, head=True, p99_within=0.05)
    w = Watcher(rule)
    decisions = _feed(w, _qd1(60, stall_at=3))
    assert w.ordered == {"read"}
    assert rule.confidence == 0.95 and w.tail_confidence == pytest.approx(1 - 0.05 / 3)
    stop = next(d for d in decisions if d.reason)
    assert stop.reason == CONFIDENT and stop.seconds == 16, stop.text()
    assert stop.detail == "asked +-2%, p99 +-5%; read p99 by rank"
    assert w.first is not None and "read p99" not in w.first_each  # the ranks plan no stage
    p99 = w.figures()["read p99"]
    assert p99 is not None and 26_000 <= p99.center <= 27_000 and p99.relative <= 0.05
    # the ranks' interval (its two bounds, one "batch"), not five batch p99s; at 98.3%, over the
    # intervals after the head (690 I/Os at 16 s: ranks 676 and 689), the 106 ms stall the 690th
    ranks = order_interval([s.hist for s in w.series["read"][1:]], 99, 1 - 0.05 / 3)
    assert ranks is not None and p99.batches == 1 and p99.batch_values == ranks.batch_values
    assert max(p99.batch_values) <= 27_000 and p99.half >= ranks.half


def test_every_direction_with_few_ios_is_named_in_the_stop() -> None:
    rule = StopRule(within=0.02, confidence=0.95, min_s=10, max_s=60, head=True, p99_within=0.05)
    w = Watcher(rule)
    for s in _qd1(60, stall_at=None):
        w.add({"read": s, "write": s})
        if w.judge().reason:
            break
    assert w.ordered == {"read", "write"} and w.final().detail.endswith("read, write p99 by rank")


def test_without_the_ranks_the_stall_keeps_a_slow_job_to_max(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same job judged by batch p99s (no batch too small for them): the stall's batch sets the
    first stage's p99 spread, which plans a run far past max. What the ranks are for."""
    monkeypatch.setattr(stop_rule, "TAIL_IOS", 0)
    w = Watcher(StopRule(within=0.02, confidence=0.95, min_s=10, max_s=60, head=True, p99_within=0.05))
    decisions = _feed(w, _qd1(60, stall_at=3))
    assert w.ordered == frozenset() and w.first_each["read p99"] > 1
    assert not any(d.reason for d in decisions) and w.final().reason == MAX_REACHED
    assert "by rank" not in w.final().detail


def test_enough_ios_in_every_batch_keep_the_batch_quantiles() -> None:
    """500 I/Os in each of the five batches (250 a second after the head): the batch p99s stand; 499 in
    one: the ranks."""
    for per_s, ordered in ((250, frozenset()), (249, frozenset({"read"}))):
        w = Watcher(StopRule(within=0.5, confidence=0.95, min_s=10, max_s=60, head=True))
        _feed(w, [_second(per_s) for _ in range(11)])
        assert w.first is not None and w.ordered == ordered, per_s
    w = Watcher(StopRule(within=0.5, confidence=0.95, min_s=10, max_s=60, head=True, percentile=False))
    _feed(w, [_second(10) for _ in range(11)])
    assert w.first is not None and w.ordered == frozenset()  # no p99 asked: nothing to judge by ranks


@pytest.mark.parametrize(("min_s", "max_s", "epochs"),
                         [(10, 60, 3), (10, 20, 1), (10, 20.1, 2), (10, 40, 2), (30, 30, 1), (0, 30, 1),
                          (0.5, 2, 2)])
def test_each_doubling_of_the_run_takes_its_share_of_the_ranks_confidence(min_s: float, max_s: float,
                                                                           epochs: int) -> None:
    w = Watcher(StopRule(within=0.02, confidence=0.95, min_s=min_s, max_s=max_s))
    assert w.tail_confidence == pytest.approx(1 - 0.05 / epochs)
