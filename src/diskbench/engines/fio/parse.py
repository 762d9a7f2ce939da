"""fio output (JSON or json+, as fio left it) -> GroupResults, with fio's own numbers.

fio's output is rarely clean JSON: notes before it, several documents with
``--status-interval``, raw control characters in strings, the ``normal`` report after it,
fio 2.x units (µs, KiB/s) and padding keys, ``client_stats`` in client/server mode. Numbers are
fio's: a result that is one job or one fio group keeps fio's printed percentiles, IOPS and
bandwidth; only when diskbench itself merges jobs does it compute, and then with fio's rules
(bins summed, fio's percentile arithmetic, total I/Os over the longest runtime). Input that
is not what fio writes (truncated, non-finite or negative numbers, wrong types) is an error
naming what is wrong, never a silently different number.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from typing import Any

from ...errors import ParseError
from ...model import PERCENTILES, DirectionResult, GroupResult, Latency, pkey
from .percentiles import merge_bins, percentiles_from_bins

_DOC_START = re.compile(r"^[ \t]*\{", re.MULTILINE)
_DIRS = ("read", "write", "trim")
ALL_CLIENTS = "All clients"
_LARGEST = 2**64  # fio's counters are 64-bit unsigned
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
    ios: int
    io_bytes: int
    runtime_ms: float
    lat_min: float
    lat_max: float
    lat_mean: float
    lat_stdev: float
    samples: int
    percentiles: dict[float, float]
    bins: dict[int, int] | None
    scale: float  # engine latency unit -> µs


def _us(value: float, scale: float) -> float:
    # Round to the engine's resolution so 4512 ns reads 4.512, not 4.5120000000000005.
    return round(value * scale, 6)


def _shown(value: float) -> float:
    """A merged figure rounded like a single one (merging first, rounding last keeps the digits)."""
    return round(value, 6)


def _percentiles(lat: dict[str, Any], where: str, scale: float) -> dict[float, float]:
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
            out[p] = _us(_number(raw, key, f"{where}.percentile"), scale)
    return out


def _bins(lat: dict[str, Any], where: str) -> dict[int, int] | None:
    raw = _object(lat, "bins", where)
    if raw is None:
        return None
    if all(type(v) is int and 0 <= v <= _LARGEST for v in raw.values()) and all(k.isdigit() for k in raw):
        return {int(k): v for k, v in raw.items()}  # the usual case, checked in bulk: 32 clients' bins add up
    out: dict[int, int] = {}
    for key in raw:  # something is wrong: find it and name it
        if not key.isdigit():
            raise _Invalid(f"{where}.bins has the key {key!r}, not a latency in the engine's unit")
        out[int(key)] = _count(raw, key, f"{where}.bins")
    return out


def _job_dir(d: dict[str, Any], where: str) -> _JobDir | None:
    ios = _count(d, "total_ios", where)
    io_bytes = _count(d, "io_bytes", where)
    if ios == 0 and io_bytes == 0:
        return None
    if "clat_ns" in d:
        lat, scale, lat_where = _object(d, "clat_ns", where) or {}, 1e-3, f"{where}.clat_ns"
    else:
        lat, scale, lat_where = _object(d, "clat", where) or {}, 1.0, f"{where}.clat"  # fio 2.x: µs
    samples = _count(lat, "N", lat_where) if "N" in lat else ios
    bw = _number(d, "bw_bytes", where) if "bw_bytes" in d else _number(d, "bw", where) * 1024.0
    return _JobDir(
        iops=_number(d, "iops", where), bw=bw, ios=ios, io_bytes=io_bytes, runtime_ms=_number(d, "runtime", where),
        lat_min=_number(lat, "min", lat_where) * scale, lat_max=_number(lat, "max", lat_where) * scale,
        lat_mean=_number(lat, "mean", lat_where) * scale, lat_stdev=_number(lat, "stddev", lat_where) * scale,
        samples=samples, percentiles=_percentiles(lat, lat_where, scale), bins=_bins(lat, lat_where), scale=scale,
    )


# --- merging ------------------------------------------------------------------------------
def _merge_latency(parts: list[_JobDir], notes: list[str], label: str) -> Latency | None:
    parts = [p for p in parts if p.samples > 0]
    if not parts:
        return None
    n = sum(p.samples for p in parts)
    mean = sum(p.lat_mean * p.samples for p in parts) / n
    # Pooled sample variance: within-job spread plus the spread of the job means.
    ss = sum((p.samples - 1) * p.lat_stdev**2 + p.samples * (p.lat_mean - mean) ** 2 for p in parts)
    stdev = math.sqrt(ss / (n - 1)) if n > 1 else 0.0
    exact = True
    binned = [p.bins for p in parts if p.bins]
    merged_bins = (binned[0] if len(parts) == 1 else merge_bins(binned)) if len(binned) == len(parts) else None
    if len(parts) == 1 and parts[0].percentiles:
        pct = dict(parts[0].percentiles)  # one job or one fio group: fio's own figures
    elif merged_bins:
        plist = sorted(set().union(*(p.percentiles for p in parts))) or list(PERCENTILES)
        pct = {p: _us(v, parts[0].scale) for p, v in percentiles_from_bins(merged_bins, plist).items()}
    elif len(parts) == 1 or not all(p.percentiles for p in parts):
        pct = {}
        notes.append(f"{label}: fio reported no latency percentiles (clat_percentiles=0?); "
                     "min, mean and max only")
    else:
        keys = set.intersection(*(set(p.percentiles) for p in parts))
        pct = {k: sum(p.percentiles[k] * p.samples for p in parts) / n for k in keys}
        exact = False
        notes.append(
            f"{label}: percentiles of {len(parts)} series are sample-weighted means, not merged "
            "exactly (no latency bins: use --output-format=json+)"
        )
    return Latency(
        min=_shown(min(p.lat_min for p in parts)), mean=_shown(mean), max=_shown(max(p.lat_max for p in parts)),
        stdev=_shown(stdev), samples=n, exact=exact, bins=merged_bins or None,
        percentiles={pkey(p): v for p, v in sorted(pct.items())},
    )


def _aggregate(direction: str, parts: list[_JobDir], notes: list[str], label: str) -> DirectionResult:
    ios, io_bytes = sum(p.ios for p in parts), sum(p.io_bytes for p in parts)
    runtime_ms = max(p.runtime_ms for p in parts)
    if len(parts) == 1:
        iops, bw = parts[0].iops, parts[0].bw  # fio's own
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


def _error_text(job: dict[str, Any]) -> str:
    code = int(job.get("error", 0))
    reason = os.strerror(code) if 0 < code < 4096 else "unknown"
    return f"job {job.get('jobname', '?')!r} failed: error {code} ({reason})"


def _group(name: str, jobs: list[dict[str, Any]], version: str) -> GroupResult:
    notes: list[str] = []
    errors = [_error_text(j) for j in jobs if _count(j, "error", f"job {j.get('jobname', '?')!r}") != 0]
    per_dir: dict[str, list[_JobDir]] = {d: [] for d in (*_DIRS, "mixed")}
    for job in jobs:
        where = f"job {job.get('jobname', '?')!r}"
        for d in (*_DIRS, "mixed"):
            if d in job and (jd := _job_dir(_object(job, d, where) or {}, f"{where} {d}")) is not None:
                per_dir[d].append(jd)
    directions = [_aggregate(d, per_dir[d], notes, name) for d in _DIRS if per_dir[d]]
    if (total := _total(per_dir, notes, name)) is not None:
        directions.append(total)
    job_names = list(dict.fromkeys(str(j.get("jobname", "")) for j in jobs))
    hosts = list(dict.fromkeys(str(j["hostname"]) for j in jobs if j.get("hostname")))
    cpu = [_number(j, "usr_cpu", w) + _number(j, "sys_cpu", w)  # checked as every number fio writes
           for j in jobs if "usr_cpu" in j for w in [f"job {j.get('jobname')!r:.40}"]]
    return GroupResult(
        name=name, job_names=job_names, jobs=len(jobs), engine="fio", engine_version=version,
        directions=directions, hosts=hosts, errors=errors, notes=notes,
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


def parse_fio_document(doc: dict[str, Any], *, per_job: bool = False, merge_all: bool = False) -> list[GroupResult]:
    """One result per reporting group (fio's "Run status group"), per job name, or all merged.

    Names are unique: a job name that appears in two reporting groups gets the group's number.
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
        results.append(_group(name, buckets[key], version))
        results[-1].declared = declared_config(doc, buckets[key])
    if not any(g.directions or g.errors for g in results):
        raise ParseError("fio output has no job that did any I/O")
    return results


def parse_fio_text(text: str, *, per_job: bool = False,
                   source: str = "fio output") -> tuple[dict[str, Any], list[GroupResult]]:
    """The fio document found in ``text`` and its results; errors name ``source``."""
    doc = extract_fio_document(text, source)
    try:
        return doc, parse_fio_document(doc, per_job=per_job)
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
