"""Burst phases in a per-interval rate series: a high plateau, one step down, a lower plateau.

Credit bursting (disks up to 512 GiB, most VM sizes) runs at the burst cap until the bucket is empty,
then drops to the baseline: a one-step shape. The detector fits the best single step (two means) and
accepts it only when it is a real drop, clearly above the noise, and fits far better than a straight
line - so a slow trend (a filling SSD, a warming cache) is not mistaken for a burst ending.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MIN_DROP = 0.15  # the baseline is at least 15% below the burst rate (VM burst 16,000 -> 12,800 is 20%)
MIN_POINTS = 3  # intervals on each side of the step
STEP_VS_LINE = 0.5  # the step model leaves at most half the squared error of a straight line
NOISE_SIGMAS = 3.0  # the step is at least this many within-phase standard deviations


@dataclass(frozen=True)
class Phase:
    """A stretch of the series: where it starts, how long it lasts, its mean rate."""

    start_s: float
    duration_s: float
    mean: float


@dataclass(frozen=True)
class BurstPhases:
    """The burst phase and the baseline phase after it; ``drop`` is 1 - baseline/burst."""

    burst: Phase
    baseline: Phase
    drop: float

    def text(self, unit: str = "IOPS") -> str:
        return (f"{self.burst.mean:,.0f} {unit} for {self.burst.duration_s:,.0f} s, then {self.baseline.mean:,.0f} "
                f"{unit} for {self.baseline.duration_s:,.0f} s ({self.drop:.0%} lower)")


def detect_burst(series: Sequence[float], interval_s: float = 1.0, *, min_drop: float = MIN_DROP,
                 min_points: int = MIN_POINTS) -> BurstPhases | None:
    """The burst and baseline phases of ``series`` (one rate per interval), or None when it does not step down."""
    values = [float(v) for v in series]
    n = len(values)
    if n < 2 * min_points or interval_s <= 0:
        return None
    prefix, prefix_sq = _prefix(values)
    k, sse_step = min(((k, _sse(prefix, prefix_sq, 0, k) + _sse(prefix, prefix_sq, k, n))
                       for k in range(min_points, n - min_points + 1)), key=lambda t: t[1])
    before, after = prefix[k] / k, (prefix[n] - prefix[k]) / (n - k)
    if before <= 0 or after > before * (1 - min_drop):
        return None
    if sse_step > STEP_VS_LINE * _line_sse(values):
        return None
    noise = math.sqrt(sse_step / (n - 2))
    if before - after <= NOISE_SIGMAS * noise:
        return None
    return BurstPhases(burst=Phase(0.0, k * interval_s, before),
                       baseline=Phase(k * interval_s, (n - k) * interval_s, after), drop=1 - after / before)


def _prefix(values: list[float]) -> tuple[list[float], list[float]]:
    prefix, prefix_sq = [0.0], [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
        prefix_sq.append(prefix_sq[-1] + v * v)
    return prefix, prefix_sq


def _sse(prefix: list[float], prefix_sq: list[float], lo: int, hi: int) -> float:
    """Squared error of values[lo:hi] around their mean, from prefix sums."""
    total, count = prefix[hi] - prefix[lo], hi - lo
    return max(0.0, (prefix_sq[hi] - prefix_sq[lo]) - total * total / count)


def _line_sse(values: list[float]) -> float:
    """Squared error of the least-squares straight line through the series."""
    n = len(values)
    x_mean, y_mean = (n - 1) / 2, sum(values) / n
    sxx = sum((i - x_mean) ** 2 for i in range(n))
    slope = sum((i - x_mean) * (v - y_mean) for i, v in enumerate(values)) / sxx
    return sum((v - (y_mean + slope * (i - x_mean))) ** 2 for i, v in enumerate(values))
