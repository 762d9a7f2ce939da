"""The knee searches of a run (``iodepth: auto``) as reports show them: lines under the table, the
records for JSON, and one chart per search for the HTML report.

What each search found is in the run's facts (``knees``: the runner writes one record per unit,
``attribution/knee.py`` says what is in it); each step is also a stored result of its own, named
``NAME-iodepthQ``, so the table lists the curve point by point and the sweep charts draw it.

A search that a failing step or Ctrl-C cut short keeps where in its record (``complete`` false,
``cut``). The curve rebuilt from the record's points cannot tell (a search cut while it bisects has
found a knee, as a whole one has), so every report says it from the record: one line of at most
80 columns (``cut_line``), its reason shortened; the whole reason is in the record and the job's
message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..attribution.knee import FACTS, Curve, KneeRule, Point
from ..text import printable
from ..units import latency
from . import svg
from .textable import ELLIPSIS, count

CUT_WIDTH = 78  # a cut line, indented by two under its search in the table: 80 columns


def records(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The run's knee records, as stored (an empty list for a run without a knee search)."""
    return [r for r in run.get("facts", {}).get(FACTS) or [] if isinstance(r, dict) and r.get("points")]


def curve(record: dict[str, Any]) -> Curve:
    """A stored record as the search's ``Curve`` again."""
    rule = KneeRule(int(record["min_iodepth"]), int(record["max_iodepth"]), float(record["gain"]),
                    record.get("p99_under_us"), int(record.get("bisect", 1)))
    stopped = str(record.get("stopped") or "")

    def point(key: str) -> Point | None:
        return Point.from_json(record[key]) if record.get(key) else None

    peak = point("peak")
    points = [Point.from_json(p) for p in record["points"]]
    return Curve(rule, points, "" if stopped == "cut short" else stopped, point("knee"),
                 peak or max(points, key=lambda p: p.iops), point("usable"))


def _where(record: dict[str, Any]) -> str:
    host = str(record.get("host") or "")
    target = str(record.get("target") or "")
    repeat = f" #{record['repeat']}" if int(record.get("repeat") or 1) > 1 else ""
    return printable(f"{record['workload']} on {target if host in ('local', 'imported') else f'{host}:{target}'}"
                     + repeat)


def cut_line(record: dict[str, Any]) -> str | None:
    """Where a failure or Ctrl-C cut the search short, in one line of at most ``CUT_WIDTH`` columns
    (its reason's first line, shortened), so that a partial curve is never read as whole; None for a
    search that ended by its rule."""
    cut = record.get("cut")
    if not isinstance(cut, dict):
        return None if record.get("complete", True) else "cut short: the curve is partial"
    why = printable(str(cut.get("why") or "").strip().split("\n", 1)[0]) or "no reason recorded"
    line = f"cut short at step {cut.get('step')} (QD {cut.get('iodepth')}): {why}"
    return line if len(line) <= CUT_WIDTH else line[: CUT_WIDTH - 1] + ELLIPSIS


def knee_lines(run: dict[str, Any]) -> list[str]:
    """Under the results table: per search, what it found, where it was cut short (if it was), then
    its curve in depth order."""
    out = []
    for record in records(run):
        found = curve(record)
        out.append(f"knee: {_where(record)}: {found.text()}")
        if (cut := cut_line(record)) is not None:
            out.append(f"  {cut}")
        out.append("  curve: " + "; ".join(
            f"QD {p.depth} {count(p.iops)} IOPS p50 {latency(p.p50_us)} p99 {latency(p.p99_us)}" for p in found.points))
    return out


def knee_markdown(run: dict[str, Any]) -> list[str]:
    """The Markdown report's section: per search, what it found, and where it was cut short."""
    items = []
    for record in records(run):
        items.append(f"- {_where(record)}: {curve(record).text()}")
        if (cut := cut_line(record)) is not None:
            items.append(f"  - {cut}")
    return ["", "**knee search** (iodepth: auto; each step is a row above):", "", *items] if items else []


def knee_json(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The records for ``--format json`` (``run.knees``), as stored."""
    return records(run)


def knee_charts(runs: list[dict[str, Any]]) -> list[str]:
    """Per search: p50 and p99 against IOPS, each point labelled with its queue depth, the knee and
    the p99 limit drawn; the note says what the search found."""
    out = []
    for run in runs:
        for record in records(run):
            found = curve(record)
            title = f"{_where(record)}: latency vs IOPS, knee search" + (f" ({run['id']})" if len(runs) > 1 else "")
            out.append(_chart(title, found, cut_line(record)))
    return out


def _chart(title: str, found: Curve, cut: str | None) -> str:
    series = []
    for key, dash in (("p50", ""), ("p99", "6 3")):
        pts = [(p.iops, v, p.depth) for p in found.points if (v := p.p50_us if key == "p50" else p.p99_us) is not None]
        if not pts:
            continue
        series.append(svg.Series(key, [(a, b) for a, b, _ in pts],
                                 [f"QD {q}: {count(a)} IOPS, {key} {latency(b)}" for a, b, q in pts],
                                 ", ".join(f"QD {q}: {latency(b)}" for _, b, q in pts), color=svg.color(0), dash=dash,
                                 marks=[f"QD {q}" for _, _, q in pts] if key == "p99" else []))
    if found.knee is not None and found.knee.p99_us is not None:
        series.append(svg.Series("knee", [(found.knee.iops, found.knee.p99_us)],
                                 [f"knee: {found.knee.text()}"], f"QD {found.knee.depth}", color=svg.color(3)))
    limit = found.rule.p99_under_us
    lats = [b for s in series for _, b in s.points] + ([limit] if limit is not None else [])
    y = svg.latency_axis(lats)
    return svg.line_chart(title, series, svg.value_axis([p.iops for p in found.points], zero=False), y, "IOPS",
                          "latency", extra=_limit(limit) if limit is not None else None,
                          note=found.text() + (f"; {cut}" if cut is not None else ""),
                          extra_legend=[("#2ca02c", f"p99 limit {latency(limit)}", "")] if limit is not None else ())


def _limit(limit: float) -> Callable[[svg.Axis, svg.Axis], list[str]]:
    """The p99 limit, a dashed green line across the chart."""
    return svg.band(limit, limit, limit, f"p99 limit {latency(limit)}")
