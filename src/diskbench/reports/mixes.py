"""The NetApp-style charts of a read/write mix sweep: total IOPS and MiB/s against the read
percentage, one line per workload (block size), and mean latency against total IOPS.

Totals are read plus write of the same unit (the I/Os of one run add up); the mean latency is
weighted by each direction's samples, so it is the mean over every I/O, never a mean of means.
A chart is one host and target: two targets of one host are two charts, never one sum.
"""

from __future__ import annotations

from typing import Any

from .formats import NOT_REMOTE
from .stats import Summary

MIB = 1024.0 * 1024.0
MIX = "rwmixread"


def _points(rows: list[Summary]) -> dict[tuple[str, str, str], dict[float, dict[str, float]]]:
    """Per (host, target, sweep base) and read %: summed IOPS, MiB/s, latency x samples, samples."""
    points: dict[tuple[str, str, str], dict[float, dict[str, float]]] = {}
    for r in rows:
        sweep = r.params.get("sweep") or {}
        if sweep.get("param") != MIX or r.result.direction not in ("read", "write"):
            continue
        p = points.setdefault((r.host, r.target, sweep["base"]), {}).setdefault(
            float(sweep["value"]), {"iops": 0.0, "mibs": 0.0, "lat": 0.0, "n": 0.0})
        p["iops"] += r.result.iops
        p["mibs"] += r.result.bw_bytes_per_s / MIB
        if r.result.clat and r.result.clat.samples:
            p["lat"] += r.result.clat.mean * r.result.clat.samples
            p["n"] += r.result.clat.samples
    return points


def mix_charts(rows: list[Summary], label: str) -> list[dict[str, Any]]:
    """One chart description per host and target (a group's merged rows, or a single machine) of one
    run: ``place`` names what was measured as the report's tables do (the target, and the host when
    it is not this machine); ``title`` is ``label`` and the host (and the target when it has several)."""
    points = _points(rows)
    targets: dict[str, set[str]] = {}
    for host, target, _ in points:
        targets.setdefault(host, set()).add(target)
    charts: dict[tuple[str, str], dict[str, Any]] = {}
    for (host, target, base), by_mix in points.items():
        where = target if host in NOT_REMOTE else f"{host}/{target}"
        chart = charts.setdefault((host, target), {
            "title": f"{label} {host}" + (f"/{target}" if len(targets[host]) > 1 else ""),
            "place": where, "host": host, "target": target, "lines": []})
        mixes = sorted(by_mix)
        chart["lines"].append({
            "label": base, "x": mixes, "iops": [round(by_mix[m]["iops"], 1) for m in mixes],
            "mibs": [round(by_mix[m]["mibs"], 2) for m in mixes],
            "lat": [round(by_mix[m]["lat"] / by_mix[m]["n"], 3) if by_mix[m]["n"] else None for m in mixes]})
    return [c for c in charts.values() if any(len(line["x"]) > 1 for line in c["lines"])]
