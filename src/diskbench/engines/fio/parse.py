"""fio output (JSON or json+, as fio left it) -> GroupResults.

fio's output is rarely clean JSON: notes before it, several documents with
``--status-interval``, raw control characters in strings, the ``normal`` report after it,
fio 2.x units (µs, KiB/s) and padding keys, ``client_stats`` in client/server mode.
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


def extract_fio_document(text: str, source: str = "fio output") -> dict[str, Any]:
    """The last complete fio JSON document in ``text`` (the final one of a status-interval run)."""
    decoder = json.JSONDecoder(strict=False)  # fio does not escape control characters
    docs: list[dict[str, Any]] = []
    pos = 0
    for match in _DOC_START.finditer(text):
        start = text.index("{", match.start())
        if start < pos:
            continue
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and ("jobs" in obj or "client_stats" in obj):
            docs.append(obj)
            pos = end
    if not docs:
        hint = next((ln.strip() for ln in text.splitlines() if ln.startswith("fio:")), "")
        why = f" ({hint})" if hint else ""
        raise ParseError(
            f"{source}: no fio JSON document found{why}",
            hint="run fio with --output-format=json or json+",
        )
    return docs[-1]


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


def _us(value: Any, scale: float) -> float:
    # Round to the engine's resolution so 4512 ns reads 4.512, not 4.5120000000000005.
    return round(float(value) * scale, 6)


def _job_dir(d: dict[str, Any]) -> _JobDir | None:
    ios = int(d.get("total_ios", 0) or 0)
    io_bytes = int(d.get("io_bytes", 0) or 0)
    if ios == 0 and io_bytes == 0:
        return None
    if "clat_ns" in d:
        lat, scale = d["clat_ns"], 1e-3
    else:
        lat, scale = d.get("clat", {}), 1.0  # fio 2.x reports µs
    samples = int(lat.get("N", ios) or 0)
    pct: dict[float, float] = {}
    for key, value in (lat.get("percentile") or {}).items():
        p = float(key)
        if p > 0:  # fio 2.x pads with "0.00": 0
            pct[p] = _us(value, scale)
    bins = {int(k): int(v) for k, v in lat["bins"].items()} if "bins" in lat else None
    bw = float(d["bw_bytes"]) if "bw_bytes" in d else float(d.get("bw", 0)) * 1024.0
    return _JobDir(
        iops=float(d.get("iops", 0.0)), bw=bw, ios=ios, io_bytes=io_bytes,
        runtime_ms=float(d.get("runtime", 0)),
        lat_min=_us(lat.get("min", 0), scale), lat_max=_us(lat.get("max", 0), scale),
        lat_mean=_us(lat.get("mean", 0.0), scale), lat_stdev=_us(lat.get("stddev", 0.0), scale),
        samples=samples, percentiles=pct, bins=bins, scale=scale,
    )


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
    all_bins = [p.bins for p in parts]
    if all(b is not None for b in all_bins) and all_bins:
        merged = merge_bins(b for b in all_bins if b is not None)
        scale = parts[0].scale
        pct = {p: _us(v, scale) for p, v in percentiles_from_bins(merged, PERCENTILES).items()}
        bins: dict[int, int] | None = merged
    elif len(parts) == 1:
        pct, bins = dict(parts[0].percentiles), None
    else:
        keys = set.intersection(*(set(p.percentiles) for p in parts))
        pct = {k: sum(p.percentiles[k] * p.samples for p in parts) / n for k in keys}
        bins, exact = None, False
        notes.append(
            f"{label}: percentiles of {len(parts)} series are sample-weighted means, not merged "
            "exactly (no latency bins: use --output-format=json+)"
        )
    return Latency(
        min=min(p.lat_min for p in parts), mean=mean, max=max(p.lat_max for p in parts),
        stdev=stdev, samples=n, exact=exact, bins=bins,
        percentiles={pkey(p): v for p, v in sorted(pct.items())},
    )


def _aggregate(direction: str, parts: list[_JobDir], notes: list[str], label: str) -> DirectionResult:
    return DirectionResult(
        direction=direction,
        iops=sum(p.iops for p in parts),
        bw_bytes_per_s=sum(p.bw for p in parts),
        ios=sum(p.ios for p in parts),
        io_bytes=sum(p.io_bytes for p in parts),
        runtime_s=max(p.runtime_ms for p in parts) / 1000.0,
        clat=_merge_latency(parts, notes, f"{label} {direction}"),
    )


def _error_text(job: dict[str, Any]) -> str:
    code = int(job.get("error", 0))
    return f"job {job.get('jobname', '?')!r} failed: error {code} ({os.strerror(code)})"


def _group(name: str, jobs: list[dict[str, Any]], version: str) -> GroupResult:
    notes: list[str] = []
    errors = [_error_text(j) for j in jobs if int(j.get("error", 0) or 0) != 0]
    per_dir: dict[str, list[_JobDir]] = {d: [] for d in (*_DIRS, "mixed")}
    for job in jobs:
        for d in (*_DIRS, "mixed"):
            if isinstance(job.get(d), dict) and (jd := _job_dir(job[d])) is not None:
                per_dir[d].append(jd)
    directions = [_aggregate(d, per_dir[d], notes, name) for d in _DIRS if per_dir[d]]
    if per_dir["mixed"]:
        directions.append(_aggregate("total", per_dir["mixed"], notes, name))
    elif per_dir["read"] and per_dir["write"]:
        directions.append(_aggregate("total", per_dir["read"] + per_dir["write"], notes, name))
    job_names = list(dict.fromkeys(str(j.get("jobname", "")) for j in jobs))
    hosts = list(dict.fromkeys(str(j["hostname"]) for j in jobs if j.get("hostname")))
    return GroupResult(
        name=name, job_names=job_names, jobs=len(jobs), engine="fio", engine_version=version,
        directions=directions, hosts=hosts, errors=errors, notes=notes,
    )


def parse_fio_document(doc: dict[str, Any], *, per_job: bool = False, merge_all: bool = False) -> list[GroupResult]:
    """One result per reporting group (fio's "Run status group"), per job name, or all merged."""
    version = str(doc.get("fio version", "fio-unknown")).removeprefix("fio-")
    entries = doc.get("jobs") or doc.get("client_stats") or []
    jobs = [j for j in entries if isinstance(j, dict) and j.get("jobname") != ALL_CLIENTS]
    if not jobs:
        raise ParseError("fio output has no job results")
    buckets: dict[Any, list[dict[str, Any]]] = {}
    for job in jobs:
        key = 0 if merge_all else job.get("jobname") if per_job else job.get("groupid", 0)
        buckets.setdefault(key, []).append(job)
    results = []
    for group_jobs in buckets.values():
        names = list(dict.fromkeys(str(j.get("jobname", "")) for j in group_jobs))
        results.append(_group("+".join(names), group_jobs, version))
    return results


def parse_fio_text(text: str, *, per_job: bool = False,
                   source: str = "fio output") -> tuple[dict[str, Any], list[GroupResult]]:
    """The fio document found in ``text`` and its results; errors name ``source``."""
    doc = extract_fio_document(text, source)
    try:
        return doc, parse_fio_document(doc, per_job=per_job)
    except ParseError as exc:
        raise ParseError(f"{source}: {exc.message}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"{source}: unexpected fio JSON layout ({exc!r})") from None


def parse_fio_output(text: str, *, per_job: bool = False, source: str = "fio output") -> list[GroupResult]:
    return parse_fio_text(text, per_job=per_job, source=source)[1]
