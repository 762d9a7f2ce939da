"""fio's per-second interval logs -> one ``Series`` per direction of each reporting group.

The measured run of every job writes ``write_iops_log``, ``write_bw_log`` and ``write_lat_log`` averaged
over ``log_avg_msec=1000``: one line per second per job per direction (``msec, value, ddir, bs, offset``).
The logs are fio's own per-interval figures, so a burst that ends mid-run (a step down) and a rate that is
still trending are visible; the summary figures alone hide both. Each job writes its own files
(``PREFIX_iops.N.log``, N numbering the jobs of the file); the series of a group is the sum of its jobs'
IOPS and bandwidth per second, and their completion latency weighted by IOPS.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ...model import GroupResult, Series

INTERVAL_MS = 1000
KINDS = ("iops", "bw", "clat")  # the lat log's files diskbench reads (fio also writes _lat and _slat)
_DIRS = {0: "read", 1: "write", 2: "trim"}
_LOG_NAME = re.compile(r"^(?P<prefix>.+)_(?P<kind>iops|bw|clat)\.(?P<n>\d+)\.log$")
_JOBS = re.compile(r"^numjobs=(\d+)$", re.MULTILINE)
_PREFIX = re.compile(r"^write_iops_log=(.+)$", re.MULTILINE)


def log_prefix(job_name: str) -> str:
    """A file-name-safe log prefix for a job section (its name may hold anything a profile allows)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", job_name)


def log_files(rendered: str) -> list[str]:
    """Every log file the job file can make: each prefix with each job number (the host cannot be listed)."""
    jobs = sum(int(n) for n in _JOBS.findall(rendered)) or 1
    return [f"{prefix}_{kind}.{n}.log" for prefix in dict.fromkeys(_PREFIX.findall(rendered))
            for kind in KINDS for n in range(1, jobs + 1)]


def _read(path: Path) -> dict[tuple[int, str], float]:
    """(second, direction) -> value of one job's log; malformed lines (a cut file) are skipped."""
    out: dict[tuple[int, str], float] = {}
    for line in path.read_text(errors="replace").splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            msec, value, ddir = int(parts[0]), float(parts[1]), int(parts[2])
        except (IndexError, ValueError):
            continue
        second = max(1, round(msec / INTERVAL_MS))
        direction = _DIRS.get(ddir)
        if direction:
            out[(second, direction)] = out.get((second, direction), 0.0) + value
    return out


def read_series(art: Path, prefix: str) -> dict[str, Series]:
    """The series of every direction the jobs logged under ``prefix`` in ``art`` (empty when none)."""
    logs: dict[str, list[dict[tuple[int, str], float]]] = {k: [] for k in KINDS}
    for path in sorted(art.glob(f"{prefix}_*.log")):
        m = _LOG_NAME.match(path.name)
        if m and m["prefix"] == prefix:
            logs[m["kind"]].append(_read(path))
    if not logs["iops"]:
        return {}
    iops = _summed(logs["iops"])
    bw = _summed(logs["bw"])
    out = {}
    for direction in dict.fromkeys(d for _, d in iops):
        seconds = range(1, max(s for s, d in iops if d == direction) + 1)
        rates = [iops.get((s, direction), 0.0) for s in seconds]
        lat = _weighted_latency(logs["iops"], logs["clat"], direction, seconds)
        out[direction] = Series(
            interval_s=INTERVAL_MS / 1000, iops=rates,
            bw_bytes_per_s=[bw.get((s, direction), 0.0) * 1024 for s in seconds] if logs["bw"] else None,
            lat_mean_us=lat, source="fio interval logs (log_avg_msec=1000)")
    if len(out) > 1:  # a mixed job: the total is the sum of its directions
        parts = list(out.values())
        out["total"] = Series(interval_s=parts[0].interval_s, iops=_add(p.iops for p in parts),
                              bw_bytes_per_s=_add(p.bw_bytes_per_s or [] for p in parts),
                              source=parts[0].source)
    return out


def _summed(logs: list[dict[tuple[int, str], float]]) -> dict[tuple[int, str], float]:
    total: dict[tuple[int, str], float] = {}
    for log in logs:
        for key, value in log.items():
            total[key] = total.get(key, 0.0) + value
    return total


def _add(lists: Iterable[list[float]]) -> list[float]:
    rows = list(lists)
    width = max((len(r) for r in rows), default=0)
    return [sum(r[i] for r in rows if i < len(r)) for i in range(width)]


def _weighted_latency(iops_logs: list[dict[tuple[int, str], float]], clat_logs: list[dict[tuple[int, str], float]],
                      direction: str, seconds: range) -> list[float | None] | None:
    """Mean completion latency (µs) per second over the jobs, each job weighted by its IOPS that second."""
    if len(clat_logs) != len(iops_logs):
        return None
    out: list[float | None] = []
    for s in seconds:
        weight = sum(log.get((s, direction), 0.0) for log in iops_logs)
        if weight <= 0:
            out.append(None)
            continue
        ns = sum(i.get((s, direction), 0.0) * c.get((s, direction), 0.0) for i, c in zip(iops_logs, clat_logs,
                                                                                        strict=True))
        out.append(ns / weight / 1000)
    return out


def attach_series(art: Path, groups: list[GroupResult]) -> None:
    """Fill each group's directions' ``series`` from the logs of its job(s) in ``art``."""
    for group in groups:
        names = group.job_names or [group.name]
        found = [read_series(art, log_prefix(n)) for n in names]
        found = [f for f in found if f]
        if len(found) != 1:  # no logs, or a group of several sections (their sum is not one job's)
            continue
        for d in group.directions:
            d.series = _within(found[0].get(d.direction), d.runtime_s)


def _within(series: Series | None, runtime_s: float) -> Series | None:
    """The series without what fio logs after the run: its last, partial window (0 IOPS once I/O stopped)."""
    if series is None or runtime_s <= 0:
        return series
    keep = max(1, int(runtime_s / series.interval_s + 0.05))  # whole seconds of the run
    if len(series.iops) <= keep:
        return series
    return Series(series.interval_s, series.iops[:keep],
                  series.bw_bytes_per_s[:keep] if series.bw_bytes_per_s is not None else None,
                  series.lat_mean_us[:keep] if series.lat_mean_us is not None else None, series.source)
