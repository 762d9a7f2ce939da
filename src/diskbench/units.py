"""Sizes and durations as fio writes them (``8k``, ``128M``, ``5s``, ``2m``)."""

from __future__ import annotations

import math
import re

from .text import shown

MAX_SIZE = 1 << 60  # 1 EiB: beyond any disk or volume, far inside fio's 64-bit sizes
MAX_SECONDS = 100 * 365 * 86400.0  # a century: inside every clock and timer the code uses
# a month: the longest a job, its stop.max or min, a ramp or a warm-up may take; longer than any soak
# test, short enough for every timer
MAX_JOB_S = 30 * 86400.0
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_MULT = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}
_TIME_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|m|h|d)?\s*$", re.IGNORECASE)
_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_size(value: str | int) -> int:
    """Bytes of a fio size; fio reads k/M/G as powers of 1024 (its default kb_base)."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value!r} is not a size")
        n = value
    else:
        m = _SIZE_RE.match(str(value))
        if not m:
            raise ValueError(f"{shown(value)} is not a size")
        number = float(m.group(1)) * _MULT[m.group(2).lower()]
        n = int(number) if number <= MAX_SIZE else MAX_SIZE + 1
    if n > MAX_SIZE:
        raise ValueError(f"{shown(value)} is larger than 1 EiB")
    return n


def parse_duration(value: str | int | float) -> float:
    """Seconds of a fio time value; a bare number is seconds, as in fio."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{value!r} is not a duration")
        seconds = float(value)
    else:
        m = _TIME_RE.match(str(value))
        if not m:
            raise ValueError(f"{shown(value)} is not a duration (use e.g. 30s, 2m)")
        seconds = float(m.group(1)) * _SECONDS[(m.group(2) or "s").lower()]
    if seconds > MAX_SECONDS:
        raise ValueError(f"{shown(value)} is longer than a century")
    return seconds


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024
    return f"{n:.1f}TiB"


def human_seconds(s: float) -> str:
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def sig3(value: float) -> str:
    """Three significant figures without exponent: 56.0, 1.29, 167, 1290."""
    if value == 0 or not math.isfinite(value):
        return f"{value:.2f}" if value == 0 else str(value)
    rounded = float(f"{value:.3g}")
    digits = max(0, 2 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{digits}f}"


_LAT_UNITS = (("µs", 1.0), ("ms", 1e3), ("s", 1e6))


def latency(us: float | None) -> str:
    """A latency in µs as people read it: ``56.0 µs``, ``1.29 ms``, ``167 ms`` (3 significant figures)."""
    if us is None:
        return "-"
    if abs(us) < 1:
        return f"{sig3(us * 1000)} ns" if us else "0 µs"
    for unit, scale in _LAT_UNITS:
        value = float(f"{us / scale:.3g}")
        if abs(value) < 1000 or unit == "s":
            return f"{sig3(value)} {unit}"
    raise AssertionError("unreachable")


def dollars(usd: float) -> str:
    """Money to the cent, and to a tenth of a cent below one (a short job's few seconds), as the lines at
    the end of a run say it."""
    return f"${usd:.2f}" if usd >= 0.01 or usd == 0 else f"${usd:.3f}"
