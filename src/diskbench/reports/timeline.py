"""The "Over time" charts: IOPS, MiB/s and mean latency per interval, as the engine logged them.

One chart per job and metric, every run, place and repetition a line on it (as fio-plot
overlays runs): a repetition that sagged halfway or a run that warmed up slower shows against
the others instead of on a chart of its own. A colour is a run and place; its repetitions are
the same colour, solid, dashed, dotted (or, with a single run and place, a colour each).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..attribution.record import limits_of
from ..model import Series
from ..store import StoredResult
from ..units import latency
from . import svg
from .charts import MIB, place, title
from .textable import count


@dataclass
class Trace:
    """One repetition's series of one job, with what names its line."""

    result: StoredResult
    series: Series
    group: int  # which run and place it belongs to (its colour)
    rep: int  # which of that group's repetitions it is (its dash)
    label: str


@dataclass
class Metric:
    """How one metric is read from a series and shown."""

    name: str
    values: Callable[[Series], list[float | None] | None]
    fmt: Callable[[float], str]
    log: bool = False


METRICS = (
    Metric("IOPS", lambda s: list(s.iops), count),
    Metric("MiB/s", lambda s: [v / MIB for v in s.bw_bytes_per_s] if s.bw_bytes_per_s else None,
           lambda v: count(v, 1)),
    Metric("mean latency", lambda s: s.lat_mean_us, latency, log=True),
)


def _traces(runs: list[dict[str, Any]], raw: dict[str, list[StoredResult]]) -> dict[str, list[Trace]]:
    """Every stored repetition with a series, grouped by chart (job and direction), in run order."""
    by_chart: dict[str, list[StoredResult]] = {}
    for run in runs:
        for r in raw[run["id"]]:
            if r.result.series is not None and len(r.result.series.iops) > 1:
                by_chart.setdefault(title(r), []).append(r)
    return {name: _label(found, many_runs=len(runs) > 1) for name, found in by_chart.items()}


def _label(found: list[StoredResult], many_runs: bool) -> list[Trace]:
    """Name each line by what differs between the lines of one chart: run, place, repetition."""
    groups = list(dict.fromkeys((r.run_id, place(r)) for r in found))
    places = {p for _, p in groups}
    reps: dict[tuple[str, str], int] = {}
    out = []
    for r in found:
        key = (r.run_id, place(r))
        rep = reps[key] = reps.get(key, -1) + 1
        parts = [r.run_id] if many_runs else []
        parts += [place(r)] if len(places) > 1 or not many_runs else []
        parts += [f"#{r.repeat}"] if any(x.repeat > 1 for x in found) else []
        assert r.result.series is not None
        out.append(Trace(r, r.result.series, groups.index(key), rep, " ".join(parts)))
    return out


def _stroke(t: Trace, single_group: bool) -> tuple[str | None, str]:
    """(colour, dash) of a line: one colour per run and place, a dash per repetition; with one run
    and place, a colour per repetition reads better than dashes."""
    if single_group:
        return None, ""
    return svg.color(t.group), svg.DASHES[t.rep % len(svg.DASHES)]


def _caps(traces: Sequence[Trace], end: float) -> list[svg.Series]:
    """The published IOPS caps the results were compared with, each once, as dashed grey lines."""
    found: dict[tuple[str, float], None] = {}
    for t in traces:
        for lim in limits_of(t.result.result.bound or {}):
            if lim.metric == "iops" and lim.applies_to(t.result.result.direction):
                found[(lim.label(), lim.value)] = None
    return [svg.Series(label, [(0.0, value), (end, value)], legend=count(value), dashed=True, color="#777")
            for label, value in found]


def _line(t: Trace, metric: Metric, single_group: bool) -> svg.Series | None:
    """One trace's line of one metric, with its mean, min and max in the legend."""
    values = metric.values(t.series)
    if not values:
        return None
    pts = [(i * t.series.interval_s, v) for i, v in enumerate(values) if v is not None]
    if len(pts) < 2:
        return None
    vals = [v for _, v in pts]
    colour, dash = _stroke(t, single_group)
    text = f"mean {metric.fmt(sum(vals) / len(vals))}, min {metric.fmt(min(vals))}, max {metric.fmt(max(vals))}"
    return svg.Series(t.label or metric.name, pts, legend=text, color=colour, dash=dash)


def _chart(name: str, traces: list[Trace], metric: Metric) -> str | None:
    """One metric of one job over time, every trace a line; None when no trace has that metric."""
    single = len({t.group for t in traces}) == 1
    lines = [s for t in traces if (s := _line(t, metric, single)) is not None]
    if not lines:
        return None
    end = max(x for s in lines for x, _ in s.points)
    caps = _caps(traces, end) if metric.name == "IOPS" else []
    values = [v for s in [*lines, *caps] for _, v in s.points]
    y = svg.latency_axis(values) if metric.log else svg.value_axis(values)
    intervals = sorted({t.series.interval_s for t in traces})
    sources = sorted({t.series.source for t in traces if t.series.source})
    note = "; ".join(filter(None, [", ".join(sources),
                                   (traces[0].result.result.bound or {}).get("text", "") if single else ""]))
    return svg.line_chart(f"{name}: {metric.name} over time", [*lines, *caps],
                          svg.value_axis([0.0, end], fmt=lambda v: f"{v:g} s"), y,
                          f"time (s, every {'/'.join(f'{i:g}' for i in intervals)} s)", metric.name, note=note)


def series_charts(runs: list[dict[str, Any]], raw: dict[str, list[StoredResult]]) -> list[str]:
    """IOPS, MiB/s and mean latency over the run of each job: runs, places and repeats overlaid."""
    out = []
    for name, traces in _traces(runs, raw).items():
        out += [c for metric in METRICS if (c := _chart(name, traces, metric)) is not None]
    return out
