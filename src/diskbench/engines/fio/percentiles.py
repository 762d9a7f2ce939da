"""Latency percentiles from fio's histogram bins, with fio's own rule and fio's own arithmetic.

fio walks its bins in order and reports, for percentile p, the first bin at which the running
count reaches ``(long double) p / 100.0 * N`` (``calc_clat_percentiles`` in stat.c). ``p`` is
the double parsed from the percentile list (99.9 is 99.900000000000005684...), the arithmetic
is x87 extended precision (64-bit mantissa, each step rounded to nearest), and fio is built
with ``-ffast-math``, so the division is a multiplication by the extended-precision
reciprocal of 100, and the compiled code (disassembled from Debian's fio 3.33 and a 3.42
build) computes ``(N * 0.01L) * p``. Exact rational arithmetic lands one bucket lower whenever p/100 x N is a
whole number that fio's rounding lifts above it (p99.9 at N = 1000, 2000, 3000 ...): checked
against fio's printed percentiles on real runs. Merging jobs means summing their bins, then
applying the same rule; averaging per-job percentiles would be wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

_MANTISSA_BITS = 64  # x87 extended precision


def round_extended(x: Fraction) -> Fraction:
    """``x`` rounded to the nearest value with a 64-bit mantissa (ties to even), as x87 does."""
    if x == 0:
        return x
    sign = -1 if x < 0 else 1
    x = abs(x)
    exponent = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** exponent > x:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= x:
        exponent += 1
    scale = Fraction(2) ** (_MANTISSA_BITS - 1 - exponent)
    scaled = x * scale
    whole = scaled.numerator // scaled.denominator
    rest = scaled - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2):
        whole += 1
    return sign * Fraction(whole) / scale


_ONE_HUNDREDTH = round_extended(Fraction(1, 100))


def fio_threshold(p: float, n: int) -> Fraction:
    """The running count fio's percentile ``p`` must reach among ``n`` samples."""
    return round_extended(round_extended(n * _ONE_HUNDREDTH) * Fraction(p))


def merge_bins(parts: Iterable[Mapping[int, int]]) -> dict[int, int]:
    merged: dict[int, int] = {}
    for bins in parts:
        for value, count in bins.items():
            merged[value] = merged.get(value, 0) + count
    return merged


def percentiles_from_bins(bins: Mapping[int, int], plist: Iterable[float | str]) -> dict[float, int]:
    """Bin value at each percentile, by fio's rule (``running >= fio_threshold(p, N)``)."""
    wanted = sorted(float(p) for p in plist)
    total = sum(bins.values())
    out: dict[float, int] = {}
    if total == 0 or not wanted:
        return out
    thresholds = [(fio_threshold(p, total), p) for p in wanted]
    j = 0
    running = 0
    for value in sorted(bins):
        running += bins[value]
        while j < len(thresholds) and running >= thresholds[j][0]:
            out[thresholds[j][1]] = value
            j += 1
        if j == len(thresholds):
            break
    return out
