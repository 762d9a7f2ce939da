"""Stored results -> table, JSON (schema diskbench.results/1), Markdown, CSV."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from ..attribution.knee import FACTS as KNEES
from ..attribution.record import tag
from ..model import PERCENTILES, TABLE_PERCENTILES, Latency, pkey
from ..store import StoredResult
from ..text import printable
from ..units import latency
from .knees import knee_json, knee_lines, knee_markdown
from .stats import Summary, summarize
from .textable import Col, TextTable, count

SCHEMA = "diskbench.results/1"
FORMATS = ("table", "json", "markdown", "csv")
MIB = 1024.0 * 1024.0
NOT_REMOTE = ("local", "imported")  # hosts shown without a host prefix
_RUN_KEYS = ("id", "profile", "origin", "started", "finished", "status")
REPEATS = "repeats"  # the run's facts: automatic repeats, one entry per job that stopped


def result_json(r: StoredResult) -> dict[str, Any]:
    d = r.result
    out = {
        "job": r.job_key, "workload": r.workload, "target": r.target, "host": r.host,
        "engine": r.engine, "engine_version": r.engine_version, "jobs": r.jobs, "repeat": r.repeat,
        "direction": d.direction, "iops": _r(d.iops, 6), "bw_bytes_per_s": _r(d.bw_bytes_per_s, 3),
        "ios": d.ios, "io_bytes": d.io_bytes, "runtime_s": _r(d.runtime_s, 3),
        "clat_us": _clat_json(d.clat) if d.clat else None,
        "errors": r.errors, "notes": r.notes,
        "bound": d.bound, "warnings": d.warnings, "series": d.series.to_json() if d.series else None,
        "stop": r.stop,
    }
    if isinstance(r, Summary):
        out.update(job=r.group_key, n=r.n, iops_cv=r.iops_cv)
        del out["repeat"]
    if r.params.get("sweep"):
        out["sweep"] = r.params["sweep"]
    return out


def _r(value: float, digits: int) -> float:
    """A float rounded to what was measured (fio counts ns and ms): no ``741.3760000000001``."""
    return round(value, digits) if isinstance(value, float) else value


def _clat_json(clat: Latency) -> dict[str, Any]:
    out = clat.to_json()
    out.pop("bin_ns", None)  # the store's business (how to read its histograms), not a latency
    for k, v in out.items():
        if isinstance(v, float):
            out[k] = _r(v, 6 if k in ("mean", "stdev") else 3)  # µs from ns; fio's means carry decimals
    return out


def to_json(run: dict[str, Any], results: Sequence[StoredResult]) -> str:
    facts = run.get("facts", {})
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "run": {**{k: run.get(k) for k in _RUN_KEYS},
                "host": {k: v for k, v in facts.items() if k not in ("machine_use", REPEATS, KNEES)},
                "targets": run.get("targets", {}), "options": run.get("options", {}),
                "machines": facts.get("machine_use", [])},
        "results": [result_json(r) for r in results],
    }
    if facts.get(REPEATS):  # --repeats auto: how many repeats each job took and why it stopped
        doc["run"]["repeats"] = facts[REPEATS]
    if knee_json(run):  # iodepth: auto: each search's curve, knee, highest IOPS and highest under the p99 limit
        doc["run"]["knees"] = knee_json(run)
    if any(r.repeat > 1 for r in results):
        doc["summary"] = [result_json(r) for r in summarize(results)]
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def _fmt(value: float | None, digits: int = 1) -> str:
    return count(value, digits)


def _has_repeats(rows: Sequence[StoredResult]) -> bool:
    return any(isinstance(r, Summary) and r.n > 1 for r in rows)


def _columns(results: Sequence[StoredResult]) -> tuple[bool, bool]:
    remote = any(r.host not in NOT_REMOTE for r in results)
    many_targets = len({(r.host, r.target) for r in results}) > 1 or remote
    inexact = any(r.result.clat and not r.result.clat.exact for r in results)
    return many_targets, inexact


def _where(r: StoredResult) -> str:
    return r.target if r.host in NOT_REMOTE else f"{r.host}:{r.target}"


def _bounds(rows: Sequence[StoredResult]) -> bool:
    return any(r.result.bound for r in rows)


def _warnings(rows: Sequence[StoredResult]) -> list[str]:
    """``workload dir: warning`` lines, each once."""
    return list(dict.fromkeys(f"{r.workload} {r.result.direction}: {w}" for r in rows for w in r.result.warnings))


def _row(r: StoredResult, with_target: bool, repeats: bool = False) -> list[str]:
    d = r.result
    pct = d.clat.percentiles if d.clat else {}
    row = [r.workload]
    if with_target:
        row.append(_where(r))
    mark = "" if not d.clat or d.clat.exact else "~"
    row += [d.direction, _fmt(d.iops, 0), _fmt(d.bw_bytes_per_s / MIB, 1)]
    row += [mark + latency(pct.get(pkey(p))) for p in TABLE_PERCENTILES]
    if repeats and isinstance(r, Summary):
        row += [str(r.n), "-" if r.iops_cv is None else f"{100 * r.iops_cv:.1f}%"]
    return row


def _bound_cell(r: StoredResult) -> list[str]:
    return [tag(r.result.bound) or "-"]


def _headers(with_target: bool, repeats: bool = False) -> list[str]:
    head = ["workload"] + (["target"] if with_target else []) + ["dir", "IOPS", "MiB/s"]
    return head + [pkey(p) for p in TABLE_PERCENTILES] + (["n", "IOPS cv"] if repeats else [])


# Which percentiles give way first when a table does not fit (higher drops first): p95 and p90
# sit between p50 and p99 and add least; p99.99 is the least stable of the tail.
DROP_ORDER = {"p95": 3, "p90": 2, "p99.99": 1}


def _title(run: dict[str, Any], results: Sequence[StoredResult]) -> str:
    facts = run.get("facts", {})
    host = facts.get("hostname") or ", ".join(facts.get("hosts", {})) or "-"
    targets = sorted({r.target for r in results})
    where = f" · target {targets[0]}" if len(targets) == 1 else ""
    return f"run {run['id']} · {run['profile']} · {run['status']} · {host}{where}"


def to_table(run: dict[str, Any], results: Sequence[StoredResult]) -> TextTable:
    """Rows grouped under one line per machine and target; latencies with their unit."""
    rows = summarize(results)
    grouped, inexact = _columns(rows)
    repeats = _has_repeats(rows)
    cols = [Col("workload", shrink=True, min_width=8), Col("dir", min_width=3), Col("IOPS", right=True),
            Col("MiB/s", right=True)]
    cols += [Col(pkey(p), right=True, drop=DROP_ORDER.get(pkey(p), 0)) for p in TABLE_PERCENTILES]
    if repeats:
        cols += [Col("n", right=True), Col("IOPS cv", right=True)]
    bounds = _bounds(rows)
    if bounds:
        cols.append(Col("bound", shrink=True, min_width=5))
    table = TextTable(cols, title=_title(run, results), more="a wider terminal or --format csv shows them")
    last: str | None = None
    for r in sorted(rows, key=lambda r: (r.host, r.target)) if grouped else rows:
        if grouped and _where(r) != last:
            last = _where(r)
            table.add_group(last)
        cells = _row(r, False, repeats)
        table.add_row(*cells, *(_bound_cell(r) if bounds else []))
    if inexact:
        table.caption.append("~ percentiles not merged exactly (no latency bins in the fio output)")
    table.caption += repeat_lines(run)
    table.caption += knee_lines(run)
    table.caption += sorted({e for r in results for e in r.errors})
    table.caption += [f"! {w}" for w in _warnings(rows)]
    return table


STOPPED = {"decisive": "{verdict}, decided", "limit": "still INCONCLUSIVE at the limit",
           "no baseline": "no baseline yet ({detail})",
           "noisy baseline": "INCONCLUSIVE: its baseline is too noisy to decide", "failed": "a repeat failed"}


def repeat_stops(run: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Automatic repeats per job (its base key): its short label and ``5 repeats, PASS, decided``; every
    report says a job's stop in these words (table, Markdown, CSV, HTML)."""
    stops = run.get("facts", {}).get(REPEATS) or []
    names = [str(s["job"]).rsplit("/", 1)[-1] for s in stops]
    out = {}
    for stop, name in zip(stops, names, strict=True):
        detail = stop.get("detail") or "too few earlier runs"
        why = STOPPED.get(stop["stopped"], stop["stopped"]).format(verdict=stop["verdict"], detail=detail)
        label = name if names.count(name) == 1 else str(stop["job"])
        out[str(stop["job"])] = (label, f"{stop['repeats']} repeats, {why}")
    return out


def repeat_lines(run: dict[str, Any]) -> list[str]:
    """Automatic repeats, one line per job: how many it took and why it stopped."""
    return [f"repeats auto: {label}: {text}" for label, text in repeat_stops(run).values()]


def to_markdown(run: dict[str, Any], results: Sequence[StoredResult]) -> str:
    rows = summarize(results)
    with_target, inexact = _columns(rows)
    repeats = _has_repeats(rows)
    bounds = _bounds(rows)
    head = _headers(with_target, repeats) + (["bound"] if bounds else [])
    lines = [f"### {_title(run, results)}", "", "| " + " | ".join(head) + " |",
             "|" + "|".join("---" if i < 2 + with_target or (bounds and i == len(head) - 1) else "---:"
                            for i in range(len(head))) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in _row(r, with_target, repeats) + (_bound_cell(r) if bounds else []))
              + " |" for r in rows]
    if inexact:
        lines += ["", "~ percentiles not merged exactly (no latency bins in the fio output)"]
    for err in sorted({e for r in results for e in r.errors}):
        lines += ["", f"**error:** {err}"]
    bound_texts = [f"{r.workload}: {r.result.bound['text']}" for r in rows if r.result.bound]
    lines += ["", "**bound:**", ""] + [f"- {t}" for t in bound_texts] if bound_texts else []
    lines += ["", "**warnings:**", ""] + [f"- {w}" for w in _warnings(rows)] if _warnings(rows) else []
    lines += knee_markdown(run)  # iodepth: auto: what each search found, and where one was cut short
    stops = [f"- {_md_cell(label)}: {text}" for label, text in repeat_stops(run).values()]
    lines += ["", "**repeats auto** (how many each job took, and why it stopped):", ""] + stops if stops else []
    return printable("\n".join(lines), keep_newlines=True) + "\n"  # names from imported files are anyone's


def _md_cell(text: str) -> str:
    """A table cell: one line, its pipes escaped (a job name from an imported file can hold both)."""
    return printable(text).replace("|", "\\|")


CSV_FIELDS = (
    ["run_id", "job", "repeat", "workload", "target", "host", "engine", "engine_version", "direction",
     "iops", "bw_bytes_per_s", "ios", "io_bytes", "runtime_s", "clat_min_us", "clat_mean_us",
     "clat_max_us", "clat_stdev_us", "clat_samples"]
    + [f"clat_{pkey(p)}_us" for p in PERCENTILES]
    + ["percentiles_exact", "errors", "bound", "bound_ratio", "bound_text", "warnings"]
    + ["auto_repeats", "auto_stopped", "auto_verdict"]  # --repeats auto: the job's stop (empty without)
)


def to_csv(run: dict[str, Any], results: Sequence[StoredResult]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    stops = {str(s["job"]): s for s in run.get("facts", {}).get(REPEATS) or []}
    for r in results:
        d, c = r.result, r.result.clat
        row: list[Any] = [run["id"], r.group_key, r.repeat, r.workload, r.target, r.host, r.engine,
                          r.engine_version, d.direction, _r(d.iops, 6), _r(d.bw_bytes_per_s, 3), d.ios,
                          d.io_bytes, _r(d.runtime_s, 3)]
        cj = _clat_json(c) if c else {}
        row += [cj[k] for k in ("min", "mean", "max", "stdev", "samples")] if c else [""] * 5
        row += [cj.get(pkey(p), "") for p in PERCENTILES]
        row += [c.exact if c else "", "; ".join(r.errors)]
        b = d.bound or {}
        row += [b.get("kind", ""), "" if b.get("ratio") is None else b["ratio"], b.get("text", ""),
                "; ".join(d.warnings)]
        stop = stops.get(r.group_key, {})
        row += [stop.get("repeats", ""), stop.get("stopped", ""), stop.get("verdict", "")]
        writer.writerow(row)
    return buf.getvalue()


def format_results(fmt: str, run: dict[str, Any], results: Sequence[StoredResult]) -> str | TextTable:
    if fmt == "table":
        return to_table(run, results)
    return {"json": to_json, "markdown": to_markdown, "csv": to_csv}[fmt](run, results)
