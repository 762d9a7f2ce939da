"""Latency percentiles from fio's histogram bins, with fio's own rule.

fio walks its bins in order and reports, for percentile p, the value of the first bin at which
the running count reaches p/100 × N (``calc_clat_percentiles`` in stat.c). Merging jobs means
summing their bins, then applying the same rule; averaging per-job percentiles would be wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction


def merge_bins(parts: Iterable[Mapping[int, int]]) -> dict[int, int]:
    merged: dict[int, int] = {}
    for bins in parts:
        for value, count in bins.items():
            merged[value] = merged.get(value, 0) + count
    return merged


def percentiles_from_bins(bins: Mapping[int, int], plist: Iterable[float | str]) -> dict[float, int]:
    """Bin value at each percentile; exact rational comparison of ``sum >= p/100 * N``."""
    wanted = sorted((Fraction(str(p)), float(p)) for p in plist)
    total = sum(bins.values())
    out: dict[float, int] = {}
    if total == 0 or not wanted:
        return out
    j = 0
    running = 0
    for value in sorted(bins):
        running += bins[value]
        while j < len(wanted) and running * 100 >= wanted[j][0] * total:
            out[wanted[j][1]] = value
            j += 1
        if j == len(wanted):
            break
    return out
