"""The NetApp-style charts of a read/write mix sweep: total IOPS and MiB/s against the read
percentage, one line per workload (block size), and mean latency against total IOPS.

Totals are read plus write of the same unit (the I/Os of one run add up); the mean latency is
weighted by each direction's samples, so it is the mean over every I/O, never a mean of means.
"""

from __future__ import annotations

from typing import Any

from .stats import Summary

MIB = 1024.0 * 1024.0
MIX = "rwmixread"


def mix_charts(rows: list[Summary], label: str) -> list[dict[str, Any]]:
    """One chart description per host (a group's merged rows, or a single machine) of one run."""
    points: dict[tuple[str, str], dict[float, dict[str, float]]] = {}
    for r in rows:
        sweep = r.params.get("sweep") or {}
        if sweep.get("param") != MIX or r.result.direction not in ("read", "write"):
            continue
        p = points.setdefault((r.host, sweep["base"]), {}).setdefault(
            float(sweep["value"]), {"iops": 0.0, "mibs": 0.0, "lat": 0.0, "n": 0.0})
        p["iops"] += r.result.iops
        p["mibs"] += r.result.bw_bytes_per_s / MIB
        if r.result.clat and r.result.clat.samples:
            p["lat"] += r.result.clat.mean * r.result.clat.samples
            p["n"] += r.result.clat.samples
    charts: dict[str, dict[str, Any]] = {}
    for (host, base), by_mix in points.items():
        chart = charts.setdefault(host, {"title": f"{label} {host}", "lines": []})
        mixes = sorted(by_mix)
        chart["lines"].append({
            "label": base, "x": mixes, "iops": [round(by_mix[m]["iops"], 1) for m in mixes],
            "mibs": [round(by_mix[m]["mibs"], 2) for m in mixes],
            "lat": [round(by_mix[m]["lat"] / by_mix[m]["n"], 3) if by_mix[m]["n"] else None for m in mixes]})
    return [c for c in charts.values() if any(len(line["x"]) > 1 for line in c["lines"])]
