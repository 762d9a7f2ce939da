"""Sweep and read/write mix charts, with every run and place of the report on one chart.

On a latency-vs-IOPS chart x is not the swept value, so each point carries its own label (the
queue depth, the read %): otherwise nobody can tell which point of the curve is which.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..units import latency
from . import svg
from .charts import where
from .mixes import mix_charts
from .stats import Summary
from .textable import count


def _sweep_groups(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]
                  ) -> dict[tuple[str, str], dict[str, list[Summary]]]:
    """(sweep base and direction, swept parameter) -> per run and place: its points."""
    many = len(runs) > 1
    groups: dict[tuple[str, str], dict[str, list[Summary]]] = {}
    for run in runs:
        for r in rows[run["id"]]:
            sweep = r.params.get("sweep")
            if sweep:
                key = (f"{sweep['base']} {r.result.direction}", sweep["param"])
                groups.setdefault(key, {}).setdefault(where(r, many), []).append(r)
    return groups


def _ordered(members: list[Summary]) -> tuple[list[Summary], list[str], bool]:
    """A sweep's points by their swept value (numbers ascending, other values as declared)."""
    values = [m.params["sweep"]["value"] for m in members]
    numeric = all(isinstance(v, (int, float)) for v in values)
    order = sorted(range(len(members)), key=lambda i: values[i] if numeric else i)
    return [members[i] for i in order], [str(values[i]) for i in order], numeric


def _iops_vs_value(name: str, param: str, lines: dict[str, list[Summary]]) -> str:
    """IOPS against the swept value, one line per run and place."""
    series: list[svg.Series] = []
    xs_all: list[float] = []
    labels_all: dict[float, str] = {}
    for i, (label, members) in enumerate(lines.items()):
        ordered, labels, numeric = _ordered(members)
        xs = [float(m.params["sweep"]["value"]) if numeric else float(n) for n, m in enumerate(ordered)]
        iops = [m.result.iops for m in ordered]
        xs_all += xs
        labels_all.update(zip(xs, labels, strict=True))
        pairs = list(zip(labels, iops, strict=True))
        series.append(svg.Series(label, list(zip(xs, iops, strict=True)),
                                 [f"{label} {param}={lab}: {count(v)} IOPS" for lab, v in pairs],
                                 ", ".join(f"{lab}: {count(v)}" for lab, v in pairs), color=svg.color(i)))
    lo, hi = min(xs_all), max(xs_all)
    ticks = sorted(labels_all)
    x = svg.Axis(lo - 0.05 * (hi - lo or 1), hi + 0.05 * (hi - lo or 1), False, ticks, [labels_all[t] for t in ticks])
    return svg.line_chart(f"{name}: IOPS vs {param}", series, x,
                          svg.value_axis([v for s in series for _, v in s.points]), param, "IOPS")


def _latency_vs_iops(name: str, param: str, lines: dict[str, list[Summary]]) -> str | None:
    """p50 and p99 against IOPS, one colour per run and place (p99 dashed); the upper line's points
    are labelled with their swept value (the lower one's sit right below them)."""
    series = []
    for i, (label, members) in enumerate(lines.items()):
        ordered, labels, _ = _ordered(members)
        found = {key: [(m.result.iops, c.percentiles[key], lab) for m, lab in zip(ordered, labels, strict=True)
                       if (c := m.result.clat) and key in c.percentiles] for key in ("p50", "p99")}
        marked = "p99" if found["p99"] else "p50"
        for key, dash in (("p50", ""), ("p99", "6 3")):
            pts = found[key]
            if not pts:
                continue
            series.append(svg.Series(
                f"{label} {key}" if len(lines) > 1 else key, [(a, b) for a, b, _ in pts],
                [f"{param}={lab}: {count(a)} IOPS, {key} {latency(b)}" for a, b, lab in pts],
                ", ".join(f"{lab}: {latency(b)}" for _, b, lab in pts), color=svg.color(i), dash=dash,
                marks=[f"{param}={lab}" if n == 0 else lab for n, (_, _, lab) in enumerate(pts)]
                if key == marked else []))
    if not series:
        return None
    return svg.line_chart(f"{name}: latency vs IOPS", series,
                          svg.value_axis([a for s in series for a, _ in s.points], zero=False),
                          svg.latency_axis([b for s in series for _, b in s.points]), "IOPS", "latency",
                          note=f"each point is labelled with its {param}")


def sweep_charts(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> list[str]:
    """For each sweep: IOPS against the swept value, and latency against IOPS."""
    out = []
    for (name, param), lines in _sweep_groups(runs, rows).items():
        lines = {label: members for label, members in lines.items() if len(members) > 1}
        if not lines:
            continue
        out.append(_iops_vs_value(name, param, lines))
        lat = _latency_vs_iops(name, param, lines)
        if lat:
            out.append(lat)
    return out


def _mix_lines(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> dict[str, list[dict[str, Any]]]:
    """Per place: every run's mix lines, named by workload (and run, when the report has several)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        for chart in mix_charts(rows[run["id"]], run["id"]):
            for line in chart["lines"]:
                label = f"{run['id']} {line['label']}" if len(runs) > 1 else line["label"]
                out.setdefault(chart["place"], []).append({**line, "label": label})
    return out


def _by_mix(where_: str, lines: list[dict[str, Any]], key: str, unit: str, fmt: Callable[[float], str]) -> str:
    """Total IOPS or MiB/s against the read %, one line per workload (and run)."""
    xs = sorted({x for line in lines for x in line["x"]})
    x = svg.Axis(-5, 105, False, xs, [f"{v:g}" for v in xs])
    series = [svg.Series(line["label"], list(zip(line["x"], line[key], strict=True)),
                         [f"read {m:g}%: {fmt(v)} {unit}" for m, v in zip(line["x"], line[key], strict=True)],
                         ", ".join(f"{m:g}%: {fmt(v)}" for m, v in zip(line["x"], line[key], strict=True)))
              for line in lines]
    return svg.line_chart(f"Read/write mix on {where_}: total {unit} by read %", series, x,
                          svg.value_axis([v for line in lines for v in line[key]]), "read % (rwmixread)", unit)


def _mix_latency(where_: str, lines: list[dict[str, Any]]) -> str | None:
    """Mean latency over every I/O against total IOPS; each point labelled with its read %."""
    series = []
    for line in lines:
        pts = [(i, v, m) for m, i, v in zip(line["x"], line["iops"], line["lat"], strict=True) if v is not None]
        if pts:
            series.append(svg.Series(line["label"], [(a, b) for a, b, _ in pts],
                                     [f"read {m:g}%: {count(a)} IOPS, mean {latency(b)}" for a, b, m in pts],
                                     ", ".join(f"{m:g}%: {latency(b)}" for _, b, m in pts),
                                     marks=[f"{m:g}%" for _, _, m in pts]))
    if not series:
        return None
    return svg.line_chart(f"Read/write mix on {where_}: mean latency vs total IOPS", series,
                          svg.value_axis([a for s in series for a, _ in s.points], zero=False),
                          svg.latency_axis([b for s in series for _, b in s.points]), "total IOPS", "mean latency",
                          note="each point is labelled with its read %")


def mix_section(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> list[str]:
    """A read/write mix sweep as the NetApp article draws it: total IOPS and MiB/s against the read
    percentage (one line per workload), and mean latency over every I/O against total IOPS."""
    out = []
    for where_, lines in _mix_lines(runs, rows).items():
        out.append(_by_mix(where_, lines, "iops", "IOPS", count))
        out.append(_by_mix(where_, lines, "mibs", "MiB/s", lambda v: f"{v:,.1f}"))
        lat = _mix_latency(where_, lines)
        if lat:
            out.append(lat)
    return out
