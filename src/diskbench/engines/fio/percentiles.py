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

from ...model import merge_bins as merge_bins  # fio's merge of its jobs' or clients' bins: summed bin by bin

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


# --- fio's histogram buckets (stat.h, ``plat_val_to_idx`` / ``plat_idx_to_val`` in stat.c) ----
# Every latency fio counts goes into a log-linear bucket: values below 128 are exact, then each
# power of two is split into 64 buckets (FIO_IO_U_PLAT_BITS = 6, unchanged since fio 1.x), and
# fio reports a bucket by its midpoint. So every json+ bin key and every printed percentile is
# such a midpoint. Stock fio keeps 29 groups in ns (3.x: the last bucket, 17.1 s, holds every
# longer latency) or 19 in µs (2.x: 16.7 s); some users build fio with more groups to track
# longer latencies (FIO_IO_U_PLAT_GROUP_NR=32: 137 s), so the group count is not a bound. What
# bounds a bucket is the latency it holds: fio's counters are 64-bit, and no sample exceeds the
# ``max`` fio printed beside the bins, so no bucket lies beyond the one that holds ``max``.
PLAT_BITS = 6
_PLAT_VAL = 1 << PLAT_BITS
LATENCY_LIMIT = 2**64  # fio keeps latencies in 64-bit unsigned counters


def bucket_index(value: int) -> int:
    """The index of fio's bucket for a latency ``value`` (``plat_val_to_idx`` without the last-bucket clamp)."""
    if value < 2 * _PLAT_VAL:
        return value
    error_bits = value.bit_length() - 1 - PLAT_BITS
    return ((error_bits + 1) << PLAT_BITS) + ((_PLAT_VAL - 1) & (value >> error_bits))


def bucket_value(index: int) -> int:
    """The latency fio reports for bucket ``index``: its midpoint (``plat_idx_to_val``)."""
    if index < 2 * _PLAT_VAL:
        return index
    error_bits = (index >> PLAT_BITS) - 1
    k = index % _PLAT_VAL
    return (1 << (error_bits + PLAT_BITS)) + (2 * k + 1) * (1 << (error_bits - 1))


def bucket_midpoint(value: int) -> int:
    """What fio prints for a latency ``value``: the midpoint of its bucket."""
    return bucket_value(bucket_index(value))


def is_bucket_value(value: int) -> bool:
    """Whether fio can print ``value`` as a bin key or a percentile."""
    return 0 <= value < LATENCY_LIMIT and bucket_midpoint(value) == value
