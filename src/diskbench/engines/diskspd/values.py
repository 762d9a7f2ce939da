"""Small conversions shared by the DiskSpd readers: checked numbers, milliseconds to µs, percentile keys.

Every number either reader takes from a DiskSpd file goes through ``number`` or ``count``: a
finite figure in DiskSpd's range (its counters are 64-bit unsigned, ``UINT64``), whole where
it counts something. Anything else (NaN, 1e999, -100, 40 digits) is a ``ParseError`` naming
where it was, never a result that prints NaN or overflows the store.
"""

from __future__ import annotations

import math
import re

from diskbench.errors import ParseError
from diskbench.model import pkey

LARGEST = 2**64  # DiskSpd keeps its counters in UINT64
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?(nan|inf|infinity)", re.IGNORECASE)


def number(text: str, what: str) -> float:
    """``text`` as a DiskSpd figure: finite, 0 .. 2**64 (``what`` names it in the error)."""
    value = text.strip()
    if not _NUMBER.fullmatch(value):
        raise ParseError(f"{what} is {value[:30]!r}, not a number")
    result = float(value)
    if not math.isfinite(result):
        raise ParseError(f"{what} is {value[:30]!r}, not a finite number")
    if result < 0:
        raise ParseError(f"{what} is negative ({value[:30]})")
    if result > LARGEST:
        raise ParseError(f"{what} is {result:.3g}, larger than any counter DiskSpd keeps (2^64)")
    return result


def digits(text: str) -> bool:
    """Whether ``text`` is a whole number as DiskSpd prints one (``"²".isdigit()`` is true, but no number)."""
    return text.isascii() and text.isdigit()


def count(text: str, what: str) -> int:
    """``text`` as a whole DiskSpd count, 0 .. 2**64 (digits are read exactly, not through a float)."""
    value = text.strip()
    result = int(value) if digits(value) else number(value, what)
    if result > LARGEST:
        raise ParseError(f"{what} is {value[:30]}..., larger than any counter DiskSpd keeps (2^64)")
    if result != int(result):
        raise ParseError(f"{what} is {value[:30]}, not a whole number")
    return int(result)


def ms_to_us(ms: float) -> float:
    """DiskSpd prints latency in ms with 3 decimals: exact µs, without float noise."""
    return round(ms * 1000.0, 3)


def percentile_key(label: str | float) -> str:
    """diskbench's key for a DiskSpd percentile label: '50' -> 'p50', '99.9999999' -> 'p99.9999999'.

    ``pkey`` keeps six significant digits, which would turn DiskSpd's 99.99999 and beyond into
    'p100'; such labels keep all their digits instead.
    """
    p = float(label)
    key = pkey(p)
    if float(key[1:]) == p:
        return key
    text = f"{p:.10f}".rstrip("0").rstrip(".")
    return f"p{text}"


def rate_bounds(events: float, seconds: float, time_step: float, rate_step: float) -> tuple[float, float]:
    """The range DiskSpd's printed rate of ``events`` can lie in when it printed the measured time
    as ``seconds`` rounded to ``time_step`` and the rate rounded to ``rate_step``."""
    half_t, half_r = time_step / 2, rate_step / 2
    low = events / (seconds + half_t) - half_r
    high = events / (seconds - half_t) + half_r if seconds > half_t else math.inf
    return low, high
