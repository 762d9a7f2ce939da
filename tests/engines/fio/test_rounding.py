"""fio's arithmetic, piece by piece: x87 rounding, the percentile threshold, the histogram buckets.

The fixture tests check the whole chain against what fio printed, but a real output only
exercises the rounding where a run happens to land on a tie or a round N. These pin each
piece on its own, against values worked out by hand (the arithmetic is beside each), against
the C compiler's own extended-precision arithmetic (``fio_arith``), and against the bucket
rule re-written independently from fio's stat.c (``test_percentiles.fio_bucket_value``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from diskbench.engines.fio.percentiles import (
    LATENCY_LIMIT,
    bucket_index,
    bucket_midpoint,
    bucket_value,
    fio_threshold,
    is_bucket_value,
    percentiles_from_bins,
    round_extended,
)
from diskbench.model import PERCENTILES

from .fio_arith import fio_rank, needs_cc
from .test_percentiles import fio_bucket_value

# x87 extended precision keeps 64 significant bits: x in [2^e, 2^(e+1)) is rounded to a multiple
# of 2^(e-63), to nearest, ties to the even multiple. Each row: x, its exponent e, and x * 2^(63-e)
# done by hand, then the rounded mantissa.
ROUNDED = [
    # 1/10 in [2^-4, 2^-3): 2^67 / 10 = 14757395258967641292.8 -> up: 0xCCCCCCCCCCCCCCCD
    (Fraction(1, 10), Fraction(0xCCCCCCCCCCCCCCCD, 2**67)),
    # 1/100 in [2^-7, 2^-6): 2^70 / 100 = 11805916207174113034.24 -> down: 0xA3D70A3D70A3D70A
    # (fio's 0.01L, by which it multiplies instead of dividing by 100)
    (Fraction(1, 100), Fraction(0xA3D70A3D70A3D70A, 2**70)),
    # 2/5 in [2^-2, 2^-1): 2^66 / 5 = 14757395258967641292.8 -> up
    (Fraction(2, 5), Fraction(0xCCCCCCCCCCCCCCCD, 2**65)),
    # 2/3 in [2^-1, 1): 2^65 / 3 = 12297829382473034410.67 -> up: 0xAAAAAAAAAAAAAAAB
    (Fraction(2, 3), Fraction(0xAAAAAAAAAAAAAAAB, 2**64)),
    # -1/10: the sign comes back on the rounded magnitude
    (Fraction(-1, 10), -Fraction(0xCCCCCCCCCCCCCCCD, 2**67)),
    # 2^64 + 1 in [2^64, 2^65): steps of 2; (2^64 + 1) / 2 = 2^63 + 0.5, a tie; 2^63 is even -> 2^64
    (Fraction(2**64 + 1), Fraction(2**64)),
    # 2^64 + 3: (2^64 + 3) / 2 = 2^63 + 1.5, a tie; 2^63 + 1 is odd -> up to 2^63 + 2, x 2 = 2^64 + 4
    (Fraction(2**64 + 3), Fraction(2**64 + 4)),
    # 2^64 + 2.25: / 2 = 2^63 + 1.125; odd mantissa, but a quarter below the tie -> down: 2^64 + 2
    (Fraction(4 * 2**64 + 9, 4), Fraction(2**64 + 2)),
    # 2^64 + 0.8: / 2 = 2^63 + 0.4, between a third and a half -> down: 2^64
    (Fraction(5 * 2**64 + 4, 5), Fraction(2**64)),
    # exact values stay as they are: 0, 1, 3, a power of two
    (Fraction(0), Fraction(0)),
    (Fraction(1), Fraction(1)),
    (Fraction(3), Fraction(3)),
    (Fraction(2**70), Fraction(2**70)),
    (Fraction(1, 2**70), Fraction(1, 2**70)),
]


@pytest.mark.parametrize(("x", "rounded"), ROUNDED, ids=[str(x) for x, _ in ROUNDED])
def test_round_extended_by_hand(x: Fraction, rounded: Fraction) -> None:
    assert round_extended(x) == rounded


def test_the_threshold_at_round_counts_is_lifted_as_fio_lifts_it() -> None:
    """(N x 0.01L) x p in extended precision: at p99.9 and N = 1000 that is above 999, so fio
    needs the 1000th sample (exact arithmetic says 999, one bucket low); at p50 it is exact."""
    assert fio_threshold(99.9, 1000) > 999 and math.ceil(fio_threshold(99.9, 1000)) == 1000
    assert fio_threshold(50.0, 1000) == 500
    # by hand: 1000 x 0.01L = 1000 x 0xA3D70A3D70A3D70A / 2^70 = 10.000000000000000000065 (rounded to
    # 64 bits: 10 + 2^-60 x 0.75 rounds to 10 exactly); 10 x 99.9 (the double 99.900000000000005684...)
    # = 999.00000000000005684 -> rounded to 64 bits (steps of 2^-54 near 999): above 999
    assert round_extended(1000 * round_extended(Fraction(1, 100))) == 10


@needs_cc
@pytest.mark.parametrize("n", [1, 7, 1000, 2000, 3000, 12345, 10**6])
def test_threshold_ranks_equal_the_compiled_expression(n: int) -> None:
    """The rank fio needs (the smallest whole count reaching the threshold) equals what gcc makes
    of fio's own expression with -ffast-math on this machine's x87."""
    for p in PERCENTILES:
        assert max(1, math.ceil(fio_threshold(p, n))) == fio_rank(p, n), (p, n)


def test_percentiles_of_one_sample_and_of_none() -> None:
    assert percentiles_from_bins({7: 1}, [50, 99.9]) == {50.0: 7, 99.9: 7}  # one sample is every percentile
    assert percentiles_from_bins({10: 0, 20: 0}, [50]) == {}  # bins that count nothing give nothing
    assert percentiles_from_bins({10: 3}, []) == {}


def test_buckets_equal_fios_rule_written_independently() -> None:
    """Exact below 128, then 64 buckets per power of two, reported by their midpoint (up to fio's
    last stock bucket, 17.1 s, where fio_bucket_value clamps as fio 3.x does)."""
    values = [*range(0, 4096), *(2**k + d for k in range(12, 34) for d in (-1, 0, 1, 2**(k - 7), 2**(k - 1)))]
    for v in values:
        assert bucket_midpoint(v) == fio_bucket_value(v), v
    # by hand: 128..129 is the first bucket of width 2 (index 128, midpoint 129); 130 is in
    # index 129 = 130 // 2 + 64, whose midpoint is 128 + 3 = 131
    assert (bucket_index(127), bucket_value(127)) == (127, 127)
    assert (bucket_index(128), bucket_value(128)) == (128, 129)
    assert (bucket_index(130), bucket_value(129), bucket_midpoint(130)) == (129, 131, 131)
    assert (bucket_index(191), bucket_value(bucket_index(191))) == (159, 191)


def test_bucket_values_fio_can_print() -> None:
    assert is_bucket_value(0) and is_bucket_value(129) and is_bucket_value(5024)
    assert not is_bucket_value(128)  # inside bucket 128..129, printed as 129
    assert not is_bucket_value(5000)  # printed as 5024: 4096 + 29 x 32
    assert not is_bucket_value(-1) and not is_bucket_value(LATENCY_LIMIT)
    top = bucket_midpoint(LATENCY_LIMIT - 1)
    assert top < LATENCY_LIMIT and is_bucket_value(top)
