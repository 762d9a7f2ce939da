"""The adaptive stop: a job ends once its answer is known (a profile's ``stop:``, ``run --adaptive``).

Engine-neutral: an engine hands in each interval's I/Os, bytes and latency histogram per direction
as it runs (fio: its status-interval documents, read live), and the watcher says when to stop.
A job may stop, never before ``min``, once for every direction that did I/O:

- its mean IOPS, its mean MB/s and its p99 are each known within ``+-within`` at ``confidence``
  (the p99 within ``+-p99_within`` when given: a tail percentile rests on the 1% of I/Os above it,
  so at the same width it needs far more of them than a mean does)
  (batch means and batch quantiles over five batches, widened for the correlation of the
  per-second figures: ``confidence.py``; the p99 of a direction whose batches hold too few I/Os for
  batch quantiles from the ranks of all its I/Os instead: ``order_stats.py``; the p99's reaching
  what the I/Os still in flight at the stop could push fio's figure to: ``drain_widened``), by two
  stages: the spread is estimated
  once, at ``min``, and the job runs as long as that spread says the asked width needs; then the whole run's own
  intervals must say so too (``Watcher.judge`` says why); with a ``head`` (fio's first interval, where its
  reset leaves the queue: ``head_bias``), the batches are over the intervals after it, and what it moves
  each figure by widens the whole run's interval as a bias, and
- the five batch means of its IOPS pass the SNIA PTS steady-state rule (range within 20% of their
  mean, slope excursion within 10%: ``steady_state.py``), the batches standing for the PTS's rounds,
  so a rate that is still climbing or falling (a burst running out) is never "known".

Otherwise it runs to ``max`` (the workload's runtime), and the result says which way it ended:
``confident``; ``max reached`` (steady, but not known that closely); ``not steady`` (a trend).
The confidence is each figure's own (as for any interval of one figure), not a joint statement
about all of them at once.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from typing import Any

from ..model import merge_bins
from .confidence import (
    BATCHES,
    Interval,
    adjusted,
    batch_bounds,
    hist_quantile,
    quantile_interval,
    rate_interval,
)
from .order_stats import order_interval
from .steady_state import steady_state

CONFIDENT, MAX_REACHED, NOT_STEADY = "confident", "max reached", "not steady"
PERCENTILE = 99.0
P99 = f" p{PERCENTILE:g}"  # what a p99 figure's key ends with (``read p99``)
HEAD_OFF = 0.2  # a head's seconds lie further than this from the run's median rate (the SNIA range)
# The I/Os fio completes after it is told to stop, per I/O the job keeps in flight: a 4 x QD16 read stopped
# by SIGINT completed 94 more (1.47 per I/O in flight), their latencies up to 160 ms where the steady p99
# was 109 ms (bench/adaptive, 2026-11-28). A fixed run's end drains the same way (its max 181-202 ms).
DRAIN_PER_IN_FLIGHT = 1.5
# The I/Os each batch must hold for its p99 to be a quantile and not its slowest few I/Os: five of them
# above it, the rule of thumb for a binomial count's normal approximation (n p >= 5). A direction with
# fewer at the first stage has its p99 judged by order statistics (``order_stats.py``).
TAIL_IOS = 500


@dataclass(frozen=True)
class StopRule:
    """``within`` and ``confidence`` as fractions (0.02, 0.95); ``min_s``/``max_s`` in seconds.
    ``percentile``: whether the p99 must be known too (a knee search's step waits for its rates
    alone unless the search has a p99 limit: ``runner/knee.py``)."""

    within: float
    confidence: float
    min_s: float
    max_s: float
    percentile: bool = True
    in_flight: int = 0  # the I/Os the job keeps in flight (iodepth x numjobs): they drain after the stop
    head: bool = False  # the first interval holds the engine's start: a bias, not a spread (``head_bias``)
    p99_within: float | None = None  # the p99's own half-width; None: ``within``, as for the rates

    def asked(self, key: str) -> float:
        """The half-width asked of one figure (``read p99``: ``p99_within`` when given)."""
        if self.p99_within is not None and key.endswith(P99):
            return self.p99_within
        return self.within

    def asked_text(self) -> str:
        """What was asked, for a decision's detail: ``asked +-2%`` or ``asked +-2%, p99 +-5%``."""
        tail = f", p{PERCENTILE:g} +-{self.p99_within * 100:g}%" if self.p99_within is not None else ""
        return f"asked +-{self.within * 100:g}%{tail}"


RATES_ONLY = "IOPS and MB/s; the p99 as measured"  # a decision's detail when the p99 was not waited for


@dataclass(frozen=True)
class Sample:
    """One interval of one direction: how long it was, what it did, its latency histogram (bin -> I/Os)."""

    seconds: float
    ios: int
    io_bytes: int
    hist: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    """Where the watcher stands: ``reason`` empty while the job should go on."""

    reason: str
    seconds: float
    reached: float | None  # the widest relative half-width of the figures (0.013: +-1.3%); None: unknown
    confidence: float
    detail: str = ""

    def text(self) -> str:
        """One line for a result's notes and the run's screen. A width past 100% says nothing a reader can
        use (a p99 "known within +-1,524%"), so it reads as not known within 100%."""
        if self.reached is None or not math.isfinite(self.reached):
            got = "not known"
        elif self.reached > 1:
            got = "not known within +-100%"
        else:
            got = f"known within +-{self.reached * 100:.1f}%"
        return (f"adaptive stop: {self.reason} after {self.seconds:.0f} s; {got} at {self.confidence * 100:g}%"
                + (f" ({self.detail})" if self.detail else ""))

    def to_json(self) -> dict[str, Any]:
        known = self.reached is not None and math.isfinite(self.reached)
        return {"reason": self.reason, "seconds": self.seconds, "reached": self.reached if known else None,
                "confidence": self.confidence, "detail": self.detail}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        """A decision as a result stores it (``GroupResult.stop``)."""
        return cls(str(data.get("reason", "")), float(data.get("seconds", 0.0)), data.get("reached"),
                   float(data.get("confidence", 0.0)), str(data.get("detail", "")))


class Watcher:
    """Per-interval samples in, a decision out; ``add`` each interval as it comes."""

    def __init__(self, rule: StopRule) -> None:
        self.rule = rule
        self.series: dict[str, list[Sample]] = {}
        self.p99s: dict[str, list[float | None]] = {}  # each interval's own p99 (for the correlation)
        self.lengths: list[float] = []  # every interval's length, to back-fill a direction that starts late
        self.seconds = 0.0
        self._first: tuple[float, dict[str, float]] | None = None  # min's seconds, each figure's width then
        self.ordered: frozenset[str] = frozenset()  # directions whose p99 is judged by order statistics
        self.confident: Decision | None = None

    def add(self, interval: dict[str, Sample]) -> None:
        """One interval: every direction's sample (a direction missing from it did nothing; one that
        first shows up late did nothing in each earlier interval, whose own lengths it gets)."""
        length = max((s.seconds for s in interval.values()), default=0.0)
        if length <= 0:
            return
        for name in set(self.series) | set(interval):
            sample = interval.get(name, Sample(length, 0, 0))
            self.series.setdefault(name, [Sample(x, 0, 0) for x in self.lengths]).append(sample)
            self.p99s.setdefault(name, [None] * len(self.lengths)).append(hist_quantile(sample.hist, PERCENTILE))
        self.lengths.append(length)
        self.seconds += length

    def figures(self, closely: bool = False, bias: bool = True) -> dict[str, Interval | None]:
        """Each figure's interval now over the whole run so far (``read iops``, ``read MB/s``,
        ``read p99``, ...); None: not yet known. With ``closely``, it stops at the first figure not
        known as closely as asked (the histograms are only merged once the rates are known); without
        ``bias``, each is its spread alone (the first stage's: ``head_bias`` and, for the p99,
        ``drain_widened`` left out)."""
        out: dict[str, Interval | None] = {}
        conf = self.rule.confidence
        for name, samples in sorted(self.series.items()):
            if sum(s.ios for s in samples) == 0:
                continue
            keys = [f"{name} iops", f"{name} MB/s"] + ([f"{name}{P99}"] if self.rule.percentile else [])
            tail = self.tail_confidence if name in self.ordered else None
            for key in keys:
                out[key] = got = _figure(key, samples, self.p99s[name], conf, self.rule.in_flight, self.head, bias,
                                         tail)
                if closely and self._short_of(key, got):
                    return out
        return out

    @property
    def tail_confidence(self) -> float:
        """The confidence of each look at a p99 judged by its ranks. Such a p99 is not planned by a first
        stage: the job may stop at any check of the whole run that finds it narrow enough, and stopping
        the first time an interval happens to be narrow loses confidence (per look at 95%: 93.8% of 600
        draws held the p99 of a 240-IOPS lognormal job asked +-3%). Looks within one doubling of the run
        see mostly the same I/Os, looks a doubling apart far fewer of them, so the error is split over
        the doublings from ``min`` to ``max`` (Bonferroni over geometric epochs, as the stitched
        confidence sequences of Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform, nonparametric,
        nonasymptotic confidence sequences", Annals of Statistics 49(2), spend it): with ``min`` 10 s and
        ``max`` 60 s, three of them, 98.3% a look. The coverage it keeps: tests/attribution/test_confidence.py."""
        epochs = max(1, math.ceil(math.log2(self.rule.max_s / self.rule.min_s))) if self.rule.min_s > 0 else 1
        return 1 - (1 - self.rule.confidence) / epochs

    def few_ios(self) -> frozenset[str]:
        """The directions one of whose five batches after the head holds fewer than ``TAIL_IOS`` I/Os."""
        few = set()
        for name, samples in self.series.items():
            rest = samples[self.head:]
            bounds = batch_bounds(len(rest), BATCHES)
            if bounds and min(sum(s.ios for s in rest[a:b]) for a, b in bounds) < TAIL_IOS:
                few.add(name)
        return frozenset(few)

    @property
    def head(self) -> int:
        """How many of the oldest intervals are the head the batches leave out (1 with ``rule.head``)."""
        return 1 if self.rule.head else 0

    def _batched_whole(self) -> bool:
        """Whether five batches hold every interval after the head (their count a multiple of five):
        ``batch_bounds`` drops up to four of the oldest otherwise."""
        return (len(self.lengths) - self.head) % BATCHES == 0

    def steady(self) -> tuple[bool, str]:
        """The SNIA PTS rule over the five batch means of each direction's IOPS (after the head)."""
        for name, samples in sorted(self.series.items()):
            if sum(s.ios for s in samples) == 0:
                continue
            means = _batch_rates(samples[self.head:])
            if means is None:
                return False, f"{name}: fewer than {BATCHES} intervals"
            state = steady_state(means, window=BATCHES, max_rounds=BATCHES)
            if not state.achieved:
                return False, f"{name} IOPS trend: {state.text().removeprefix('steady state not achieved: ')}"
        return True, ""

    def _sequential(self, key: str) -> bool:
        """Whether a figure is judged look by look and not planned by the first stage (an
        order-statistics p99: its width falls as the rank above it leaves the stalls, not as one over
        the square root of the run)."""
        return key.endswith(P99) and key.removesuffix(P99) in self.ordered

    def _short_of(self, key: str, got: Interval | None) -> bool:
        """Whether a figure is not known as closely as asked of it (not known at all, or wider)."""
        return got is None or _over(got.relative, self.rule.asked(key))

    @property
    def first(self) -> tuple[float, float] | None:
        """The first stage: (seconds, widest relative half-width) at min; None before it."""
        if self._first is None:
            return None
        return self._first[0], max(self._first[1].values())

    @property
    def first_each(self) -> dict[str, float]:
        """Each figure's relative half-width at the first stage (empty before it)."""
        return dict(self._first[1]) if self._first is not None else {}

    def two_stage(self) -> float | None:
        """The first stage's widest relative half-width carried to now: ``r0 * sqrt(n0 / n)``
        (None before the first stage)."""
        if self.first is None or self.seconds <= 0:
            return None
        n0, r0 = self.first
        return r0 * math.sqrt(n0 / self.seconds)

    def two_stage_short(self) -> bool:
        """Whether some figure's first-stage width, carried to now, is still wider than asked of it:
        with one width asked of all, the same as the widest being too wide."""
        assert self._first is not None  # judge asks once the first stage is taken (seconds >= min > 0)
        n0, each = self._first
        scale = math.sqrt(n0 / self.seconds)
        return any(_over(r0 * scale, self.rule.asked(key)) for key, r0 in each.items())

    def judge(self) -> Decision:
        """Now, while the job runs: ``confident`` once the job has run as long as the first stage said,
        the whole run's own intervals are as narrow and the series is steady (never before ``min``);
        else an empty reason (go on).

        Two stages (Stein 1945): stopping the first time an interval happens to be narrow picks the
        draws whose spread was underestimated (measured: 83% coverage for a stated 95% on white
        noise), so the spread is estimated once, at ``min``, with Student's t for its own
        uncertainty, and the job runs until that spread gives the asked width:
        ``n = n0 * (r0 / within)^2``, ``r0`` the widest relative half-width at ``n0``. For
        independent normal figures, the error of the mean at ``n`` over ``r0 * sqrt(n0 / n)`` is
        Student's t with four degrees of freedom whichever ``n`` the spread chose (the mean is
        independent of the spread and of a stop decided by it): the width holds at the stated
        confidence over all jobs, those that stop early and those that run long alike. A job stops
        only later than that (the check below looks at the spread alone, not at where the mean
        lies) and never reports a narrower width, so it keeps that.

        Each interval is widened for the correlation of the per-second figures (``confidence.py``:
        ``adjusted``); and since five batches of a short first stage still see a slowly moving
        series as quieter than it is, the job also waits until the whole run's own intervals (five
        batches over everything so far, as large as they can be) are within ``within``: the width
        reported is the wider of the two.

        The job stops only where the five batches hold every interval so far (their count a multiple
        of five): ``batch_bounds`` leaves up to four of the oldest out, but fio's figures count them,
        and the oldest are where a head lies (a ramp that ended on burst credits, a job's slow first
        I/Os: engines/fio/live.py has what leaving the first second out cost in the lab).

        The first stage's p99 is its spread alone: what the I/Os in flight at the stop can add
        (``drain_widened``) bounds a bias, not a spread. It shrinks as one over the I/Os, not as one
        over their square root, so carried as ``r0 * sqrt(n0 / n)`` it would plan a run far longer
        than it needs (a 4 x QD4 read at a 110-IOPS cap, its p99 within +-1% from 31 s, ran 53 s on
        the width the drain gave it when it first became finite). The whole run's check holds the
        p99 with the drain, so the job still runs until the drain cannot move it past what was asked.

        A p99 judged by its ranks (its batches held fewer than ``TAIL_IOS`` I/Os at the first stage:
        ``order_stats.py``) is left out of the first stage and judged at each of the whole run's checks
        alone, at ``tail_confidence``.

        With a ``p99_within`` of its own, each figure is held to its own width in both stages (the
        job runs until the first stage's spread of every figure gives what was asked of it); the
        width reported stays the widest of all figures, so it may be the p99's, wider than
        ``within``."""
        conf = self.rule.confidence
        if self.seconds + 1e-9 < self.rule.min_s:
            return Decision("", self.seconds, None, conf)
        if self.first is None:
            if self.head and not self._batched_whole():
                # after a head, the first stage waits until five batches hold every interval after it
                # (min + 1 s for fio's ten 1 s intervals), not four of them less
                return Decision("", self.seconds, None, conf)
            self.ordered = self.few_ios() if self.rule.percentile else frozenset()
            figures = {k: v for k, v in self.figures(bias=False).items() if not self._sequential(k)}
            widest = _widest(figures)
            if widest is None or math.isinf(widest):
                # a batch without I/O yet (or a figure whose center is 0): the first stage waits for it
                # (its width is no spread to plan the run by)
                return Decision("", self.seconds, widest, conf)
            self._first = (self.seconds, {k: v.relative for k, v in figures.items() if v is not None})
        reached = self.two_stage()
        assert reached is not None
        if self.two_stage_short() or not self._batched_whole():
            # the whole run's check only where its five batches hold every interval after the head:
            # fio's figures count the oldest ones too (batch_bounds drops up to four of them)
            return Decision("", self.seconds, reached, conf)
        figures = self.figures(closely=True)
        whole = _widest(figures)
        reached = max(reached, whole if whole is not None else math.inf)
        if whole is None or any(self._short_of(k, v) for k, v in figures.items()):
            return Decision("", self.seconds, reached, conf)
        ok, _why = self.steady()
        if ok:
            self.confident = Decision(CONFIDENT, self.seconds, reached, conf, self._confident_detail())
            return self.confident
        return Decision("", self.seconds, reached, conf)

    def _confident_detail(self) -> str:
        """What a confident stop adds: that the p99 was not waited for, or both asks when the p99 had its
        own (the width reported, the widest figure's, may then be wider than ``within``)."""
        if not self.rule.percentile:
            return RATES_ONLY
        return "; ".join(x for x in (self.rule.asked_text() if self.rule.p99_within is not None else "",
                                     self.ranks_note()) if x)

    def ranks_note(self) -> str:
        """Which p99s were judged by their ranks (``order_stats.py``), for a decision's detail: a reader
        who sees a slow job run long learns that its batches held too few I/Os for batch p99s."""
        return f"{', '.join(sorted(self.ordered))}{P99} by rank" if self.ordered else ""

    def final(self) -> Decision:
        """How the job ended: ``confident`` when ``judge`` said so; else, at max, ``not steady`` when
        the batches show a trend and ``max reached`` when they do not. The width then is the wider of
        the whole run's intervals and the first stage's carried to the end (``two_stage``): a job
        that ran to max because its first stage looked wide keeps that width, so that over all
        jobs, those that stopped and those that ran to max, the intervals hold at the stated
        confidence."""
        if self.confident is not None:
            return self.confident
        figures = self.figures()
        reached = _widest(figures)
        carried = self.two_stage()
        if reached is not None and carried is not None:
            reached = max(reached, carried)
        ok, why = self.steady()
        hint = self.head_hint()
        if not ok:
            return Decision(NOT_STEADY, self.seconds, reached, self.rule.confidence,
                            "; ".join(x for x in (why, hint) if x))
        worst = max(((k, v.relative) for k, v in figures.items() if v is not None), key=lambda kv: kv[1],
                    default=None)
        detail = f"widest: {worst[0]}; {self.rule.asked_text()}" if worst else ""
        detail = "; ".join(x for x in (detail, "" if self.rule.percentile else RATES_ONLY, self.ranks_note(), hint)
                           if x)
        return Decision(MAX_REACHED, self.seconds, reached, self.rule.confidence, detail)

    def head_hint(self) -> str:
        """What to change when a job's first seconds differ from a steady rest (burst credits, a cache
        warming, a throttle's bucket): they weigh on every figure and keep the job from being known,
        but a ramp leaves them out. Empty when no direction has such a head."""
        for name, samples in sorted(self.series.items()):
            head = leading_head(samples)
            if head is not None:
                seconds, head_rate, rest_rate = head
                took = f"{seconds:.0f}" if seconds >= 1 else f"{seconds:.1g}"  # a first document's part second
                return (f"{name}'s first {took} s ran at {head_rate:,.0f} IOPS, the rest at "
                        f"{rest_rate:,.0f}: ramp_time: {math.ceil(seconds) + 1}s leaves them out")
        return ""


def drain_widened(got: Interval | None, samples: list[Sample], in_flight: int) -> Interval | None:
    """The p99's interval widened for the I/Os the job completes after it is stopped: fio counts them,
    their latencies are a queue's end (longer than the steady ones), and over a short run they are
    enough of the I/Os to move the p99 fio reports (the stop rule's batches, taken while the job ran,
    never see them). If all ``DRAIN_PER_IN_FLIGHT * in_flight`` of them land above the p99, the p99
    of the whole is the steady histogram's percentile ``99 + 100 * drain / n`` (n: its I/Os so far),
    and fio's figure can lie that high while the truth lies at the interval's low end: the half-width
    is at least their distance, the shift plus the spread below the center (the larger of the two
    alone let a 64k read at 64 in flight stop at 16 s saying +-3.6%; it reported its p99 6.1% above
    the fixed run's). When the drain can be more than that 1% of all, fio's p99 is one of the drained
    I/Os' own latencies, which can lie past everything the batches saw (a 4 x QD16 write at a
    473-IOPS cap stopped at 10 s: p99 181 ms, the fixed run's 139 ms): not known at all, so the job
    goes on. A fixed run has the same drain, over more I/Os."""
    if got is None or in_flight <= 0:
        return got
    merged = merge_bins([s.hist for s in samples])
    total = sum(merged.values())
    if total <= 0:
        return got
    percentile = PERCENTILE + 100 * DRAIN_PER_IN_FLIGHT * in_flight / total
    if percentile > 100:  # more drained I/Os than the 1% above the p99: it lies among them, never seen
        return replace(got, half=math.inf)
    shifted = hist_quantile(merged, percentile)
    if shifted is None or shifted - got.low <= got.half:
        return got
    return replace(got, half=shifted - got.low)


def leading_head(samples: list[Sample]) -> tuple[float, float, float] | None:
    """(seconds, rate, rate of the rest) of the leading intervals whose rate lies further than
    ``HEAD_OFF`` from the median of all (the median: a head does not move it), when they are at most
    a third of the run and the rest is steady by the SNIA rule over five batches; else None."""
    rates = [s.ios / s.seconds for s in samples if s.seconds > 0]
    if len(rates) != len(samples) or len(rates) < 2 * BATCHES:
        return None
    middle = statistics.median(rates)
    n = 0
    while n < len(rates) and abs(rates[n] - middle) > HEAD_OFF * middle:
        n += 1
    rest = samples[n:]
    means = _batch_rates(rest)
    if n == 0 or 3 * n > len(samples) or means is None:
        return None
    if not steady_state(means, window=BATCHES, max_rounds=BATCHES).achieved:
        return None
    head_s = sum(s.seconds for s in samples[:n])
    rest_s = sum(s.seconds for s in rest)
    return head_s, sum(s.ios for s in samples[:n]) / head_s, sum(s.ios for s in rest) / rest_s


def _batch_rates(samples: list[Sample]) -> list[float] | None:
    """The IOPS of each of five batches of ``samples`` (the SNIA rule's rounds); None: too few."""
    bounds = batch_bounds(len(samples), BATCHES)
    if not bounds:
        return None
    return [sum(s.ios for s in samples[a:b]) / sum(s.seconds for s in samples[a:b]) for a, b in bounds]


def _figure(key: str, samples: list[Sample], p99s: list[float | None], confidence: float,
            in_flight: int, head: int, bias: bool, tail: float | None = None) -> Interval | None:
    """One figure's interval over five batches of the intervals after the ``head`` (as large as they
    can be: ``confidence.py``), widened for the correlation of the figure's per-interval values (the
    p99, with a ``tail`` confidence, from the order statistics of those intervals instead:
    ``order_stats.py``); with ``bias``, also by what the head moves the whole run's figure
    (``head_bias``) and, for the p99, for the drain (``drain_widened``)."""
    if tail is not None and key.endswith(P99):
        got = order_interval([s.hist for s in samples[head:]], PERCENTILE, tail)
    else:
        got = _spread(key, samples[head:], p99s[head:], confidence)
    if not bias or got is None:
        return got
    if head:
        got = got.widened(head_bias(key, samples, head))
    return drain_widened(got, samples, in_flight) if key.endswith(P99) else got


def head_bias(key: str, samples: list[Sample], head: int) -> float:
    """How far the first ``head`` intervals move the whole run's figure (the engine's, over every
    interval, against the same over the rest): fio's figures count them, the batches do not.

    fio resets its figures at the end of the ramp with the queue full, and the first interval after
    holds that queue: its I/Os, issued before the reset, are counted and timed (a 4 x QD256 write
    capped at 16,000 IOPS: 17,420 I/Os in the first 1.03 s, its p50 80 ms and p99 114 ms against
    95 and 103 after). That is a bias of one interval, which fades as one over the run's length;
    batched with the rest it reads as a spread, fading as one over its square root, and the first
    stage planned 75 s for a write whose every figure was within +-2% from 20 s. A head that is a
    real transient (the last of a burst bucket, a cache warming) fades the same way, and the width
    holds the job until it has."""
    whole, rest = _whole(key, samples), _whole(key, samples[head:])
    return abs(whole - rest) if whole is not None and rest is not None else math.inf


def _whole(key: str, samples: list[Sample]) -> float | None:
    """A figure over all of ``samples`` as the engine gives it: I/Os or MB over seconds, the p99 of
    the merged histogram; None without time or I/O."""
    seconds = sum(s.seconds for s in samples)
    if key.endswith(" iops"):
        return sum(s.ios for s in samples) / seconds if seconds > 0 else None
    if key.endswith(" MB/s"):
        return sum(s.io_bytes for s in samples) / 1e6 / seconds if seconds > 0 else None
    return hist_quantile(merge_bins([s.hist for s in samples]), PERCENTILE)


def _spread(key: str, samples: list[Sample], p99s: list[float | None], confidence: float) -> Interval | None:
    """One figure's batch interval over ``samples``, widened for the correlation of its per-interval values."""
    seconds = [x.seconds for x in samples]
    if key.endswith(" iops"):
        return adjusted(rate_interval([x.ios for x in samples], seconds, confidence, BATCHES),
                        [x.ios / x.seconds if x.seconds > 0 else None for x in samples])
    if key.endswith(" MB/s"):
        return adjusted(rate_interval([x.io_bytes / 1e6 for x in samples], seconds, confidence, BATCHES),
                        [x.io_bytes / x.seconds if x.seconds > 0 else None for x in samples])
    return adjusted(quantile_interval([x.hist for x in samples], PERCENTILE, confidence, BATCHES), p99s)


def _over(relative: float, asked: float) -> bool:
    """Wider than asked (a hair's breadth, 1e-12, is rounding: a width exactly as asked is enough)."""
    return relative > asked + 1e-12


def _widest(figures: dict[str, Interval | None]) -> float | None:
    """The widest relative half-width of the figures; None when any is not known yet."""
    if not figures or any(v is None for v in figures.values()):
        return None
    return max(v.relative for v in figures.values() if v is not None)
