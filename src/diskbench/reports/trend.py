"""History charts: each job's IOPS and p99 by run date, with the gate's band around the newest run.

The date axis names its ticks as precisely as it must for no two to read alike: runs of one
day get hours and minutes, runs of one minute seconds, runs of one second their order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..units import latency
from . import svg
from .compare import HistoryPoint
from .gate import ACCEPTED, Policy
from .stats import MAD_SCALE, mad, median
from .textable import count


def _formats(stamps: list[float]) -> list[str]:
    """strftime formats to try, coarsest first, for times within this span (a year only when the
    runs span years, a date only when they span days)."""
    days = {datetime.fromtimestamp(t).date() for t in stamps}
    if len({d.year for d in days}) > 1:
        return ["%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"]
    if len(days) > 1:
        return ["%m-%d", "%m-%d %H:%M", "%m-%d %H:%M:%S"]
    return ["%H:%M", "%H:%M:%S"]


def time_axis(stamps: list[float]) -> svg.Axis:
    """Ticks at up to five evenly spaced times, labelled by the coarsest format that tells them all
    apart; runs that all started in the same second are spaced by their order instead."""
    lo, hi = min(stamps), max(stamps)
    if hi - lo < 1:
        order = [float(i) for i in range(len(stamps))]
        return svg.Axis(-0.5, len(stamps) - 0.5, False, order, [f"run {i + 1}" for i in range(len(stamps))])
    pad = (hi - lo) * 0.04
    picks = [lo + i * (hi - lo) / 4 for i in range(5)] if len(stamps) > 5 else sorted(set(stamps))
    for fmt in _formats(stamps):
        labels = [datetime.fromtimestamp(t).strftime(fmt) for t in picks]
        if len(set(labels)) == len(labels):
            break
    kept = {label: t for t, label in reversed(list(zip(picks, labels, strict=True)))}  # a tick per label
    return svg.Axis(lo - pad, hi + pad, False, sorted(kept.values()), [label for label in dict.fromkeys(labels)])


def x_positions(stamps: list[float]) -> list[float]:
    """Where each run sits on ``time_axis``: its start time, or its order when all share one second."""
    return [float(i) for i in range(len(stamps))] if max(stamps) - min(stamps) < 1 else stamps


def band(values: list[float], accepted: list[bool], threshold: float,
         policy: Policy) -> tuple[float, float, float, int] | None:
    """The gate's band as the newest point is judged: accepted runs before it, newest first."""
    base = [v for v, ok in zip(values[:-1], accepted[:-1], strict=True)
            if ok and not math.isnan(v)][-policy.baseline_runs:]
    if len(base) < 2:
        return None
    m = median(base)
    width = max(threshold * abs(m), 3 * MAD_SCALE * mad(base))
    return m - width, m + width, m, len(base)


def _metric_chart(job: str, direction: str, points: list[HistoryPoint], policy: Policy,
                  metric: str, name: str, fmt: Callable[[float], str]) -> str | None:
    """One metric of one job by date, with the gate band when two accepted earlier runs exist."""
    stamps = [datetime.fromisoformat(p.started).timestamp() for p in points]
    xs = x_positions(stamps)
    vals = [p.values[metric] for p in points]
    pts = [(t, v) for t, v in zip(xs, vals, strict=True) if v is not None]
    if len(pts) < 2:
        return None
    tips = [f"{p.run_id} ({p.started[:19].replace('T', ' ')}): {fmt(v)}" + (f", gate {p.verdict}" if p.verdict else "")
            for p in points if (v := p.values[metric]) is not None]
    series = [svg.Series(name, pts, tips, f"latest {fmt(pts[-1][1])} (run {points[-1].run_id}); "
                         f"first {fmt(pts[0][1])} (run {points[0].run_id})")]
    accepted = [p.verdict is None or p.verdict in ACCEPTED for p in points]
    found = band([v if v is not None else math.nan for v in vals], accepted, policy.thresholds.get(metric) or 0.1,
                 policy)
    extra, note, key, axis_values = None, "no gate band: fewer than two accepted earlier runs", [], [v for _, v in pts]
    if found:
        lo, hi, mid, n = found
        label = f"baseline median {fmt(mid)} (dashed), pass from {fmt(lo)} to {fmt(hi)}, n {n}"
        extra, note, key = svg.band(lo, hi, mid, label), "", [("#2ca02c55", "gate band", label)]
        axis_values += [lo, hi]
    y = svg.latency_axis(axis_values) if metric == "p99" else svg.value_axis(axis_values)
    return svg.line_chart(f"{job} {direction}: {name} by date", series, time_axis(stamps), y, "run date",
                          name, extra=extra, note=note, extra_legend=key)


def history_charts(hist: dict[tuple[str, str], list[Any]], policy: Policy) -> list[str]:
    """IOPS and p99 of each job over its stored runs."""
    out = []
    for (job, direction), points in hist.items():
        if len(points) < 2:
            continue
        for metric, name, fmt in (("iops", "IOPS", count), ("p99", "p99 latency", latency)):
            chart = _metric_chart(job, direction, points, policy, metric, name, fmt)
            if chart:
                out.append(chart)
    return out
