"""``drain_burst``: run a job until its target's credit burst is spent, so the measurement is the baseline.

A P4 runs at 3,500 IOPS for up to 30 minutes on a full bucket before it falls to its 120; a short job
on it measures the burst (the seeds' 3,499 IOPS). Draining runs the job's own I/O in passes and stops
as soon as one of three things is true:

- the per-second rate stepped down and stayed down for ``CONFIRM_S`` (``phases.detect_burst``: the
  same detector that labels burst phases in results);
- the rate is at or below every baseline cap already (within ``AT_BASELINE`` of it): credits are
  not being spent, or none were left, so there is nothing to drain;
- the time allowed ran out: the result then carries a warning, since it may still be a burst.

Where the provider knows the caps, the time allowed is also cut to what a full bucket could last at
the rate seen (``bucket / (rate - baseline)``), with a margin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .limit import Limit
from .phases import BurstPhases, detect_burst

PASS_S = 10.0  # each drain pass: long enough to hold a step and the plateau after it
CONFIRM_S = 5.0  # the lower plateau must last this long before the step counts
AT_BASELINE = 1.1  # a pass whose median second is within 10% of the baseline cap is at the baseline
BUCKET_MARGIN = 1.25


@dataclass(frozen=True)
class Baseline:
    """A baseline cap with a burst cap above it: what a drained target falls back to."""

    limit: Limit
    burst: Limit

    @property
    def bucket(self) -> float | None:
        """Operations (or MB) a full credit bucket holds above the baseline; None when unlimited."""
        if self.burst.minutes is None:
            return None
        return (self.burst.value - self.limit.value) * self.burst.minutes * 60


def baselines(limits: Sequence[Limit]) -> list[Baseline]:
    """The baseline caps among ``limits`` that have a burst cap of the same scope above them."""
    return [Baseline(base, burst) for base in limits for burst in limits
            if burst.bursts_above(base) and burst.value > base.value]


@dataclass(frozen=True)
class Verdict:
    """Where draining stands after a pass: ``done`` with ``why``, or go on."""

    done: bool
    drained: bool = False
    why: str = ""
    phases: BurstPhases | None = None


def judge(iops: Sequence[float], mbps: Sequence[float], interval_s: float, elapsed_s: float, allowed_s: float,
          found: Sequence[Baseline], last_pass: int) -> Verdict:
    """Decide after a pass. ``iops``/``mbps``: every interval of every pass so far; the last ``last_pass``
    intervals are the pass just run; ``found``: the target's baselines (empty when the caps are unknown)."""
    phases = detect_burst(iops, interval_s)
    if phases is not None and phases.baseline.duration_s >= CONFIRM_S:
        return Verdict(True, True, f"stepped down after {phases.burst.duration_s:,.0f} s of draining: "
                       f"{phases.text()}", phases)
    recent = {"iops": _median(iops[-last_pass:]) or 0.0, "mbps": _median(mbps[-last_pass:]) or 0.0}
    ratios = [(recent[b.limit.metric] / b.limit.value, b) for b in found if b.limit.value > 0]
    if ratios and all(r <= AT_BASELINE for r, _ in ratios):  # no cap passed: no credits are being spent
        _, b = max(ratios, key=lambda t: t[0])
        return Verdict(True, True, f"at the baseline: {recent[b.limit.metric]:,.0f} {b.limit.unit}, the "
                       f"{b.limit.label()} (no credits left to spend)")
    if elapsed_s >= allowed_s:
        return Verdict(True, False, f"no step down within {elapsed_s:,.0f} s of draining: the result may still "
                       f"be a burst; allow longer (drain_burst: {_duration(allowed_s * 2)})")
    return Verdict(False)


def allowed(asked_s: float, iops: float, mbps: float, found: Sequence[Baseline]) -> float:
    """The time draining may take: what was asked, cut to what a full bucket lasts at the rate seen."""
    lasts = []
    for b in found:
        rate = iops if b.limit.metric == "iops" else mbps
        if b.bucket is not None and rate > b.limit.value:
            lasts.append(b.bucket / (rate - b.limit.value))
    if not lasts:
        return asked_s
    return min(asked_s, max(lasts) * BUCKET_MARGIN + 2 * PASS_S)


def _median(values: Sequence[float]) -> float | None:
    ordered = sorted(values)
    if not ordered:
        return None
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _duration(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 120 else f"{round(seconds / 60)}m"
