"""One self-contained HTML report: what went wrong first, then tables and static charts.

The page opens with a verdict box (``verdict.py``): each run's status, its errors with hints, the
gate's verdict and each suspect metric. Then the summary table, then the charts, drawn here
(``charts.py``, ``timeline.py``, ``knees.py``, ``sweeps.py``, ``trend.py`` on ``svg.py``) so that each one
shows its numbers in a legend without a hover, fits an 800 px window, and opens offline; runs,
places and repetitions of one job share its charts. The one inline script only saves a chart as
SVG or PNG: nothing loads from elsewhere. Sections with nothing to show are left out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from ..attribution.record import tag
from ..attribution.stop_rule import Decision
from ..model import TABLE_PERCENTILES, pkey
from ..resources import environment, templates_dir
from ..store import Store, StoredResult
from ..units import latency
from ..version import __version__
from .charts import MIB, bar_charts, histogram_charts, latency_charts, place, spread
from .compare import history
from .formats import repeat_stops
from .gate import Policy
from .knees import knee_charts
from .stats import Summary, summarize
from .sweeps import mix_section, sweep_charts
from .textable import count
from .timeline import series_charts
from .trend import history_charts
from .verdict import verdict_box

HISTORY_RUNS = 60


def _table(runs: list[dict[str, Any]], rows: dict[str, list[Summary]]) -> list[dict[str, Any]]:
    """Rows under one heading per run, machine and target."""
    out: list[dict[str, Any]] = []
    for run in runs:
        last = None
        stops = {job: text for job, (_label, text) in repeat_stops(run).items()}
        for r in sorted(rows[run["id"]], key=lambda r: (r.host, r.target)):
            group = (f"{run['id']} · " if len(runs) > 1 else "") + place(r)
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
                        "bound_text": (r.result.bound or {}).get("text", ""), "warnings": r.result.warnings,
                        "stop": Decision.from_json(r.stop).text() if r.stop else "",
                        # --repeats auto: said under the job's first row (its other directions share it)
                        "repeats": f"repeats auto: {stops.pop(r.group_key)}" if r.group_key in stops else ""})
    return out


def _metadata(runs: list[dict[str, Any]], jobs: dict[str, list[dict[str, Any]]],
              raw: dict[str, list[StoredResult]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
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
        listed = [{"key": j["key"], "status": j["status"], "message": j["message"], "file": keep(j["rendered"])}
                  for j in jobs[run["id"]]]
        facts = {k: v for k, v in run["facts"].items() if k != "block_devices"}
        engines = sorted({f"{r.engine} {r.engine_version}".strip() for r in raw[run["id"]]})
        meta.append({"id": run["id"], "profile": run["profile"], "status": run["status"],
                     "started": run["started"], "finished": run["finished"], "verdict": run.get("verdict"),
                     "engines": engines, "facts": json.dumps(facts, indent=1, default=str),
                     "profile_text": keep(run.get("profile_text")), "jobs": listed})
    return meta, texts


def _sections(store: Store, runs: list[dict[str, Any]], raw: dict[str, list[StoredResult]],
              rows: dict[str, list[Summary]], hist: dict[tuple[str, str], list[Any]],
              policy: Policy) -> list[tuple[str, str, str, list[str]]]:
    """(id, heading, introduction, charts) of each chart section, in the page's order."""
    spreads = {rid: spread(rs) for rid, rs in raw.items()}
    return [
        ("latency", "Latency percentiles",
         "One chart per job, one line per run and storage target; the x axis is spaced by nines, so p99, "
         "p99.9 and p99.99 are evenly apart and the tail is as wide as the middle.", latency_charts(runs, rows)),
        ("histogram", "Latency histograms", "", histogram_charts(store, runs, rows, raw)),
        ("throughput", "IOPS and throughput",
         "One bar per run and storage target: the median over repetitions, whiskers from the smallest "
         "to the largest.", bar_charts(runs, rows, spreads)),
        ("timeline", "Over time", "Per-interval figures of each job as the engine logged them, one chart per "
         "job and metric: a colour per run and storage target, its repetitions solid, dashed and dotted; "
         "grey dashed lines are the published caps the result was compared with.", series_charts(runs, raw)),
        ("knees", "Knee of the latency curve",
         "Each iodepth: auto search: p50 (solid) and p99 (dashed) against IOPS, each point labelled with its "
         "queue depth, the knee marked and the p99 limit drawn when one was given; below each chart, what the "
         "search found, and where a failure or Ctrl-C cut it short. Every step is also a row of the table "
         "and a point of the sweep charts.",
         knee_charts(runs)),
        ("sweeps", "Sweeps", "", sweep_charts(runs, rows)),
        ("mixes", "Read/write mix",
         "Total IOPS and MiB/s (read + write) against the read percentage, one line per workload; mean "
         "latency over every I/O against total IOPS. A client group's merged rows appear under the "
         "group's name.", mix_section(runs, rows)),
        ("history", "History",
         "Each job's stored runs by date; the shaded band is where the gate would let the newest run pass.",
         history_charts(hist, policy)),
    ]


def build_report(store: Store, run_refs: Sequence[str], *, with_history: bool = True,
                 policy: Policy | None = None) -> str:
    """The report of these runs as one HTML page (``policy``: the gate's, for bands and verdicts)."""
    runs = [store.get_run(ref) for ref in run_refs]
    raw = {run["id"]: store.get_results(run["id"]) for run in runs}
    jobs = {run["id"]: store.get_jobs(run["id"]) for run in runs}
    rows = {rid: summarize(rs) for rid, rs in raw.items()}
    wanted = {(r.group_key, r.result.direction) for rs in rows.values() for r in rs}
    hist = {}
    if with_history:
        hist = {k: v for k, v in history(store, last=HISTORY_RUNS).items() if k in wanted}
    sections = _sections(store, runs, raw, rows, hist, policy or Policy())
    meta, texts = _metadata(runs, jobs, raw)
    env = environment("report", escape=True)
    return env.get_template("report.html.j2").render(
        version=__version__, runs=runs, box=verdict_box(store, runs, jobs, raw, policy), table=_table(runs, rows),
        meta=meta, texts=texts, table_percentiles=[pkey(p) for p in TABLE_PERCENTILES],
        sections=[s for s in sections if s[3]],
        script=(templates_dir() / "report" / "save.js").read_text(encoding="utf-8"),
    )
