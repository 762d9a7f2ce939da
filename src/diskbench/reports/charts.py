"""The report's per-job charts: latency percentiles, latency histograms and IOPS bars.

Every chart is one job and direction (a workload, or one point of a sweep) with every run and
storage target of the report drawn on it: runs are overlaid, never repeated chart by chart, so
two runs of four jobs give four charts of each kind, and "temp disk vs NVMe" or "last week vs
today" reads at a glance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..model import PERCENTILES, Latency, pkey
from ..store import Store, StoredResult
from ..units import latency
from . import svg
from .formats import NOT_REMOTE
from .stats import Summary
from .textable import count

MIB = 1024.0 * 1024.0
MAX_POINT_MARKS = 12  # series per chart with a marker (and tooltip) on every point
NINES_TICKS = (50, 90, 99, 99.9, 99.99, 99.999)
BUCKETS_PER_DECADE = 5


def place(r: StoredResult) -> str:
    """Where a result was measured: its target, prefixed by its host when that is not this machine."""
    return r.target if r.host in NOT_REMOTE else f"{r.host}/{r.target}"


def where(r: StoredResult, many_runs: bool) -> str:
    """A line's or bar's name on a chart: the place, and the run when the report holds several."""
    return f"{r.run_id} {place(r)}" if many_runs else place(r)


def title(r: StoredResult) -> str:
    """A chart's subject: the workload (or sweep point) and direction, which every run shares."""
    sweep = r.params.get("sweep")
    return f"{sweep['base']} [{sweep['param']}={sweep['value']}] {r.result.direction}" if sweep \
        else f"{r.workload} {r.result.direction}"


def spread(raw: Sequence[StoredResult]) -> dict[tuple[str, str], tuple[float, float]]:
    """Smallest and largest IOPS over each job's repetitions."""
    out: dict[tuple[str, str], list[float]] = {}
    for r in raw:
        out.setdefault((r.group_key, r.result.direction), []).append(r.result.iops)
    return {k: (min(v), max(v)) for k, v in out.items() if len(v) > 1}


def latency_charts(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> list[str]:
    """Completion latency by percentile on a nines axis, one line per run and place."""
    many = len(runs) > 1
    charts: dict[str, list[svg.Series]] = {}
    for run in runs:
        for r in rows[run["id"]]:
            pct = r.result.clat.percentiles if r.result.clat else {}
            pts = [(svg.nines(p), pct[pkey(p)]) for p in PERCENTILES if pkey(p) in pct and p >= 50]
            if len(pts) < 2:
                continue
            shown = ", ".join(f"{k} {latency(pct[k])}" for k in ("p50", "p99", "p99.9") if k in pct)
            tips = [f"{where(r, many)} p{100 - 100 / 10**x:g}: {latency(y)}" for x, y in pts]
            charts.setdefault(title(r), []).append(svg.Series(where(r, many), pts, tips, shown))
    out = []
    for name, series in charts.items():
        top = max(x for s in series for x, _ in s.points)
        ticks = [svg.nines(p) for p in NINES_TICKS if svg.nines(p) <= top + 1e-9]
        x = svg.Axis(svg.nines(50) - 0.05, top + 0.05, False, ticks, [pkey(p) for p in NINES_TICKS][: len(ticks)])
        y = svg.latency_axis([v for s in series for _, v in s.points])
        if len(series) > MAX_POINT_MARKS:
            for s in series:
                s.tips = []
        out.append(svg.line_chart(f"{name}: completion latency by percentile", series, x, y,
                                  "percentile (nines: p90, p99, p99.9 evenly spaced)", "latency"))
    return out


def _buckets(bins: dict[int, int], scale: float) -> list[tuple[float, float]]:
    """fio's bins summed into log-spaced buckets: (lower edge in µs, share of I/Os in %)."""
    total = sum(bins.values())
    if not total:
        return []
    acc: dict[int, int] = {}
    for value, n in bins.items():
        k = math.floor(math.log10(max(value * scale, 1e-3)) * BUCKETS_PER_DECADE)
        acc[k] = acc.get(k, 0) + n
    lo, hi = min(acc), max(acc)
    return [(10 ** (k / BUCKETS_PER_DECADE), 100 * acc.get(k, 0) / total) for k in range(lo, hi + 2)]


def _bin_scale(clat: Latency, bins: dict[int, int]) -> float:
    """µs per unit of a bin key: as the parser recorded it; for rows stored before it did, told apart
    by size (fio 3 counts ns, fio 2 µs, and the largest bin sits near the max latency)."""
    if clat.bin_ns is not None:
        return clat.bin_ns / 1000.0
    return 1e-3 if max(bins) > 50 * max(clat.max, 1e-3) else 1.0


def _merged_bins(r: Summary, raw: list[StoredResult],
                 bins: dict[tuple[str, str, int], dict[int, int]]) -> dict[int, int]:
    """One job's bins summed over its repetitions (a histogram of every I/O the job did)."""
    merged: dict[int, int] = {}
    for x in raw:
        if x.group_key == r.group_key and x.result.direction == r.result.direction:
            for k, v in bins.get((x.job_key, x.result.direction, x.repeat), {}).items():
                merged[k] = merged.get(k, 0) + v
    return merged


def histogram_charts(store: Store, runs: list[dict[str, Any]], rows: dict[str, list[Summary]],
                     raw: dict[str, list[StoredResult]]) -> list[str]:
    """Latency histograms from the engine's bins, one step line per run and place."""
    many = len(runs) > 1
    charts: dict[str, list[svg.Series]] = {}
    for run in runs:
        bins = store.latency_bins(run["id"])
        if not bins:
            continue
        for r in rows[run["id"]]:
            merged = _merged_bins(r, raw[run["id"]], bins)
            if not merged or not r.result.clat:
                continue
            pts = _buckets(merged, _bin_scale(r.result.clat, merged))
            if not pts:
                continue
            mode = max(pts, key=lambda p: p[1])
            charts.setdefault(title(r), []).append(svg.Series(
                where(r, many), pts, step=True,
                legend=f"{sum(merged.values()):,} I/Os, most at {latency(mode[0])}-"
                       f"{latency(mode[0] * 10 ** (1 / BUCKETS_PER_DECADE))} ({mode[1]:.1f}%)"))
    out = []
    for name, series in charts.items():
        x = svg.latency_axis([x for s in series for x, _ in s.points])
        y = svg.value_axis([max(y for s in series for _, y in s.points)], fmt=lambda v: f"{v:g}%")
        out.append(svg.line_chart(f"{name}: latency histogram", series, x, y, "completion latency (log)",
                                  "share of I/Os", note=f"{BUCKETS_PER_DECADE} buckets per decade, "
                                  "from the engine's own latency bins"))
    return out


def bar_charts(runs: list[dict[str, Any]], rows: dict[str, list[Summary]],
               spreads: dict[str, dict[tuple[str, str], tuple[float, float]]]) -> list[str]:
    """IOPS bars (labelled with MiB/s), one bar per run and place, whiskers over repetitions."""
    many = len(runs) > 1
    charts: dict[str, list[svg.Bar]] = {}
    for run in runs:
        for r in rows[run["id"]]:
            lo, hi = spreads[run["id"]].get((r.group_key, r.result.direction), (None, None))
            text = f"{count(r.result.iops)} IOPS · {count(r.result.bw_bytes_per_s / MIB, 1)} MiB/s"
            if r.n > 1:
                text += f" · n {r.n}" + (f", cv {100 * r.iops_cv:.1f}%" if r.iops_cv is not None else "")
            charts.setdefault(title(r), []).append(svg.Bar(where(r, many), r.result.iops, lo, hi, text))
    return [svg.bar_chart(f"{name}: IOPS (and MiB/s)", bars, "IOPS") for name, bars in charts.items()]
