"""One self-contained HTML report: grouped tables and static charts (no script, no CDN).

Charts are drawn here (``svg.py``) so that each one shows its numbers in a legend without a
hover, fits an 800 px window, and opens offline. Sections with nothing to show are left out.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .. import __version__
from ..attribution.record import limits_of, tag
from ..model import PERCENTILES, TABLE_PERCENTILES, pkey
from ..resources import environment
from ..store import Store, StoredResult
from . import svg
from .compare import history
from .formats import NOT_REMOTE
from .gate import ACCEPTED, Policy
from .stats import MAD_SCALE, Summary, mad, median, summarize
from .textable import count, latency

MIB = 1024.0 * 1024.0
HISTORY_RUNS = 60
MAX_POINT_MARKS = 12  # series per chart with a marker (and tooltip) on every point
NINES_TICKS = (50, 90, 99, 99.9, 99.99, 99.999)
BUCKETS_PER_DECADE = 5


def _place(r: StoredResult) -> str:
    return r.target if r.host in NOT_REMOTE else f"{r.host}/{r.target}"


def _where(r: StoredResult, many_runs: bool) -> str:
    return f"{r.run_id} {_place(r)}" if many_runs else _place(r)


def _title(r: StoredResult) -> str:
    sweep = r.params.get("sweep")
    return f"{sweep['base']} [{sweep['param']}={sweep['value']}] {r.result.direction}" if sweep \
        else f"{r.workload} {r.result.direction}"


def _spread(raw: Sequence[StoredResult]) -> dict[tuple[str, str], tuple[float, float]]:
    """Smallest and largest IOPS over each job's repetitions."""
    out: dict[tuple[str, str], list[float]] = {}
    for r in raw:
        out.setdefault((r.group_key, r.result.direction), []).append(r.result.iops)
    return {k: (min(v), max(v)) for k, v in out.items() if len(v) > 1}


def latency_charts(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> list[str]:
    many = len(runs) > 1
    charts: dict[str, list[svg.Series]] = {}
    for run in runs:
        for r in rows[run["id"]]:
            pct = r.result.clat.percentiles if r.result.clat else {}
            pts = [(svg.nines(p), pct[pkey(p)]) for p in PERCENTILES if pkey(p) in pct and p >= 50]
            if len(pts) < 2:
                continue
            shown = ", ".join(f"{k} {latency(pct[k])}" for k in ("p50", "p99", "p99.9") if k in pct)
            tips = [f"{_where(r, many)} p{100 - 100 / 10**x:g}: {latency(y)}" for x, y in pts]
            charts.setdefault(_title(r), []).append(svg.Series(_where(r, many), pts, tips, shown))
    out = []
    for title, series in charts.items():
        top = max(x for s in series for x, _ in s.points)
        ticks = [svg.nines(p) for p in NINES_TICKS if svg.nines(p) <= top + 1e-9]
        x = svg.Axis(svg.nines(50) - 0.05, top + 0.05, False, ticks, [pkey(p) for p in NINES_TICKS][: len(ticks)])
        y = svg.latency_axis([v for s in series for _, v in s.points])
        if len(series) > MAX_POINT_MARKS:
            for s in series:
                s.tips = []
        out.append(svg.line_chart(f"{title}: completion latency by percentile", series, x, y,
                                  "percentile (nines: p90, p99, p99.9 evenly spaced)", "latency"))
    return out


def _buckets(bins: dict[int, int], scale: float) -> list[tuple[float, float]]:
    """fio's bins summed into log-spaced buckets: (lower edge in µs, share of I/Os in %)."""
    total = sum(bins.values())
    if not total:
        return []
    acc: dict[int, int] = {}
    for value, n in bins.items():
        us = max(value * scale, 1e-3)
        acc[math.floor(math.log10(us) * BUCKETS_PER_DECADE)] = acc.get(
            math.floor(math.log10(us) * BUCKETS_PER_DECADE), 0) + n
    lo, hi = min(acc), max(acc)
    return [(10 ** (k / BUCKETS_PER_DECADE), 100 * acc.get(k, 0) / total) for k in range(lo, hi + 2)]


def histogram_charts(store: Store, runs: list[dict[str, Any]], rows: dict[str, list[Summary]],
                     raw: dict[str, list[StoredResult]]) -> list[str]:
    many = len(runs) > 1
    charts: dict[str, list[svg.Series]] = {}
    for run in runs:
        bins = store.latency_bins(run["id"])
        if not bins:
            continue
        for r in rows[run["id"]]:
            same = [x for x in raw[run["id"]]
                    if x.group_key == r.group_key and x.result.direction == r.result.direction]
            found = [b for x in same if (b := bins.get((x.job_key, x.result.direction, x.repeat)))]
            if not found or not r.result.clat:
                continue
            merged: dict[int, int] = {}
            for b in found:
                for k, v in b.items():
                    merged[k] = merged.get(k, 0) + v
            # bins are in the engine's unit: fio 3 counts ns, fio 2 µs; the largest bin sits near max
            scale = 1e-3 if max(merged) > 50 * max(r.result.clat.max, 1e-3) else 1.0
            pts = _buckets(merged, scale)
            if not pts:
                continue
            mode = max(pts, key=lambda p: p[1])
            label = _where(r, many)
            charts.setdefault(_title(r), []).append(svg.Series(
                label, pts, step=True,
                legend=f"{sum(merged.values()):,} I/Os, most at {latency(mode[0])}-"
                       f"{latency(mode[0] * 10 ** (1 / BUCKETS_PER_DECADE))} ({mode[1]:.1f}%)"))
    out = []
    for title, series in charts.items():
        xs = [x for s in series for x, _ in s.points]
        x = svg.latency_axis(xs)
        top = max(y for s in series for _, y in s.points)
        y = svg.value_axis([top], fmt=lambda v: f"{v:g}%")
        out.append(svg.line_chart(f"{title}: latency histogram", series, x, y, "completion latency (log)",
                                  "share of I/Os", note=f"{BUCKETS_PER_DECADE} buckets per decade, "
                                  "from the engine's own latency bins"))
    return out


def bar_charts(runs: list[dict[str, Any]], rows: dict[str, list[Summary]],
               spreads: dict[str, dict[tuple[str, str], tuple[float, float]]]) -> list[str]:
    many = len(runs) > 1
    charts: dict[str, list[svg.Bar]] = {}
    for run in runs:
        for r in rows[run["id"]]:
            lo, hi = spreads[run["id"]].get((r.group_key, r.result.direction), (None, None))
            text = f"{count(r.result.iops)} IOPS · {count(r.result.bw_bytes_per_s / MIB, 1)} MiB/s"
            if r.n > 1:
                text += f" · n {r.n}" + (f", cv {100 * r.iops_cv:.1f}%" if r.iops_cv is not None else "")
            charts.setdefault(_title(r), []).append(svg.Bar(_where(r, many), r.result.iops, lo, hi, text))
    return [svg.bar_chart(f"{title}: IOPS (and MiB/s)", bars, "IOPS") for title, bars in charts.items()]


def sweep_charts(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> list[str]:
    many = len(runs) > 1
    groups: dict[tuple[str, str, str], list[Summary]] = {}
    for run in runs:
        for r in rows[run["id"]]:
            sweep = r.params.get("sweep")
            if sweep:
                groups.setdefault((f"{sweep['base']} {r.result.direction}", sweep["param"], _where(r, many)),
                                  []).append(r)
    out = []
    for (title, param, where), members in groups.items():
        if len(members) < 2:
            continue
        values = [m.params["sweep"]["value"] for m in members]
        numeric = all(isinstance(v, (int, float)) for v in values)
        order = sorted(range(len(members)), key=lambda i: values[i] if numeric else i)
        xs = [float(values[i]) if numeric else float(n) for n, i in enumerate(order)]
        iops = [members[i].result.iops for i in order]
        labels = [str(values[i]) for i in order]
        x = svg.Axis(min(xs) - 0.05 * (max(xs) - min(xs) or 1), max(xs) + 0.05 * (max(xs) - min(xs) or 1),
                     False, xs, labels)
        series = [svg.Series("IOPS", list(zip(xs, iops, strict=True)),
                             [f"{param}={lab}: {count(v)} IOPS" for lab, v in zip(labels, iops, strict=True)],
                             ", ".join(f"{lab}: {count(v)}" for lab, v in zip(labels, iops, strict=True)))]
        out.append(svg.line_chart(f"{title} on {where}: IOPS vs {param}", series, x, svg.value_axis(iops),
                                  param, "IOPS"))
        lat = [(members[i].result.iops, c.percentiles) for i in order if (c := members[i].result.clat)]
        lat_series = []
        for key in ("p50", "p99"):
            pts = sorted((a, p[key]) for a, p in lat if key in p)
            if pts:
                lat_series.append(svg.Series(key, pts, [f"{count(a)} IOPS: {key} {latency(b)}" for a, b in pts],
                                             ", ".join(latency(b) for _, b in pts)))
        if lat_series:
            all_iops = [a for s in lat_series for a, _ in s.points]
            out.append(svg.line_chart(f"{title} on {where}: latency vs IOPS", lat_series,
                                      svg.value_axis(all_iops, zero=False),
                                      svg.latency_axis([b for s in lat_series for _, b in s.points]),
                                      "IOPS", "latency"))
    return out


def mix_section(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> list[str]:
    """A read/write mix sweep as the NetApp article draws it: total IOPS and MiB/s against the read
    percentage (one line per workload), and mean latency over every I/O against total IOPS."""
    from .mixes import mix_charts

    out = []
    for run in runs:
        for chart in mix_charts(rows[run["id"]], run["id"] if len(runs) > 1 else "on"):
            lines = chart["lines"]
            xs = sorted({x for line in lines for x in line["x"]})
            x = svg.Axis(-5, 105, False, xs, [f"{v:g}" for v in xs])
            for key, unit, fmt in (("iops", "IOPS", count), ("mibs", "MiB/s", lambda v: f"{v:,.1f}")):
                series = [svg.Series(line["label"], list(zip(line["x"], line[key], strict=True)),
                                     [f"read {m:g}%: {fmt(v)} {unit}" for m, v in zip(line["x"], line[key],
                                                                                    strict=True)],
                                     ", ".join(fmt(v) for v in line[key])) for line in lines]
                out.append(svg.line_chart(f"{chart['title']}: total {unit} by read %", series, x,
                                          svg.value_axis([v for line in lines for v in line[key]]),
                                          "read % (rwmixread)", unit))
            lat = [svg.Series(line["label"], sorted((i, v) for i, v in zip(line["iops"], line["lat"], strict=True)
                                                    if v is not None))
                   for line in lines]
            lat = [s for s in lat if s.points]
            if lat:
                for s in lat:
                    s.tips = [f"{count(a)} IOPS: mean {latency(b)}" for a, b in s.points]
                    s.legend = ", ".join(latency(b) for _, b in s.points)
                out.append(svg.line_chart(f"{chart['title']}: mean latency vs total IOPS", lat,
                                          svg.value_axis([a for s in lat for a, _ in s.points], zero=False),
                                          svg.latency_axis([b for s in lat for _, b in s.points]),
                                          "total IOPS", "mean latency"))
    return out


def series_charts(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> list[str]:
    """IOPS, MiB/s and mean latency over the run, per interval, where the engine recorded them."""
    many = len(runs) > 1
    out = []
    for run in runs:
        for r in rows[run["id"]]:
            s = r.result.series
            if s is None or len(s.iops) < 2:
                continue
            t = [i * s.interval_s for i in range(len(s.iops))]
            x = svg.value_axis(t, fmt=lambda v: f"{v:g} s")
            title = f"{_title(r)} on {_where(r, many)}"
            mean = sum(s.iops) / len(s.iops)
            iops = svg.Series("IOPS", list(zip(t, s.iops, strict=True)), legend=(
                f"mean {count(mean)}, min {count(min(s.iops))}, max {count(max(s.iops))} ({s.source})"))
            caps = [svg.Series(lim.label(), [(t[0], lim.value), (t[-1], lim.value)], legend=count(lim.value),
                               dashed=True)
                    for lim in limits_of(r.result.bound or {})
                    if lim.metric == "iops" and lim.applies_to(r.result.direction)]
            charts = [([iops, *caps], svg.value_axis([*s.iops, *(c.points[0][1] for c in caps)]), "IOPS")]
            if s.bw_bytes_per_s:
                mibs = [v / MIB for v in s.bw_bytes_per_s]
                charts.append(([svg.Series("MiB/s", list(zip(t, mibs, strict=True)), legend=(
                    f"mean {count(sum(mibs) / len(mibs), 1)}, min {count(min(mibs), 1)}, max {count(max(mibs), 1)}"))],
                    svg.value_axis(mibs), "MiB/s"))
            if s.lat_mean_us:
                pts = [(a, b) for a, b in zip(t, s.lat_mean_us, strict=False) if b is not None]
                if len(pts) > 1:
                    vals = [b for _, b in pts]
                    charts.append(([svg.Series("mean latency", pts, legend=(
                        f"min {latency(min(vals))}, max {latency(max(vals))}"))], svg.latency_axis(vals), "latency"))
            note = (r.result.bound or {}).get("text", "")
            for series, y, name in charts:
                out.append(svg.line_chart(f"{title}: {name} over time", series, x, y,
                                          f"time (s, every {s.interval_s:g} s)", name,
                                          note=note if name == "IOPS" else ""))
    return out


def _time_axis(stamps: list[float]) -> svg.Axis:
    lo, hi = min(stamps), max(stamps)
    pad = (hi - lo) * 0.04 or 3600
    picks = [lo + i * (hi - lo) / 4 for i in range(5)] if len(stamps) > 5 and hi > lo else stamps
    days = {datetime.fromtimestamp(t).date() for t in stamps}
    fmt = "%H:%M" if len(days) == 1 else "%m-%d %H:%M" if hi - lo < 4 * 86400 else \
        "%m-%d" if len({d.year for d in days}) == 1 else "%Y-%m-%d"
    labels = [datetime.fromtimestamp(t).strftime(fmt) for t in picks]
    return svg.Axis(lo - pad, hi + pad, False, list(picks), labels)


def _band(values: list[float], accepted: list[bool], threshold: float,
          policy: Policy) -> tuple[float, float, float, int] | None:
    """The gate's band as the newest point is judged: accepted runs before it, newest first."""
    base = [v for v, ok in zip(values[:-1], accepted[:-1], strict=True)
            if ok and not math.isnan(v)][-policy.baseline_runs:]
    if len(base) < 2:
        return None
    m = median(base)
    width = max(threshold * abs(m), 3 * MAD_SCALE * mad(base))
    return m - width, m + width, m, len(base)


def history_charts(hist: dict[tuple[str, str], list[Any]], policy: Policy) -> list[str]:
    out = []
    for (job, direction), points in hist.items():
        if len(points) < 2:
            continue
        stamps = [datetime.fromisoformat(p.started).timestamp() for p in points]
        x = _time_axis(stamps)
        accepted = [p.verdict is None or p.verdict in ACCEPTED for p in points]
        for metric, name, fmt in (("iops", "IOPS", count), ("p99", "p99 latency", latency)):
            vals = [p.values[metric] for p in points]
            pts = [(t, v) for t, v in zip(stamps, vals, strict=True) if v is not None]
            if len(pts) < 2:
                continue
            tips = [f"{p.run_id} ({p.started[:16].replace('T', ' ')}): {fmt(p.values[metric])}"
                    + (f", gate {p.verdict}" if p.verdict else "") for p in points if p.values[metric] is not None]
            last = points[-1]
            series = [svg.Series(name, pts, tips, f"latest {fmt(pts[-1][1])} (run {last.run_id}); "
                                 f"first {fmt(pts[0][1])} (run {points[0].run_id})")]
            threshold = policy.thresholds.get(metric) or 0.1
            found = _band([v if v is not None else math.nan for v in vals], accepted, threshold, policy)
            extra, note, key = None, "no gate band: fewer than two accepted earlier runs", []
            axis_values = [v for _, v in pts]
            if found:
                lo, hi, mid, n = found
                label = f"baseline median {fmt(mid)} (dashed), pass from {fmt(lo)} to {fmt(hi)}, n {n}"
                extra, note, key = svg.band(lo, hi, mid, label), "", [("#2ca02c55", "gate band", label)]
                axis_values += [lo, hi]
            y = svg.latency_axis(axis_values) if metric == "p99" else svg.value_axis(axis_values)
            out.append(svg.line_chart(f"{job} {direction}: {name} by date", series, x, y, "run date",
                                      name, extra=extra, note=note, extra_legend=key))
    return out


def _table(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> list[dict[str, Any]]:
    """Rows under one heading per run, machine and target."""
    out: list[dict[str, Any]] = []
    for run in runs:
        last = None
        for r in sorted(rows[run["id"]], key=lambda r: (r.host, r.target)):
            group = (f"{run['id']} · " if len(runs) > 1 else "") + _place(r)
            if group != last:
                out.append({"group": group})
                last = group
            pct = r.result.clat.percentiles if r.result.clat else {}
            mark = "" if not r.result.clat or r.result.clat.exact else "~"
            out.append({"workload": r.workload, "direction": r.result.direction, "iops": count(r.result.iops),
                        "mibs": count(r.result.bw_bytes_per_s / MIB, 1), "n": r.n,
                        "cv": "-" if r.iops_cv is None else f"{100 * r.iops_cv:.1f}%",
                        "pct": [mark + latency(pct.get(pkey(p))) for p in TABLE_PERCENTILES],
                        "errors": r.errors, "bound": tag(r.result.bound) or "-",
                        "bound_text": (r.result.bound or {}).get("text", ""), "warnings": r.result.warnings})
    return out


def _metadata(store: Store, runs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Per run: facts, profile, job files; identical texts are stored once (keyed by hash)."""
    texts: dict[str, str] = {}

    def keep(text: str | None) -> str | None:
        if not text:
            return None
        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        texts[digest] = text
        return digest

    meta = []
    for run in runs:
        jobs = [{"key": j["key"], "status": j["status"], "message": j["message"], "file": keep(j["rendered"])}
                for j in store.get_jobs(run["id"])]
        facts = {k: v for k, v in run["facts"].items() if k != "block_devices"}
        meta.append({"id": run["id"], "profile": run["profile"], "status": run["status"],
                     "started": run["started"], "finished": run["finished"], "verdict": run.get("verdict"),
                     "fio": run["facts"].get("fio_version"), "facts": json.dumps(facts, indent=1, default=str),
                     "profile_text": keep(run.get("profile_text")), "jobs": jobs})
    return meta, texts


def build_report(store: Store, run_refs: Sequence[str], *, with_history: bool = True,
                 policy: Policy | None = None) -> str:
    runs = [store.get_run(ref) for ref in run_refs]
    raw = {run["id"]: store.get_results(run["id"]) for run in runs}
    rows = {rid: summarize(rs) for rid, rs in raw.items()}
    spreads = {rid: _spread(rs) for rid, rs in raw.items()}
    wanted = {(r.group_key, r.result.direction) for rs in rows.values() for r in rs}
    hist = {}
    if with_history:
        hist = {k: v for k, v in history(store, last=HISTORY_RUNS).items() if k in wanted}
    sections = [
        ("latency", "Latency percentiles",
         "One line per machine and storage target; the x axis is spaced by nines, so p99, p99.9 and "
         "p99.99 are evenly apart and the tail is as wide as the middle.", latency_charts(runs, rows)),
        ("histogram", "Latency histograms", "", histogram_charts(store, runs, rows, raw)),
        ("throughput", "IOPS and throughput",
         "One bar per machine and storage target: the median over repetitions, whiskers from the smallest "
         "to the largest.", bar_charts(runs, rows, spreads)),
        ("timeline", "Over time", "Per-interval figures of each job, as the engine logged them; dashed "
         "lines are the published caps the result was compared with.",
         series_charts(runs, rows)),
        ("sweeps", "Sweeps", "", sweep_charts(runs, rows)),
        ("mixes", "Read/write mix",
         "Total IOPS and MiB/s (read + write) against the read percentage, one line per workload; mean "
         "latency over every I/O against total IOPS. A client group's merged rows appear under the "
         "group's name.", mix_section(runs, rows)),
        ("history", "History",
         "Each job's stored runs by date; the shaded band is where the gate would let the newest run pass.",
         history_charts(hist, policy or Policy())),
    ]
    meta, texts = _metadata(store, runs)
    env = environment(html=True)
    return env.get_template("report/report.html.j2").render(
        version=__version__, runs=runs, table=_table(runs, rows), meta=meta, texts=texts,
        table_percentiles=[pkey(p) for p in TABLE_PERCENTILES],
        sections=[s for s in sections if s[3]],
    )
