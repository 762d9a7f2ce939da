"""fio output (JSON or json+, as fio left it) -> GroupResults, with fio's own numbers.

fio's output is rarely clean JSON: notes before it, several documents with
``--status-interval``, raw control characters in strings, the ``normal`` report after it,
fio 2.x units (µs, KiB/s) and padding keys, ``client_stats`` in client/server mode. Numbers are
fio's: a result that is one job or one fio group keeps fio's printed percentiles, IOPS and
bandwidth; only when diskbench itself merges jobs does it compute, and then with fio's rules
(bins summed, fio's percentile arithmetic, total I/Os over the longest runtime). Input that
is not what fio writes (truncated, non-finite or negative numbers, wrong types) is an error
naming what is wrong, never a silently different number.

Numbers are also checked against their neighbours, as fio computes them: ``iops`` is
``total_ios * 1000 / runtime`` and ``bw_bytes`` is ``io_bytes * 1000 / runtime`` (stat.c), bin
keys and percentiles are midpoints of fio's histogram buckets no higher than the bucket of
``max``, and the bins add up to ``N``. fio's history is read as fio wrote it: before 2.21
``io_bytes`` was KiB (there was no ``io_kbytes``), before 2.1.14 there was no ``total_ios``
(the I/O count is then unknown and said so, while fio's rates and latencies are kept), and with
``group_reporting`` one entry stands for ``numjobs`` jobs. A run that fio did not finish (stopped
by a signal, or a ``time_based`` job that ran far short of its runtime) is kept with an error,
so an import of it is ``partial``.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
from dataclasses import dataclass
from typing import Any

from ...errors import ParseError
from ...model import PERCENTILES, DirectionResult, GroupResult, Latency, pkey
from .percentiles import LATENCY_LIMIT, bucket_midpoint, is_bucket_value, merge_bins, percentiles_from_bins

_DOC_START = re.compile(r"^[ \t]*\{", re.MULTILINE)
_DIRS = ("read", "write", "trim")
ALL_CLIENTS = "All clients"
_LARGEST = 2**64  # fio's counters are 64-bit unsigned
# How far fio's printed rates may be from its own arithmetic on the counts it printed beside them
# (stat.c: iops = 1000.0 * total_ios / runtime, printed "%f"; bw_bytes = 1000 * io_bytes / runtime
# and bw = bw_bytes / 1024, both whole numbers rounded down). Measured on every real output in
# tests/fixtures/fio and shared/fixtures/fio (all documents, jobs, clients and directions, 3.33,
# 3.42 and 2.21, json and json+, ramp_time, time_based, group_reporting, client/server, mixed):
# the largest |iops - 1000 * total_ios / runtime| is 4.8e-7 (client-server-2servers-numjobs2
# .json.stdout.txt; 2.0e-10 relative, steadystate-iops-slope-attained.json), which is %f's
# rounding (at most 5e-7); the largest bw_bytes shortfall is 0.98 B/s (multi-job-numjobs2-two-
# groups.json, randwrite-4k) and bw's 0.99 KiB/s (client-server-one-server-unreachable-rc0
# .stdout.txt), which is the rounding down (less than 1). So: iops within 1e-6, and each
# bandwidth within one unit below the exact figure; fio before 2.1.14 printed iops rounded down
# to a whole number (less than 1 below). The relative 1e-9 covers double rounding only.
_IOPS_SLACK = 1e-6
_RELATIVE_SLACK = 1e-9
# A time_based job that measured less than this share of its declared runtime was stopped. Every
# time_based job in the real fixtures ran its runtime to within 0.2% (3005 ms of 3 s, client
# mode); fio ends one early only when it is stopped (a signal, an error, exitall, or steady
# state reached, which the check leaves out). The margin is for coarse timer ticks.
_SHORT_RUN = 0.9
_EARLY_EXIT_OPTIONS = ("exitall", "exitall_on_error", "exit_what", "number_ios", "steadystate", "ss")
# How the partial-run errors of ``_stop_text`` begin (an adaptive stop's SIGINT is no failure: __init__.py)
PARTIAL_PREFIXES = ("fio was stopped by signal ", "fio measured ")
_SIGNAL_LINE = re.compile(r"^\s*fio: terminating on signal (\d+)\s*$", re.MULTILINE)
_TIME_UNITS = {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "msec": 1e-3, "us": 1e-6, "usec": 1e-6,
               "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
KIB_NOTE = "fio before 2.21 printed io_bytes in KiB (it had no io_kbytes): io_bytes is fio's figure x 1024"
NO_IOS_NOTE = ("fio before 2.1.14 wrote no total_ios and no latency sample count: the number of I/Os is "
               "unknown (ios 0); IOPS, bandwidth and latency are fio's own figures")
_DISKSPD = re.compile(r"<Results>|<System>|Command Line: diskspd|diskspd(\.exe)? ", re.IGNORECASE)


class _Invalid(ValueError):
    """A value in the document is not what fio writes (message says where and why)."""


def looks_like_diskspd(text: str) -> bool:
    return bool(_DISKSPD.search(text[:20000]))


def _reject_constant(name: str) -> Any:
    raise _Invalid(f"the JSON contains {name}, which fio never writes")


def extract_fio_document(text: str, source: str = "fio output") -> dict[str, Any]:
    """The last complete fio JSON document in ``text`` (the final one of a status-interval run).

    A document that starts like fio's but does not end (a killed run, a cut file) after the
    last complete one is an error: the complete ones before it are interim status dumps.
    """
    decoder = json.JSONDecoder(strict=False, parse_constant=_reject_constant)  # fio does not escape controls
    docs: list[dict[str, Any]] = []
    broken_at: int | None = None
    pos = 0
    for match in _DOC_START.finditer(text):
        start = text.index("{", match.start())
        if start < pos:
            continue
        try:
            obj, end = decoder.raw_decode(text, start)
        except _Invalid as exc:
            raise ParseError(f"{source}: {exc}") from None
        except RecursionError:
            raise ParseError(f"{source}: the JSON is nested too deeply to be fio output") from None
        except json.JSONDecodeError:
            if broken_at is None and '"fio version"' in text[start:start + 400]:
                broken_at = start
            continue
        if isinstance(obj, dict) and ("jobs" in obj or "client_stats" in obj):
            docs.append(obj)
            pos = end
            if broken_at is not None and broken_at < start:
                broken_at = None  # a complete document came after the broken one
    line = text.count("\n", 0, broken_at) + 1 if broken_at is not None else 0
    if docs and broken_at is not None:
        raise ParseError(f"{source}: the last fio JSON document (line {line}) is cut off; the "
                         f"{len(docs)} complete one(s) before it are interim status dumps, not the result",
                         hint="the run did not finish writing its output; run it again")
    if not docs:
        if looks_like_diskspd(text):
            raise ParseError(f"{source}: this is DiskSpd output, not fio's",
                             hint="diskbench's fio parser cannot read it")
        if broken_at is not None:
            raise ParseError(f"{source}: the fio JSON document starting at line {line} is cut off or damaged",
                             hint="the run did not finish writing its output; run it again")
        hint = next((ln.strip() for ln in text.splitlines() if ln.startswith("fio:")), "")
        why = f" ({hint})" if hint else ""
        raise ParseError(f"{source}: no fio JSON document found{why}",
                         hint="run fio with --output-format=json or json+")
    return docs[-1]


# --- typed access to the document ---------------------------------------------------------
def _number(obj: dict[str, Any], key: str, where: str, default: float = 0.0) -> float:
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(f"{where}.{key} is {type(value).__name__} {value!r:.30}, not a number")
    if not math.isfinite(value):
        raise _Invalid(f"{where}.{key} is {value}, not a finite number")
    if value > _LARGEST:
        raise _Invalid(f"{where}.{key} is larger than any counter fio keeps ({value:.3g})")
    if value < 0:
        raise _Invalid(f"{where}.{key} is negative ({value})")
    return float(value)


def _digits(text: str) -> bool:
    """Whether ``text`` is a whole number as fio prints one (``"²".isdigit()`` is true, but no number)."""
    return text.isascii() and text.isdigit()


def _count(obj: dict[str, Any], key: str, where: str) -> int:
    value = _number(obj, key, where)
    if value != int(value):
        raise _Invalid(f"{where}.{key} is {value}, not a whole number")
    return int(value)


def _object(obj: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _Invalid(f"{where}.{key} is {type(value).__name__}, not an object")
    return value


@dataclass
class _JobDir:
    """One job's numbers for one direction, in diskbench units (µs, bytes/s)."""

    iops: float
    bw: float
    ios: int | None  # None: fio before 2.1.14 wrote no total_ios
    io_bytes: int
    runtime_ms: float
    lat_min: float
    lat_max: float
    lat_mean: float
    lat_stdev: float
    samples: int | None  # None: neither N nor total_ios, so unknown
    percentiles: dict[float, float]
    bins: dict[int, int] | None
    scale: float  # engine latency unit -> µs
    kib: bool = False  # io_bytes was printed in KiB (fio before 2.21)


def _us(value: float, scale: float) -> float:
    # Round to the engine's resolution so 4512 ns reads 4.512, not 4.5120000000000005.
    return round(value * scale, 6)


def _shown(value: float) -> float:
    """A merged figure rounded like a single one (merging first, rounding last keeps the digits)."""
    return round(value, 6)


def _percentiles(lat: dict[str, Any], where: str, scale: float, ceiling: int) -> dict[float, float]:
    """fio's printed percentiles (µs); each must be a bucket midpoint no higher than ``ceiling``."""
    raw = _object(lat, "percentile", where) or {}
    out: dict[float, float] = {}
    for key in raw:
        try:
            p = float(key)
        except ValueError:
            raise _Invalid(f"{where}.percentile has the key {key!r}, not a percentile") from None
        if not 0 <= p <= 100:
            raise _Invalid(f"{where}.percentile has the key {key!r}, outside 0..100")
        if p > 0:  # fio 2.x pads with "0.00": 0
            value = _count(raw, key, f"{where}.percentile")
            _check_bucket(value, ceiling, f"{where}.percentile[{key!r}]")
            out[p] = _us(value, scale)
    return out


def _check_bucket(value: int, ceiling: int, where: str) -> None:
    """A bin key or percentile fio could have printed: a bucket midpoint, at most ``ceiling``
    (the midpoint of the bucket that holds the largest latency fio measured, ``max``)."""
    if value >= LATENCY_LIMIT:
        raise _Invalid(f"{where} is {value:.3g}, beyond any latency fio's 64-bit counters hold")
    if not is_bucket_value(value):
        raise _Invalid(f"{where} is {value}, which is not one of fio's latency bucket values")
    if value > ceiling:
        raise _Invalid(f"{where} is {value}, above the bucket of the largest latency fio measured "
                       f"(max, whose bucket is {ceiling})")


def _bins(lat: dict[str, Any], where: str, ceiling: int) -> dict[int, int] | None:
    raw = _object(lat, "bins", where)
    if raw is None:
        return None
    if all(type(v) is int and 0 <= v <= _LARGEST for v in raw.values()) and all(map(_digits, raw)):
        out = {int(k): v for k, v in raw.items()}  # the usual case, checked in bulk: 32 clients' bins add up
    else:
        out = {}
        for key in raw:  # something is wrong: find it and name it
            if not _digits(key):
                raise _Invalid(f"{where}.bins has the key {key!r}, not a latency in the engine's unit")
            out[int(key)] = _count(raw, key, f"{where}.bins")
    for value in out:
        _check_bucket(value, ceiling, f"{where}.bins key")
    if out and "N" in lat and sum(out.values()) != _count(lat, "N", where):  # {}: as if absent
        raise _Invalid(f"{where}.bins add up to {sum(out.values())} samples, but N is {lat['N']}")
    return out


def _latency_part(d: dict[str, Any], where: str) -> tuple[dict[str, Any], float, str]:
    """The completion-latency object, its unit in µs, and its name (fio 3.x: ns; fio 2.x: µs)."""
    if "clat_ns" in d:
        return _object(d, "clat_ns", where) or {}, 1e-3, f"{where}.clat_ns"
    return _object(d, "clat", where) or {}, 1.0, f"{where}.clat"


def _job_dir(d: dict[str, Any], where: str) -> _JobDir | None:
    ios = _count(d, "total_ios", where) if "total_ios" in d else None
    kib = "io_kbytes" not in d  # fio before 2.21 printed io_bytes >> 10 and had no io_kbytes
    io_bytes = _count(d, "io_bytes", where) * (1024 if kib else 1)
    runtime_ms = _count(d, "runtime", where)  # ms, a whole number
    _check_rates(d, where, ios, io_bytes, kib, runtime_ms)
    if not ios and io_bytes == 0:
        return None
    lat, scale, lat_where = _latency_part(d, where)
    samples = _count(lat, "N", lat_where) if "N" in lat else ios
    lat_max = _count(lat, "max", lat_where)
    ceiling = bucket_midpoint(min(lat_max, LATENCY_LIMIT - 1))
    bw = _number(d, "bw_bytes", where) if "bw_bytes" in d else _number(d, "bw", where) * 1024.0
    return _JobDir(
        iops=_number(d, "iops", where), bw=bw, ios=ios, io_bytes=io_bytes, runtime_ms=runtime_ms,
        lat_min=_number(lat, "min", lat_where) * scale, lat_max=lat_max * scale,
        lat_mean=_number(lat, "mean", lat_where) * scale, lat_stdev=_number(lat, "stddev", lat_where) * scale,
        samples=samples, percentiles=_percentiles(lat, lat_where, scale, ceiling),
        bins=_bins(lat, lat_where, ceiling), scale=scale, kib=kib,
    )


# --- consistency of the rates with the counts ---------------------------------------------
def _check_rates(d: dict[str, Any], where: str, ios: int | None, io_bytes: int, kib: bool,
                 runtime_ms: float) -> None:
    """``iops`` and the bandwidths as fio computes them from the counts and runtime beside them."""
    iops = _number(d, "iops", where)
    bws = {k: _number(d, k, where) for k in ("bw_bytes", "bw") if k in d}
    if runtime_ms == 0:
        if ios or io_bytes or iops or any(bws.values()):
            raise _Invalid(f"{where} has {ios or 0} I/Os, {io_bytes} bytes and {iops:g} IOPS in a runtime "
                           "of 0 ms; fio measures every I/O in its runtime")
        return
    # Bytes without I/Os are real: a job that does its whole size during ramp_time writes (fio
    # 3.33, a guest's 4 x 16M randwrite with ramp_time 1s) io_bytes 16646144, total_ios 0, iops 0
    # and bw_bytes from the bytes; so each rate is checked against its own count only.
    if ios is not None:
        exact = 1000.0 * ios / runtime_ms
        slack = _IOPS_SLACK + _RELATIVE_SLACK * exact
        floored = 1.0 if type(d.get("iops")) is int else 0.0  # a whole number: fio 2.1 rounded down
        if not exact - slack - floored <= iops <= exact + slack:
            raise _Invalid(f"{where}.iops is {iops:f}, but fio's {ios} I/Os in {runtime_ms:g} ms are "
                           f"{exact:f} IOPS")
    if io_bytes and not bws:
        raise _Invalid(f"{where} has neither bw_bytes nor bw for its {io_bytes} bytes")
    low = 1000.0 * io_bytes / runtime_ms  # KiB io_bytes were rounded down: the bytes may be 1023 more
    high = 1000.0 * (io_bytes + (1023 if kib else 0)) / runtime_ms
    for key, unit in (("bw_bytes", 1), ("bw", 1024)):
        lowest, highest = low / unit - 1 - _RELATIVE_SLACK * high, (1 + _RELATIVE_SLACK) * high / unit
        if key in bws and not lowest <= bws[key] <= highest:
            raise _Invalid(f"{where}.{key} is {bws[key]:.0f}, but fio's {io_bytes} bytes in {runtime_ms:g} ms "
                           f"are {low / unit:.1f} {'B' if unit == 1 else 'KiB'}/s")


# --- merging ------------------------------------------------------------------------------
def _merge_latency(parts: list[_JobDir], notes: list[str], label: str) -> Latency | None:
    parts = [p for p in parts if p.samples is None or p.samples > 0]
    if not parts:
        return None
    if len(parts) == 1 and parts[0].samples is None:
        return _unweighted(parts[0], notes, label)
    if any(p.samples is None for p in parts):
        notes.append(f"{label}: the latency of {len(parts)} jobs cannot be merged: fio before 2.1.14 wrote no "
                     "I/O counts to weight them by (fio merges them itself with group_reporting)")
        return None
    counted = [(p, p.samples or 0) for p in parts]
    n = sum(c for _, c in counted)
    mean = sum(p.lat_mean * c for p, c in counted) / n
    # Pooled sample variance: within-job spread plus the spread of the job means.
    ss = sum((c - 1) * p.lat_stdev**2 + c * (p.lat_mean - mean) ** 2 for p, c in counted)
    stdev = math.sqrt(ss / (n - 1)) if n > 1 else 0.0
    pct, exact, merged_bins = _merged_percentiles(parts, n, notes, label)
    return Latency(
        min=_shown(min(p.lat_min for p in parts)), mean=_shown(mean), max=_shown(max(p.lat_max for p in parts)),
        stdev=_shown(stdev), samples=n, exact=exact, bins=merged_bins or None,
        bin_ns=_bin_ns(parts[0]) if merged_bins else None,
        percentiles={pkey(p): v for p, v in sorted(pct.items())},
    )


def _bin_ns(part: _JobDir) -> float:
    """Nanoseconds per unit of a bin key: fio 3 keys clat_ns bins in ns, fio 2 its clat bins in µs."""
    return round(part.scale * 1000.0, 6)


def _unweighted(part: _JobDir, notes: list[str], label: str) -> Latency:
    """One job's latency as fio printed it, whose sample count fio did not write."""
    if not part.percentiles:
        notes.append(f"{label}: fio reported no latency percentiles (clat_percentiles=0?); min, mean and max only")
    return Latency(min=_shown(part.lat_min), mean=_shown(part.lat_mean), max=_shown(part.lat_max),
                   stdev=_shown(part.lat_stdev), samples=0, exact=True, bins=part.bins or None,
                   bin_ns=_bin_ns(part) if part.bins else None,
                   percentiles={pkey(p): v for p, v in sorted(part.percentiles.items())})


def _merged_percentiles(parts: list[_JobDir], n: int, notes: list[str],
                        label: str) -> tuple[dict[float, float], bool, dict[int, int] | None]:
    """Percentiles of ``parts`` together: fio's own for one, from summed bins, or (flagged) weighted."""
    binned = [p.bins for p in parts if p.bins]
    merged_bins = (binned[0] if len(parts) == 1 else merge_bins(binned)) if len(binned) == len(parts) else None
    if len(parts) == 1 and parts[0].percentiles:
        return dict(parts[0].percentiles), True, merged_bins  # one job or one fio group: fio's own figures
    if merged_bins:
        plist = sorted(set().union(*(p.percentiles for p in parts))) or list(PERCENTILES)
        pct = {p: _us(v, parts[0].scale) for p, v in percentiles_from_bins(merged_bins, plist).items()}
        return pct, True, merged_bins
    if len(parts) == 1 or not all(p.percentiles for p in parts):
        notes.append(f"{label}: fio reported no latency percentiles (clat_percentiles=0?); "
                     "min, mean and max only")
        return {}, True, merged_bins
    keys = set.intersection(*(set(p.percentiles) for p in parts))
    notes.append(
        f"{label}: percentiles of {len(parts)} series are sample-weighted means, not merged "
        "exactly (no latency bins: use --output-format=json+)"
    )
    return {k: sum(p.percentiles[k] * (p.samples or 0) for p in parts) / n for k in keys}, False, merged_bins


def _aggregate(direction: str, parts: list[_JobDir], notes: list[str], label: str) -> DirectionResult:
    io_bytes = sum(p.io_bytes for p in parts)
    ios = sum(p.ios or 0 for p in parts)
    runtime_ms = max(p.runtime_ms for p in parts)
    if len(parts) == 1:
        iops, bw = parts[0].iops, parts[0].bw  # fio's own
    elif any(p.ios is None for p in parts):  # no counts: each job's IOPS over its runtime is its I/Os
        iops = sum(p.iops * p.runtime_ms for p in parts) / runtime_ms if runtime_ms else 0.0
        bw = float((1000 * io_bytes) // int(runtime_ms)) if runtime_ms else 0.0
    else:  # fio's group rule (sum_thread_stats): all I/Os over the longest runtime
        iops = 1000.0 * ios / runtime_ms if runtime_ms else 0.0
        bw = float((1000 * io_bytes) // int(runtime_ms)) if runtime_ms else 0.0
    return DirectionResult(direction=direction, iops=iops, bw_bytes_per_s=bw, ios=ios, io_bytes=io_bytes,
                           runtime_s=runtime_ms / 1000.0, clat=_merge_latency(parts, notes, f"{label} {direction}"))


def _total(per_dir: dict[str, list[_JobDir]], notes: list[str], name: str) -> DirectionResult | None:
    """All directions together: fio's own ``mixed``, else the directions merged per job."""
    if per_dir["mixed"]:
        return _aggregate("total", per_dir["mixed"], notes, name)
    present = [d for d in _DIRS if per_dir[d]]
    if len(present) < 2:
        return None
    parts = [p for d in present for p in per_dir[d]]
    total = _aggregate("total", parts, notes, name)
    # Directions of one job run at the same time: their rates add, their I/Os add.
    total.iops = sum(_aggregate(d, per_dir[d], [], name).iops for d in present)
    total.bw_bytes_per_s = sum(_aggregate(d, per_dir[d], [], name).bw_bytes_per_s for d in present)
    total.runtime_s = max(p.runtime_ms for p in parts) / 1000.0
    return total


# --- what the job file declared -----------------------------------------------------------
def _options(doc: dict[str, Any], job: dict[str, Any]) -> dict[str, str]:
    """The options fio echoes for ``job``: ``global options`` overridden by its ``job options``."""
    glob, own = doc.get("global options"), job.get("job options")
    merged = {**(glob if isinstance(glob, dict) else {}), **(own if isinstance(own, dict) else {})}
    return {str(k): str(v) for k, v in merged.items()}


def _seconds(value: str) -> float | None:
    """A fio time option (``30``, ``30s``, ``2m``, ``500ms``; bare numbers are seconds), or None."""
    m = re.fullmatch(r"\s*(\d{1,15}(?:\.\d{1,9})?)\s*([a-z]*)\s*", value.lower())  # no inf from 400 digits
    if m is None or m.group(2) not in _TIME_UNITS:
        return None
    return float(m.group(1)) * _TIME_UNITS[m.group(2)]


def _numjobs(opts: dict[str, str]) -> int:
    value = opts.get("numjobs", "1").strip()
    return int(value) if _digits(value) and 0 < int(value) < 2**31 else 1


def _job_count(doc: dict[str, Any], jobs: list[dict[str, Any]]) -> int:
    """How many fio jobs the entries stand for. Without ``group_reporting`` each job has its own
    entry; with it, fio writes one entry for the whole group, and only the ``numjobs`` it echoes
    says how many jobs that entry sums (one entry where numjobs asked for several can only be a
    group's). Counted per host: in client/server mode every server reports its own group."""
    per_host: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for job in jobs:
        per_host.setdefault((str(job.get("hostname", "")), str(job.get("groupid", 0))), []).append(job)
    count = 0
    for entries in per_host.values():
        numjobs = _numjobs(_options(doc, entries[0]))
        count += numjobs if len(entries) == 1 and numjobs > 1 else len(entries)
    return count


def _stop_text(doc: dict[str, Any], jobs: list[dict[str, Any]], directions: list[DirectionResult],
               stopped_by: int | None) -> str | None:
    """Why these figures are of a run fio did not finish, or None when it did."""
    ran = max((d.runtime_s for d in directions), default=0.0)
    opts = _options(doc, jobs[0])
    declared = _seconds(opts.get("runtime", ""))
    of = f" of its declared {declared:g} s runtime" if declared else ""
    if stopped_by is not None:
        try:
            name = f" ({signal.Signals(stopped_by).name})"
        except ValueError:
            name = ""
        return (f"fio was stopped by signal {stopped_by}{name} ('fio: terminating on signal {stopped_by}'): "
                f"these are the figures of {ran:g} s{of}, a partial run")
    timed = opts.get("time_based", "").strip().lower() in ("1", "true", "yes", "on")
    settled = any(k in opts for k in _EARLY_EXIT_OPTIONS) or any("steadystate" in j for j in jobs)
    if declared and timed and not settled and directions and ran < _SHORT_RUN * declared:
        return (f"fio measured {ran:g} s of its declared {declared:g} s runtime (time_based): it was stopped "
                "early (interrupted?), and these are the figures of a partial run")
    return None


# --- groups -------------------------------------------------------------------------------
def _error_text(job: dict[str, Any]) -> str:
    code = int(job.get("error", 0))
    reason = os.strerror(code) if 0 < code < 4096 else "unknown"
    return f"job {job.get('jobname', '?')!r} failed: error {code} ({reason})"


def _version_notes(parts: list[_JobDir]) -> list[str]:
    """What diskbench had to say about fio 2.x's units and missing counts."""
    notes = [KIB_NOTE] if any(p.kib and p.io_bytes for p in parts) else []
    return notes + ([NO_IOS_NOTE] if any(p.ios is None for p in parts) else [])


def _group(name: str, jobs: list[dict[str, Any]], version: str, doc: dict[str, Any],
           stopped_by: int | None) -> GroupResult:
    notes: list[str] = []
    errors = [_error_text(j) for j in jobs if _count(j, "error", f"job {j.get('jobname', '?')!r}") != 0]
    per_dir: dict[str, list[_JobDir]] = {d: [] for d in (*_DIRS, "mixed")}
    for job in jobs:
        where = f"job {job.get('jobname', '?')!r}"
        for d in (*_DIRS, "mixed"):
            if d in job and (jd := _job_dir(_object(job, d, where) or {}, f"{where} {d}")) is not None:
                per_dir[d].append(jd)
    notes += _version_notes([p for parts in per_dir.values() for p in parts])
    directions = [_aggregate(d, per_dir[d], notes, name) for d in _DIRS if per_dir[d]]
    if (total := _total(per_dir, notes, name)) is not None:
        directions.append(total)
    if (stop := _stop_text(doc, jobs, directions, stopped_by)) is not None:
        errors.append(stop)
    # fio before 2.1.14 wrote no I/O counts (ios 0 stands for "unknown"): that is not "no I/O"
    counted = all(p.ios is not None for parts in per_dir.values() for p in parts)
    for measured in directions:
        if counted and measured.ios == 0 and measured.io_bytes:
            measured.warnings.append(
                f"fio counted {measured.io_bytes:,} bytes but no I/O in a {measured.runtime_s * 1000:g} ms runtime: "
                "the job did its whole size during ramp_time, so nothing was measured (set time_based: true, "
                "or a larger size)")
    job_names = list(dict.fromkeys(str(j.get("jobname", "")) for j in jobs))
    hosts = list(dict.fromkeys(str(j["hostname"]) for j in jobs if j.get("hostname")))
    cpu = [_number(j, "usr_cpu", w) + _number(j, "sys_cpu", w)  # checked as every number fio writes
           for j in jobs if "usr_cpu" in j for w in [f"job {j.get('jobname')!r:.40}"]]
    return GroupResult(
        name=name, job_names=job_names, jobs=_job_count(doc, jobs), engine="fio", engine_version=version,
        directions=directions, hosts=hosts, errors=errors, notes=list(dict.fromkeys(notes)),
        cpu_pct=sum(cpu) / len(cpu) if cpu else None,
    )


def _jobs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    entries = doc.get("jobs") if "jobs" in doc else doc.get("client_stats")
    if not isinstance(entries, list):
        raise _Invalid(f"'jobs' is {type(entries).__name__}, not a list")
    for i, job in enumerate(entries):
        if not isinstance(job, dict):
            raise _Invalid(f"jobs[{i}] is {type(job).__name__}, not an object")
    return [j for j in entries if j.get("jobname") != ALL_CLIENTS]


def parse_fio_document(doc: dict[str, Any], *, per_job: bool = False, merge_all: bool = False,
                       stopped_by: int | None = None) -> list[GroupResult]:
    """One result per reporting group (fio's "Run status group"), per job name, or all merged.

    Names are unique: a job name that appears in two reporting groups gets the group's number.
    ``stopped_by``: the signal fio said it was terminated by (every group is then partial).
    """
    version = str(doc.get("fio version", "fio-unknown")).removeprefix("fio-")
    jobs = _jobs(doc)
    if not jobs:
        raise ParseError("fio output has no job results")
    buckets: dict[Any, list[dict[str, Any]]] = {}
    for job in jobs:
        group = _count(job, "groupid", f"job {job.get('jobname', '?')!r}") if "groupid" in job else 0
        key = 0 if merge_all else (group, str(job.get("jobname"))) if per_job else group
        buckets.setdefault(key, []).append(job)
    named: list[tuple[Any, str]] = []
    for key, group_jobs in buckets.items():
        named.append((key, "+".join(dict.fromkeys(str(j.get("jobname", "")) for j in group_jobs))))
    seen = [n for _, n in named]
    results = []
    for key, name in named:
        if seen.count(name) > 1:
            name = f"{name}@group{key[0] if isinstance(key, tuple) else key}"
        results.append(_group(name, buckets[key], version, doc, stopped_by))
        results[-1].declared = declared_config(doc, buckets[key])
    if not any(g.directions or g.errors for g in results):
        raise ParseError("fio output has no job that did any I/O")
    return results


def stopped_by_signal(text: str) -> int | None:
    """The signal fio printed that it was terminated by (``fio: terminating on signal 2``), if any."""
    found = _SIGNAL_LINE.search(text) if "fio: terminating on signal" in text else None
    return int(found.group(1)) if found and len(found.group(1)) < 4 else None


def parse_fio_text(text: str, *, per_job: bool = False,
                   source: str = "fio output") -> tuple[dict[str, Any], list[GroupResult]]:
    """The fio document found in ``text`` and its results; errors name ``source``."""
    doc = extract_fio_document(text, source)
    try:
        return doc, parse_fio_document(doc, per_job=per_job, stopped_by=stopped_by_signal(text))
    except ParseError as exc:
        raise ParseError(f"{source}: {exc.message}") from None
    except _Invalid as exc:
        raise ParseError(f"{source}: {exc}", hint="this is not what fio writes; was the file edited or cut?") from None
    except RecursionError:
        raise ParseError(f"{source}: the JSON is nested too deeply to be fio output") from None


def parse_fio_output(text: str, *, per_job: bool = False, source: str = "fio output") -> list[GroupResult]:
    return parse_fio_text(text, per_job=per_job, source=source)[1]


def declared_config(doc: dict[str, Any], jobs: list[dict[str, Any]]) -> dict[str, Any]:
    """What the job file asked for (rw, bs, iodepth, numjobs, raw device or files), from fio's own
    echo of its options: imports of hand-made job files can then be lined up by configuration."""
    glob = doc.get("global options")
    first = jobs[0].get("job options") if jobs else None
    opts = {**(glob if isinstance(glob, dict) else {}), **(first if isinstance(first, dict) else {})}
    if not opts or len({str(j.get("job options")) for j in jobs}) > 1:
        return {}  # several different jobs in one group: no single configuration
    target = str(opts.get("filename", opts.get("directory", "")))
    return {"workload": {"rw": str(opts.get("rw", opts.get("readwrite", "read"))), "bs": str(opts.get("bs", "4k")),
                         "iodepth": str(opts.get("iodepth", "1")), "numjobs": str(opts.get("numjobs", "1"))},
            "target": {"raw" if target.startswith("/dev/") else "path": target}}
