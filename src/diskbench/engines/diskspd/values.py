"""Small conversions shared by the DiskSpd readers: milliseconds to µs, percentile keys."""

from __future__ import annotations

from diskbench.model import pkey


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
