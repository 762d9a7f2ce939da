"""How well a run's figures are known: confidence intervals from autocorrelated per-second samples.

Per-second IOPS are not independent draws (a queue, a cache or a throttle makes one second look
like the one before), so the textbook interval ``t * s / sqrt(n)`` is too narrow. The method of
**non-overlapping batch means** (Schmeiser 1982, "Batch size effects in the analysis of simulation
output", Operations Research 30(3); Law & Kelton, *Simulation Modeling and Analysis*, ch. 9.5.3)
splits the series into ``k`` consecutive batches and treats the batch means as the (nearly)
independent draws: the interval is ``mean +- t(k-1) * s_batch / sqrt(k)``. The correlation
between batch means shrinks as batches grow, so few large batches are safer than many small ones
on a short, strongly correlated series. ``mean_interval`` takes ``floor(sqrt(n))`` batches by
default (at least five; the sqrt rule, Jones, Haran, Caffo & Neath 2006, "Fixed-width output
analysis for Markov chain Monte Carlo", JASA 101(476)); the adaptive stop's first stage takes
exactly five, as large as they can be (``stop_rule.py``; the coverage it keeps is measured in
``tests/attribution/test_confidence.py``).

A percentile (p99) has no mean to batch, so each batch gives its own p99 from its merged latency
histogram and the interval is over those (the batch-quantile method, Seila 1982, "A batching
approach to quantile estimation in regenerative simulations", Management Science 28(5)).

Everything here is plain Python (no numpy at run time); the tests compare it with scipy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

BATCHES = 5


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval ``center +- half`` from ``batches`` batch figures."""

    center: float
    half: float
    batches: int
    batch_values: tuple[float, ...]

    @property
    def relative(self) -> float:
        """The half-width as a share of the center (inf when the center is 0: nothing is known)."""
        return self.half / abs(self.center) if self.center else math.inf


def t_quantile(p: float, dof: int) -> float:
    """Student's t quantile: the x with P(T <= x) = p for ``dof`` degrees of freedom.

    Bisection on the CDF (the regularized incomplete beta function); exact to ~1e-10, which is far
    below what a confidence level given in whole percent needs."""
    if not 0 < p < 1 or dof < 1:
        raise ValueError(f"no t quantile for p={p}, dof={dof}")
    if p < 0.5:
        return -t_quantile(1 - p, dof)
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, dof) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_cdf(mid, dof) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2


def _t_cdf(x: float, dof: int) -> float:
    """P(T <= x) for x >= 0: 1 - I_{dof/(dof+x^2)}(dof/2, 1/2) / 2."""
    return 1 - 0.5 * _betai(dof / 2, 0.5, dof / (dof + x * x))


def _betai(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (Numerical Recipes 6.4, Lentz's continued fraction)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


def sqrt_batches(n: int) -> int:
    """The number of batches for ``n`` samples: floor(sqrt(n)), at least 5 (the sqrt rule)."""
    return max(BATCHES, math.isqrt(n))


def batch_bounds(n: int, batches: int = BATCHES) -> list[tuple[int, int]]:
    """``batches`` consecutive equal batches over the last ``batches * (n // batches)`` samples
    (the few oldest left over are dropped: the newest data decides); [] when a batch would be empty."""
    size = n // batches
    if size < 1:
        return []
    start = n - size * batches
    return [(start + i * size, start + (i + 1) * size) for i in range(batches)]


def interval(values: Sequence[float], confidence: float) -> Interval | None:
    """The interval of ``values``' mean over the batch figures ``values`` (already one per batch)."""
    k = len(values)
    if k < 2:
        return None
    center = sum(values) / k
    var = sum((v - center) ** 2 for v in values) / (k - 1)
    half = t_quantile(1 - (1 - confidence) / 2, k - 1) * math.sqrt(var / k)
    return Interval(center, half, k, tuple(values))


def mean_interval(series: Sequence[float], confidence: float, batches: int | None = None) -> Interval | None:
    """The batch-means interval of the series' mean; None while a batch would be empty."""
    bounds = batch_bounds(len(series), batches or sqrt_batches(len(series)))
    if not bounds:
        return None
    return interval([sum(series[a:b]) / (b - a) for a, b in bounds], confidence)


def rate_interval(amounts: Sequence[float], seconds: Sequence[float], confidence: float,
                  batches: int | None = None) -> Interval | None:
    """The batch-means interval of a rate from intervals of unequal length (an engine's status lines
    do not come exactly a second apart): each batch's rate is its amount over its time, so a short
    interval counts for what it is; None while a batch would be empty."""
    bounds = batch_bounds(len(amounts), batches or sqrt_batches(len(amounts)))
    if not bounds:
        return None
    rates = []
    for a, b in bounds:
        span = sum(seconds[a:b])
        if span <= 0:
            return None
        rates.append(sum(amounts[a:b]) / span)
    return interval(rates, confidence)


def hist_quantile(hist: Mapping[int, int], p: float) -> float | None:
    """Percentile ``p`` of a latency histogram (bin value -> count): the first bin whose running count
    reaches p% of all (the rule fio and most histogram tools use); None for an empty histogram."""
    total = sum(hist.values())
    if total <= 0:
        return None
    need = p / 100 * total
    running = 0
    for value in sorted(hist):
        running += hist[value]
        if running >= need:
            return float(value)
    return float(max(hist))


def quantile_interval(hists: Sequence[Mapping[int, int]], p: float, confidence: float,
                      batches: int | None = None) -> Interval | None:
    """The batch-quantile interval of percentile ``p``: each batch's percentile from its merged
    per-interval histograms; None while a batch would be empty or holds no I/O."""
    values = []
    for a, b in batch_bounds(len(hists), batches or sqrt_batches(len(hists))):
        merged: dict[int, int] = {}
        for hist in hists[a:b]:
            for key, count in hist.items():
                merged[key] = merged.get(key, 0) + count
        q = hist_quantile(merged, p)
        if q is None:
            return None
        values.append(q)
    return interval(values, confidence) if values else None
