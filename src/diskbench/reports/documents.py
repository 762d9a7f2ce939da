"""What the data commands print as JSON (one document kind each, ``diskbench.<kind>/1``, with a
JSON Schema in ``diskbench/schemas``) and as CSV where the data is a table.

Scripts read these instead of tables: every number is a number (microseconds, bytes per second,
seconds), every name is whole, and a document says which kind and version it is.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..api import Explanation
    from ..check import Check
    from .compare import CompareRow, HistoryPoint


def dumps(doc: dict[str, Any]) -> str:
    """A document as the commands print it: indented, strict JSON (no NaN), one trailing newline."""
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def to_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A table of documents as CSV: a header, then one line per row (lists joined with '; ')."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["; ".join(map(str, v)) if isinstance(v, list) else ("" if v is None else v)
                         for v in (row.get(c) for c in columns)])
    return buf.getvalue()


RUN_COLUMNS = ("id", "profile", "origin", "started", "finished", "status", "jobs_done", "jobs", "host", "verdict")


def run_rows(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored runs as rows: their counts of jobs, the host they ran on, and the VM-minutes and money
    of the machines a provider created for them."""
    return [{"id": r["id"], "profile": r["profile"], "origin": r["origin"], "started": r["started"],
             "finished": r.get("finished"), "status": r["status"], "jobs_done": r["job_counts"].get("done", 0),
             "jobs": sum(r["job_counts"].values()), "job_counts": r["job_counts"],
             "host": r["facts"].get("hostname") or ", ".join(r["facts"].get("hosts", {})) or None,
             "verdict": r.get("verdict"), **_spent(r["facts"].get("machine_use") or [])} for r in runs]


def _spent(uses: list[dict[str, Any]]) -> dict[str, float | None]:
    """The VM-minutes and money of the machines a provider created for the run (None: it created none;
    money None: one of them has no price)."""
    if not uses:
        return {"vm_minutes": None, "usd": None}
    usd = [u.get("usd") for u in uses]
    return {"vm_minutes": round(sum(float(u.get("vm_minutes") or 0.0) for u in uses), 3),
            "usd": None if None in usd else round(sum(float(x or 0.0) for x in usd), 4)}


def runs_json(store: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schema": "diskbench.runs/1", "store": store, "runs": run_rows(runs)}


HISTORY_COLUMNS = ("job", "direction", "run", "started", "verdict", "n", "iops", "bw_bytes_per_s", "p50_us",
                   "p99_us")


def history_rows(found: dict[tuple[str, str], list[HistoryPoint]]) -> list[dict[str, Any]]:
    return [{"job": job, "direction": direction, "run": p.run_id, "started": p.started, "verdict": p.verdict,
             "n": p.n, "iops": p.values.get("iops"), "bw_bytes_per_s": p.values.get("bw"),
             "p50_us": p.values.get("p50"), "p99_us": p.values.get("p99")}
            for (job, direction), points in found.items() for p in points]


def history_json(found: dict[tuple[str, str], list[HistoryPoint]]) -> dict[str, Any]:
    return {"schema": "diskbench.history/1", "points": history_rows(found)}


def compare_json(runs: list[dict[str, Any]], rows: list[CompareRow]) -> dict[str, Any]:
    return {"schema": "diskbench.compare/1", "runs": [r["id"] for r in runs], "rows": [asdict(r) for r in rows]}


def explain_json(run_id: str, explanations: Sequence[Explanation]) -> dict[str, Any]:
    """Each result's explanation: its bound as stored, its warnings, what its job spent on machines a
    provider created (null: none), and the lines ``explain`` prints."""
    return {"schema": "diskbench.explain/1", "run": run_id,
            "results": [{"job": e.result.group_key, "workload": e.result.workload, "target": e.result.target,
                         "host": e.result.host, "direction": e.result.result.direction, "bound": e.result.result.bound,
                         "warnings": e.result.result.warnings, "stop": e.result.stop,
                         "spent": None if e.spent is None else e.spent.to_json(), "lines": e.lines}
                        for e in explanations]}


CHECK_COLUMNS = ("name", "ok", "optional", "detail", "fix")


def doctor_json(checks: list[Check]) -> dict[str, Any]:
    return {"schema": "diskbench.doctor/1", "ok": all(c.ok or c.optional for c in checks),
            "checks": [asdict(c) for c in checks]}


PROFILE_COLUMNS = ("name", "description", "path", "error")


def profiles_json(profiles: list[dict[str, str]]) -> dict[str, Any]:
    return {"schema": "diskbench.profiles/1", "profiles": profiles}
