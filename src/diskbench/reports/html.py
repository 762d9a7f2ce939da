"""One self-contained HTML report: tables, and charts drawn by a vendored uPlot (no CDN)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..attribution.record import limits_of, tag
from ..model import PERCENTILES, TABLE_PERCENTILES, pkey
from ..resources import environment, templates_dir
from ..store import Store
from .compare import METRICS, history
from .formats import NOT_REMOTE
from .stats import Summary, summarize

MIB = 1024.0 * 1024.0
HISTORY_RUNS = 60


def _where(r: Summary, many_runs: bool) -> str:
    place = r.target if r.host in NOT_REMOTE else f"{r.host}/{r.target}"
    return f"{r.run_id[-9:]} {place}" if many_runs else place


def _workload_label(r: Summary) -> str:
    sweep = r.params.get("sweep")
    return f"{sweep['base']} [{sweep['param']}]" if sweep else r.workload


def build_data(runs: list[dict[str, Any]], rows: dict[str, list[Summary]],
               hist: dict[tuple[str, str], list[Any]]) -> dict[str, Any]:
    many = len(runs) > 1
    latency: dict[str, dict[str, Any]] = {}
    bars: dict[str, dict[str, Any]] = {}
    sweeps: dict[str, dict[str, Any]] = {}
    for run in runs:
        for r in rows[run["id"]]:
            title = f"{r.workload} {r.result.direction}"
            if r.result.clat and r.result.clat.percentiles:
                chart = latency.setdefault(title, {"title": title, "series": []})
                chart["series"].append({"label": _where(r, many),
                                        "values": [r.result.clat.percentiles.get(pkey(p)) for p in PERCENTILES]})
            bar = bars.setdefault(title, {"title": title, "labels": [], "iops": [], "mibs": []})
            bar["labels"].append(_where(r, many))
            bar["iops"].append(round(r.result.iops, 1))
            bar["mibs"].append(round(r.result.bw_bytes_per_s / MIB, 2))
            sweep = r.params.get("sweep")
            if sweep:
                key = f"{sweep['base']} {r.result.direction} {sweep['param']} {_where(r, many)}"
                s = sweeps.setdefault(key, {"title": f"{sweep['base']} {r.result.direction}: "
                                                     f"{_where(r, many)}", "param": sweep["param"], "points": []})
                pct = r.result.clat.percentiles if r.result.clat else {}
                s["points"].append({"value": sweep["value"], "iops": r.result.iops,
                                    "mibs": r.result.bw_bytes_per_s / MIB, "p50": pct.get("p50"),
                                    "p99": pct.get("p99")})
    history_charts = []
    timeseries = [ts for run in runs for r in rows[run["id"]] if (ts := _timeseries(r, many))]
    for (job, direction), points in hist.items():
        if len(points) < 2:
            continue
        history_charts.append({"title": f"{job} {direction}", "runs": [p.run_id for p in points],
                               "t": [p.started for p in points],
                               "iops": [p.values["iops"] for p in points],
                               "p99": [p.values["p99"] for p in points]})
    return {"percentiles": [pkey(p) for p in PERCENTILES], "latency": list(latency.values()),
            "bars": list(bars.values()), "sweeps": list(sweeps.values()), "history": history_charts,
            "timeseries": timeseries}


def _timeseries(r: Summary, many: bool) -> dict[str, Any] | None:
    """IOPS per second, with a dashed line at each IOPS cap the result was compared with."""
    series = r.result.series
    if series is None or not series.iops:
        return None
    bound = r.result.bound or {}
    caps = [{"label": lim.label(), "value": lim.value} for lim in limits_of(bound)
            if lim.metric == "iops" and lim.applies_to(r.result.direction)]
    return {"title": f"{r.workload} {r.result.direction}: {_where(r, many)}", "bound": bound.get("text", ""),
            "t": [round(i * series.interval_s, 3) for i in range(1, len(series.iops) + 1)],
            "iops": series.iops, "caps": caps}


def _table(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> list[dict[str, Any]]:
    out = []
    for run in runs:
        for r in rows[run["id"]]:
            pct = r.result.clat.percentiles if r.result.clat else {}
            out.append({"run": run["id"], "machine": r.host, "target": r.target, "workload": r.workload,
                        "direction": r.result.direction, "iops": r.result.iops,
                        "mibs": r.result.bw_bytes_per_s / MIB, "n": r.n, "cv": r.iops_cv,
                        "pct": [pct.get(pkey(p)) for p in TABLE_PERCENTILES],
                        "exact": r.result.clat.exact if r.result.clat else True, "errors": r.errors,
                        "bound": tag(r.result.bound), "bound_text": (r.result.bound or {}).get("text", ""),
                        "warnings": r.result.warnings})
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


def build_report(store: Store, run_refs: Sequence[str], *, with_history: bool = True) -> str:
    runs = [store.get_run(ref) for ref in run_refs]
    rows = {run["id"]: summarize(store.get_results(run["id"])) for run in runs}
    wanted = {(r.group_key, r.result.direction) for rs in rows.values() for r in rs}
    hist = {}
    if with_history:
        hist = {k: v for k, v in history(store, last=HISTORY_RUNS).items() if k in wanted}
    data = build_data(runs, rows, hist)
    meta, texts = _metadata(store, runs)
    assets = templates_dir() / "report"
    env = environment(html=True)
    return env.get_template("report/report.html.j2").render(
        version=__version__, runs=runs, table=_table(runs, rows), meta=meta, texts=texts,
        table_percentiles=[pkey(p) for p in TABLE_PERCENTILES], metrics=METRICS,
        data_json=json.dumps(data, separators=(",", ":"), default=str).replace("</", "<\\/"),
        uplot_js=(assets / "uPlot.iife.min.js").read_text(), uplot_css=(assets / "uPlot.min.css").read_text(),
    )
