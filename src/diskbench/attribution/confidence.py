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

Five batches of a short series are still too small for a series that moves slowly: their means
vary less than the whole run's mean does (the batch-size bias, Schmeiser 1982) and neighbouring
ones are correlated, so the interval is too narrow (measured: 93.3% for a stated 95% with
AR(1) phi 0.8 over 125 s). ``adjusted`` widens an interval by how much the batch-means variance
falls short on an AR(1) series with the lag-1 correlation of the per-second figures
(``ar1_adjustment``; the AR(1) correction of ASAP3, Steiger et al. 2005, fitted to the per-second
figures instead of the batch means). A series with a slow component under fast noise, which an
AR(1) model does not describe, is still seen as quieter than it is (docs/adaptive.md).

A percentile (p99) has no mean to batch, so each batch gives its own p99 from its merged latency
histogram and the interval is over those (the batch-quantile method, Seila 1982, "A batching
approach to quantile estimation in regenerative simulations", Management Science 28(5)).

Everything here is plain Python (no numpy at run time); the tests compare it with scipy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from ..model import merge_bins

BATCHES = 5
PHI_MAX = 0.99  # the strongest lag-1 correlation the adjustment takes (0.99: a figure that barely moves)


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval ``center +- half`` from ``batches`` batch figures."""

    center: float
    half: float
    batches: int
    batch_values: tuple[float, ...]
    adjustment: float = 1.0  # the factor the variance was widened by for correlation (``adjusted``)
    lower: float | None = None  # the low end where it is not center - half (order statistics' ranks)

    @property
    def low(self) -> float:
        """Where the truth can lie lowest: a rank interval is not symmetric about the engine's figure, and
        a drain that moves the figure up is measured from here (``stop_rule.drain_widened``)."""
        return self.center - self.half if self.lower is None else self.lower

    def widened(self, by: float) -> Interval:
        """Both ends moved ``by`` further out."""
        return replace(self, half=self.half + by, lower=None if self.lower is None else self.lower - by)

    @property
    def relative(self) -> float:
        """The half-width as a share of the center (inf when the center is 0: nothing is known)."""
        return self.half / abs(self.center) if self.center else math.inf


@lru_cache(maxsize=256)
def t_quantile(p: float, dof: int) -> float:
    """Student's t quantile: the x with P(T <= x) = p for ``dof`` degrees of freedom.

    Bisection on the CDF (the regularized incomplete beta function); exact to ~1e-10, which is far
    below what a confidence level given in whole percent needs. Kept for each (p, dof) asked: the
    adaptive stop asks for the same one every second."""
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
    return hist_rank(hist, need) if need <= total else float(max(hist))


def hist_rank(hist: Mapping[int, int], rank: float) -> float:
    """The latency of the ``rank``-th smallest I/O of a histogram (1-based; a fractional rank: the
    first bin whose running count reaches it)."""
    running = 0
    for value in sorted(hist):
        running += hist[value]
        if running >= rank:
            return float(value)
    raise ValueError(f"rank {rank} is past the histogram's {running} I/Os")


def quantile_interval(hists: Sequence[Mapping[int, int]], p: float, confidence: float,
                      batches: int | None = None) -> Interval | None:
    """The batch-quantile interval of percentile ``p``: each batch's percentile from its merged
    per-interval histograms; None while a batch would be empty or holds no I/O."""
    values = []
    for a, b in batch_bounds(len(hists), batches or sqrt_batches(len(hists))):
        q = hist_quantile(merge_bins(hists[a:b]), p)
        if q is None:
            return None
        values.append(q)
    return interval(values, confidence) if values else None


def lag1(values: Sequence[float]) -> float:
    """The lag-1 autocorrelation of a series, corrected for its small-sample bias and kept within
    [0, ``PHI_MAX``] and at most ``(n - 1) / (n + 1)``: 0 for fewer than four values or a series
    that does not move.

    The sample autocorrelation ``r1`` of an AR(1) series of length n is biased low by about
    ``(1 + 3 phi) / n`` (Marriott & Pope 1954, "Bias in the estimation of autocorrelations",
    Biometrika 41(3/4); Kendall 1954, "Note on bias in the estimation of autocorrelation",
    Biometrika 41(3/4)), which is large on a first stage of 20 or 30 seconds: the estimate is
    ``(n r1 + 1) / (n - 3)``, that relation solved for phi. A negative correlation is taken as
    none: it makes the batch means vary more, so the interval without adjustment is already wide
    enough.

    n values cannot say that a series is correlated beyond ``(n - 1) / (n + 1)``: there its
    effective sample size ``n (1 - phi) / (1 + phi)`` (Zwiers & von Storch 1995, "Taking serial
    correlation into account in tests of the mean", Journal of Climate 8(2)) is one value, and the
    correction, a large-sample one, divides by ``n - 3``: five per-second p99s of a null-engine job
    (``min: 4s``) gave 0.99 and widened the first stage ten-thousandfold, so the job never stopped
    (the cap there is 0.67, a widening of about ten)."""
    n = len(values)
    if n < 4:
        return 0.0
    mean = sum(values) / n
    dev = [v - mean for v in values]
    spread = sum(d * d for d in dev)
    if spread <= 0:
        return 0.0
    r1 = sum(a * b for a, b in zip(dev, dev[1:], strict=False)) / spread
    return min(PHI_MAX, (n - 1) / (n + 1), max(0.0, (n * r1 + 1) / (n - 3)))


def ar1_adjustment(phi: float, size: int, batches: int = BATCHES) -> float:
    """How much the batch-means variance falls short on an AR(1) series: the variance of the mean
    the series really has, over what ``batches`` batches of ``size`` samples give on average
    (1 for phi <= 0; more the stronger the correlation and the smaller the batches).

    With unit marginal variance and autocorrelation ``phi^h``, a batch sum has variance
    ``V = b (1 + phi) / (1 - phi) - 2 phi (1 - phi^b) / (1 - phi)^2`` and two batch sums ``j``
    batches apart covariance ``C_j = phi^((j - 1) b + 1) (1 - phi^b)^2 / (1 - phi)^2``; the sample
    variance of ``k`` batch sums has expectation ``(k V - Var(total) / k) / (k - 1)``, with
    ``Var(total) = k V + 2 sum_j (k - j) C_j``. The batch-means estimate of the long-run variance
    is that over ``b``; the long-run variance is ``(1 + phi) / (1 - phi)``. The shortfall is the
    batch-size bias (Schmeiser 1982) and the correlation of neighbouring batch means that ASAP3
    corrects with an AR(1) model of the batch means (Steiger, Lada, Wilson, Joines, Alexopoulos &
    Goldsman 2005, "ASAP3: a batch means procedure for steady-state simulation analysis", ACM
    TOMACS 15(1)); diskbench fits the AR(1) model to the per-second figures, of which a short job
    has many more than batches."""
    if phi <= 0 or size < 1 or batches < 2:
        return 1.0
    b, k = size, batches
    long_run = (1 + phi) / (1 - phi)
    var = b * long_run - 2 * phi * (1 - phi**b) / (1 - phi) ** 2
    cov = [phi ** ((j - 1) * b + 1) * (1 - phi**b) ** 2 / (1 - phi) ** 2 for j in range(1, k)]
    total = k * var + 2 * sum((k - j) * c for j, c in enumerate(cov, start=1))
    expected = (k * var - total / k) / (k - 1) / b
    return max(1.0, long_run / expected) if expected > 0 else math.inf


def adjusted(got: Interval | None, series: Sequence[float | None]) -> Interval | None:
    """``got`` (an interval over ``got.batches`` batches of the newest samples) with its half-width
    widened for the correlation of ``series``, the per-interval figures it was batched from (None:
    an interval without one, left out): the variance by ``ar1_adjustment`` of their bias-corrected
    lag-1 autocorrelation (``lag1``), over the samples the batches used."""
    if got is None:
        return None
    size = len(series) // got.batches
    used = [v for v in series[len(series) - size * got.batches:] if v is not None]
    factor = ar1_adjustment(lag1(used), size, got.batches)
    return replace(got, half=got.half * math.sqrt(factor), adjustment=factor)
