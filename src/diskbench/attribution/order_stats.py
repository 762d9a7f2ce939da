"""The p99 of few I/Os: a distribution-free interval from the order statistics of the merged histogram.

A job that completes 40 I/Os a second (QD1 against a 25 ms disk, a 1M read at a throughput cap) has
fewer than a hundred I/Os in each of the stop rule's five batches at ``min``, so each batch's p99 is
its slowest I/O or nearly: one 106 ms stall among 21-27 ms I/Os made one batch's p99 four times the
others', and the first stage planned a run far past max for a p99 that the whole run's 2,700 I/Os
put within 2% (bench/adaptive, 2026-11-28). The batch-quantile method (``confidence.py``) rests on
each batch's percentile being nearly normal, which needs several I/Os above it in every batch.

With fewer, the interval comes from the ranks instead (David & Nagaraja, *Order Statistics*, 3rd
ed., 2003, section 7.1; Hahn & Meeker, *Statistical Intervals*, 1991, section 5.2): of n independent
draws, the number ``m`` above the q-quantile is Binomial(n, 1 - q), so the order statistics
``X_(l) <= X_(u)`` with ``P(m >= n - l + 1) <= alpha / 2`` and ``P(m <= n - u) <= alpha / 2`` hold the
quantile with at least ``1 - alpha``, whatever the latency distribution (``binomial_ranks``; the
tests compare it with ``scipy.stats.quantile_test``). It is narrow exactly where the p99 is known:
where the I/Os around it lie close together, and a few stalls above it do not reach its rank.

I/Os are not independent either (a stall delays the I/Os queued behind it), so n is taken as the
effective number of draws: the I/Os over the variance inflation of the count above the p99
(``tail_inflation``), the design effect of a clustered binomial (Kish 1965, *Survey Sampling*,
section 8.2) from the per-interval counts' dispersion and lag-1 correlation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..model import merge_bins
from .confidence import Interval, hist_quantile, hist_rank, lag1


def binomial_ranks(n: int, q: float, confidence: float) -> tuple[int, int]:
    """The 1-based ranks ``(l, u)`` of the order statistics of ``n`` independent draws that hold their
    ``q``-quantile (0 < q < 1) with at least ``confidence``, each side at ``(1 - confidence) / 2``:
    ``l`` is 0 and ``u`` is ``n + 1`` where ``n`` draws cannot bound that side at all.

    ``m``, the draws above the quantile, is Binomial(n, 1 - q); its probabilities are summed from 0 up
    (a p99 has about n / 100 draws above it, so the sum is short), each from ``lgamma`` so that none
    underflows as ``(1 - p)^n`` would for a large n."""
    alpha = (1 - confidence) / 2
    tail = 1 - q
    log_n = math.lgamma(n + 1)
    cdf, j_lo = 0.0, -1  # j_lo: the largest j with P(m <= j) <= alpha
    for j in range(n + 1):
        below = cdf  # P(m <= j - 1)
        if below >= 1 - alpha:
            return n - j + 1, n - j_lo  # j: the smallest with P(m >= j) <= alpha
        cdf += math.exp(log_n - math.lgamma(j + 1) - math.lgamma(n - j + 1)
                        + j * math.log(tail) + (n - j) * math.log1p(-tail))
        if cdf <= alpha:
            j_lo = j
    return 0, n - j_lo


def tail_inflation(hists: Sequence[Mapping[int, int]], center: float) -> float:
    """How much more the count of I/Os above ``center`` varies than a binomial count would (at least
    1): the per-interval counts' dispersion about their expected share, times the AR(1) long-run
    factor of their lag-1 correlation (``confidence.lag1``). 1 when no I/O lies above ``center``
    or there are fewer than two intervals."""
    ios = [sum(h.values()) for h in hists]
    above = [sum(c for v, c in h.items() if v > center) for h in hists]
    total, over = sum(ios), sum(above)
    k = len(hists)
    if k < 2 or over <= 0 or over >= total:
        return 1.0
    share = over / total
    residuals = [a - n * share for a, n in zip(above, ios, strict=True)]
    binomial = total * share * (1 - share)
    dispersion = sum(r * r for r in residuals) / binomial * k / (k - 1)
    phi = lag1(residuals)
    return max(1.0, dispersion) * (1 + phi) / (1 - phi)


def order_interval(hists: Sequence[Mapping[int, int]], p: float, confidence: float) -> Interval | None:
    """The interval of percentile ``p`` of the merged ``hists`` (one per interval) from the order
    statistics of its effective number of I/Os: centered on the merged histogram's own percentile
    (the engine's figure), its half-width the farther of the two bounding ranks; infinite while the
    I/Os cannot bound it (too few above it). None without I/O.

    ``batch_values`` holds the two bounds; ``adjustment`` the variance inflation taken."""
    merged = merge_bins(hists)
    center = hist_quantile(merged, p)
    if center is None:  # no I/O
        return None
    total = sum(merged.values())
    inflation = tail_inflation(hists, center)
    n = int(total / inflation)  # 0 (fewer than one effective I/O) bounds nothing, as one does
    low, high = binomial_ranks(n, p / 100, confidence)
    if low < 1 or high > n:
        return Interval(center, math.inf, 1, (), inflation)
    # a rank among n effective draws is the same share of the I/Os measured
    lo, hi = (hist_rank(merged, math.ceil(r * total / n - 1e-9)) for r in (low, high))
    return Interval(center, max(center - lo, hi - center), 1, (lo, hi), inflation, lo)
