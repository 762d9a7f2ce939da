"""The adaptive stop: a job ends once its answer is known (a profile's ``stop:``, ``run --adaptive``).

Engine-neutral: an engine hands in each interval's I/Os, bytes and latency histogram per direction
as it runs (fio: its status-interval documents, read live), and the watcher says when to stop.
A job may stop, never before ``min``, once for every direction that did I/O:

- its mean IOPS, its mean MB/s and its p99 are each known within ``+-within`` at ``confidence``
  (batch means and batch quantiles over five batches, ``confidence.py``), by two stages: the
  spread is estimated once, at ``min``, and the job runs as long as that spread says the asked
  width needs (``Watcher.judge`` says why), and
- the five batch means of its IOPS pass the SNIA PTS steady-state rule (range within 20% of their
  mean, slope excursion within 10%: ``steady_state.py``), the batches standing for the PTS's rounds,
  so a rate that is still climbing or falling (a burst running out) is never "known".

Otherwise it runs to ``max`` (the workload's runtime), and the result says which way it ended:
``confident``; ``max reached`` (steady, but not known that closely); ``not steady`` (a trend).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .confidence import BATCHES, Interval, batch_bounds, quantile_interval, rate_interval
from .steady_state import steady_state

CONFIDENT, MAX_REACHED, NOT_STEADY = "confident", "max reached", "not steady"
PERCENTILE = 99.0


@dataclass(frozen=True)
class StopRule:
    """``within`` and ``confidence`` as fractions (0.02, 0.95); ``min_s``/``max_s`` in seconds."""

    within: float
    confidence: float
    min_s: float
    max_s: float


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
        """One line for a result's notes and the run's screen."""
        got = f"+-{self.reached * 100:.1f}%" if self.reached is not None and math.isfinite(self.reached) else "unknown"
        return (f"adaptive stop: {self.reason} after {self.seconds:.0f} s; known within {got} at "
                f"{self.confidence * 100:g}%" + (f" ({self.detail})" if self.detail else ""))

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
        self.seconds = 0.0
        self.first: tuple[float, float] | None = None  # (seconds, widest relative half-width) at min
        self.confident: Decision | None = None

    def add(self, interval: dict[str, Sample]) -> None:
        """One interval: every direction's sample (a direction missing from it did nothing)."""
        length = max((s.seconds for s in interval.values()), default=0.0)
        if length <= 0:
            return
        count = len(next(iter(self.series.values()), []))
        for name in set(self.series) | set(interval):
            self.series.setdefault(name, [Sample(length, 0, 0)] * count).append(
                interval.get(name, Sample(length, 0, 0)))
        self.seconds += length

    def figures(self, within: float | None = None) -> dict[str, Interval | None]:
        """Each figure's interval now (``read iops``, ``read MB/s``, ``read p99``, ...); None: not yet known.
        With ``within``, it stops at the first figure not known that closely (the watcher's check
        runs every second: the histograms are only merged once the rates are known)."""
        out: dict[str, Interval | None] = {}
        conf = self.rule.confidence
        for name, samples in sorted(self.series.items()):
            if sum(s.ios for s in samples) == 0:
                continue
            for key in (f"{name} iops", f"{name} MB/s", f"{name} p{PERCENTILE:g}"):
                out[key] = got = _figure(key, samples, conf)
                if within is not None and (got is None or got.relative > within):
                    return out
        return out

    def steady(self) -> tuple[bool, str]:
        """The SNIA PTS rule over the five batch means of each direction's IOPS."""
        for name, samples in sorted(self.series.items()):
            if sum(s.ios for s in samples) == 0:
                continue
            bounds = batch_bounds(len(samples), BATCHES)
            if not bounds:
                return False, f"{name}: fewer than {BATCHES} intervals"
            means = [sum(s.ios for s in samples[a:b]) / sum(s.seconds for s in samples[a:b]) for a, b in bounds]
            state = steady_state(means, window=BATCHES, max_rounds=BATCHES)
            if not state.achieved:
                return False, f"{name} IOPS trend: {state.text().removeprefix('steady state not achieved: ')}"
        return True, ""

    def judge(self) -> Decision:
        """Now, while the job runs: ``confident`` once the job has run as long as the first stage said
        and the series is steady (never before ``min``); else an empty reason (go on).

        Two stages (Stein 1945): stopping the first time an interval happens to be narrow picks the
        draws whose spread was underestimated (measured: 83% coverage for a stated 95% on white
        noise), so the spread is estimated once, at ``min``, with Student's t for its own
        uncertainty, and the job runs until that spread gives the asked width:
        ``n = n0 * (r0 / within)^2``, ``r0`` the widest relative half-width at ``n0``."""
        if self.seconds + 1e-9 < self.rule.min_s:
            return Decision("", self.seconds, None, self.rule.confidence)
        if self.first is None:
            figures = self.figures()
            widest = _widest(figures)
            if widest is None:  # a batch without I/O yet: the first stage waits for it
                return Decision("", self.seconds, None, self.rule.confidence)
            self.first = (self.seconds, widest)
        n0, r0 = self.first
        reached = r0 * math.sqrt(n0 / self.seconds)
        if reached > self.rule.within + 1e-12:
            return Decision("", self.seconds, reached, self.rule.confidence)
        ok, _why = self.steady()
        if ok:
            self.confident = Decision(CONFIDENT, self.seconds, reached, self.rule.confidence)
            return self.confident
        return Decision("", self.seconds, reached, self.rule.confidence)

    def final(self) -> Decision:
        """How the job ended: ``confident`` when ``judge`` said so; else, at max, ``not steady`` when
        the batches show a trend and ``max reached`` when they do not (the widest relative
        half-width then over all the run's samples)."""
        if self.confident is not None:
            return self.confident
        figures = self.figures()
        reached = _widest(figures)
        ok, why = self.steady()
        if not ok:
            return Decision(NOT_STEADY, self.seconds, reached, self.rule.confidence, why)
        worst = max(((k, v.relative) for k, v in figures.items() if v is not None), key=lambda kv: kv[1],
                    default=None)
        detail = f"widest: {worst[0]}; asked +-{self.rule.within * 100:g}%" if worst else ""
        return Decision(MAX_REACHED, self.seconds, reached, self.rule.confidence, detail)


def _figure(key: str, samples: list[Sample], confidence: float) -> Interval | None:
    """One figure's interval over five batches (the first stage's: large batches, ``confidence.py``)."""
    seconds = [x.seconds for x in samples]
    if key.endswith(" iops"):
        return rate_interval([x.ios for x in samples], seconds, confidence, BATCHES)
    if key.endswith(" MB/s"):
        return rate_interval([x.io_bytes / 1e6 for x in samples], seconds, confidence, BATCHES)
    return quantile_interval([x.hist for x in samples], PERCENTILE, confidence, BATCHES)


def _widest(figures: dict[str, Interval | None]) -> float | None:
    """The widest relative half-width of the figures; None when any is not known yet."""
    if not figures or any(v is None for v in figures.values()):
        return None
    return max(v.relative for v in figures.values() if v is not None)
