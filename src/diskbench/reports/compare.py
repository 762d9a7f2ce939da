"""Runs side by side, and one job's values over time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..store import Store
from ..units import parse_size
from .gate import ACCEPTED, HIGHER_IS_BETTER, metric_value
from .stats import Summary, summarize

METRICS = ("iops", "bw", "p50", "p99")


@dataclass
class CompareRow:
    job: str
    direction: str
    metric: str
    values: list[float | None]
    ratios: list[float | None]
    noise: list[float | None]  # relative noise (CV) of this metric over each run's repeats
    samples: list[int]
    significant: list[bool | None] = field(default_factory=list)
    changes: list[float | None] = field(default_factory=list)  # (value - first) / first
    better: str = "higher"  # which way is better for this metric
    names: list[str | None] = field(default_factory=list)  # each run's own job name (matched by config)


def _noise(row: Summary | None, metric: str) -> float | None:
    if row is None:
        return None
    return row.cvs.get(metric, row.iops_cv if metric == "iops" else None)


_FS_KINDS = ("fs", "dir", "scratch", "temp", "path")


def config_key(row: Summary) -> tuple[str, ...] | None:
    """What a job declares (rw, bs, iodepth, numjobs, filesystem or raw device), without its name.

    Two imports of hand-made job files, or a renamed workload, line up by what they measure.
    """
    w = row.params.get("workload") or {}
    if not w.get("rw"):
        return None
    t = row.params.get("target") or {}
    kind = "raw" if t.get("raw") else "fs" if any(k in t for k in _FS_KINDS) else "raw"  # temp: {raw: true} too
    try:
        bs = str(parse_size(str(w.get("bs", "4k")).split(",")[0]))
    except ValueError:
        bs = str(w.get("bs"))
    return (str(w["rw"]), bs, str(w.get("iodepth", 1)), str(w.get("numjobs", 1)), kind, row.result.direction)


def _align(tables: list[dict[tuple[str, str], Summary]]) -> list[list[Summary | None]]:
    """Rows across runs: by job name, then leftovers by declared configuration (unique matches only)."""
    keys = list(dict.fromkeys(k for t in tables for k in t))
    first = tables[0]
    aligned: dict[tuple[str, str], list[Summary | None]] = {k: [t.get(k) for t in tables] for k in keys}
    for i, t in enumerate(tables[1:], start=1):
        by_config: dict[tuple[str, ...], list[tuple[str, str]]] = {}
        for k in first:
            if t.get(k) is None and (c := config_key(first[k])) is not None:
                by_config.setdefault(c, []).append(k)
        for k, row in t.items():
            if k in first or (c := config_key(row)) is None or len(by_config.get(c, [])) != 1:
                continue
            target = by_config[c][0]
            if aligned[target][i] is None and sum(config_key(r) == c for r in t.values()) == 1:
                aligned[target][i], aligned[k][i] = row, None
    return [found for found in aligned.values() if any(r is not None for r in found)]


def compare(store: Store, run_refs: list[str]) -> tuple[list[dict[str, Any]], list[CompareRow]]:
    """Per job, direction and metric: each run's value, its change from the first run, and noise.

    A difference counts as significant when it exceeds twice the larger repeat noise (the
    metric's CV) of the two runs; without repeats there is no noise measure, and significance
    stays unknown (None). Jobs whose names differ are matched by their declared configuration.
    """
    runs = [store.get_run(ref) for ref in run_refs]
    tables = [{(r.group_key, r.result.direction): r for r in summarize(store.get_results(run["id"]))}
              for run in runs]
    rows = []
    for found in _align(tables):
        ref = next(r for r in found if r is not None)
        for metric in METRICS:
            values = [metric_value(r, metric) if r else None for r in found]
            base = values[0]
            ratios = [v / base if v is not None and base else None for v in values]
            noise = [_noise(r, metric) for r in found]
            sig: list[bool | None] = []
            for ratio, n in zip(ratios, noise, strict=True):
                ref_noise = noise[0]
                if ratio is None or n is None or ref_noise is None:
                    sig.append(None)
                else:
                    sig.append(abs(ratio - 1) > 2 * max(n, ref_noise))
            rows.append(CompareRow(ref.group_key, ref.result.direction, metric, values, ratios, noise,
                                   [r.n if r else 0 for r in found], sig,
                                   [None if r is None else r - 1 for r in ratios],
                                   "higher" if HIGHER_IS_BETTER.get(metric, False) else "lower",
                                   [r.group_key if r else None for r in found]))
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
    accepted: bool = False  # a suspect verdict someone let into the baselines with `accept`


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
                                 {m: metric_value(row, m) for m in METRICS}, row.n,
                                 bool(run.get("accepted")) and run.get("verdict") not in ACCEPTED)
            out.setdefault((row.group_key, row.result.direction), []).append(point)
    return out
