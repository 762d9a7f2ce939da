"""Runs side by side, and one job's values over time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..store import Store
from .gate import HIGHER_IS_BETTER, metric_value
from .stats import Summary, summarize

METRICS = ("iops", "bw", "p50", "p99")


@dataclass
class CompareRow:
    job: str
    direction: str
    metric: str
    values: list[float | None]
    ratios: list[float | None]
    noise: list[float | None]  # relative noise (CV) of each run's repeats
    samples: list[int]
    significant: list[bool | None] = field(default_factory=list)


def _noise(row: Summary | None) -> float | None:
    return row.iops_cv if row is not None else None


def compare(store: Store, run_refs: list[str]) -> tuple[list[dict[str, Any]], list[CompareRow]]:
    """Per job, direction and metric: each run's value and its ratio to the first run.

    A difference counts as significant when it exceeds twice the larger repeat noise (CV) of the
    two runs; without repeats there is no noise measure, and significance stays unknown (None).
    """
    runs = [store.get_run(ref) for ref in run_refs]
    tables = [{(r.group_key, r.result.direction): r for r in summarize(store.get_results(run["id"]))}
              for run in runs]
    keys = list(dict.fromkeys(k for t in tables for k in t))
    rows = []
    for job, direction in keys:
        found = [t.get((job, direction)) for t in tables]
        for metric in METRICS:
            values = [metric_value(r, metric) if r else None for r in found]
            base = values[0]
            ratios = [v / base if v is not None and base else None for v in values]
            noise = [_noise(r) for r in found]
            sig: list[bool | None] = []
            for ratio, n in zip(ratios, noise, strict=True):
                ref_noise = noise[0]
                if ratio is None or n is None or ref_noise is None:
                    sig.append(None)
                else:
                    sig.append(abs(ratio - 1) > 2 * max(n, ref_noise))
            rows.append(CompareRow(job, direction, metric, values, ratios, noise,
                                   [r.n if r else 0 for r in found], sig))
    return runs, rows


def worse_by(row: CompareRow, index: int) -> float | None:
    """How much worse run ``index`` is than the first, as a positive fraction (None if not worse)."""
    ratio = row.ratios[index]
    if ratio is None:
        return None
    change = (1 - ratio) if HIGHER_IS_BETTER.get(row.metric, False) else (ratio - 1)
    return change if change > 0 else None


@dataclass
class HistoryPoint:
    run_id: str
    started: str
    verdict: str | None
    values: dict[str, float | None]
    n: int


def history(store: Store, *, workload: str | None = None, target: str | None = None,
            last: int = 20) -> dict[tuple[str, str], list[HistoryPoint]]:
    """The values of matching jobs over time, oldest first, from the newest ``last`` runs."""
    out: dict[tuple[str, str], list[HistoryPoint]] = {}
    for run in reversed(store.list_runs(last)):
        for row in summarize(store.get_results(run["id"])):
            if workload and row.workload != workload and not row.workload.startswith(workload):
                continue
            if target and row.target != target:
                continue
            point = HistoryPoint(run["id"], run["started"], run.get("verdict"),
                                 {m: metric_value(row, m) for m in METRICS}, row.n)
            out.setdefault((row.group_key, row.result.direction), []).append(point)
    return out
