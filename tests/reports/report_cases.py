"""Stores for the report's cases: a failed run, a regressed run, repeats with series, two runs.

``tests/synth.py`` writes results without per-second series or latency bins; a run here can carry
both, as a real fio run does, so that the "Over time" and histogram charts have something to draw.
"""

from __future__ import annotations

import math
from datetime import timedelta

from diskbench.model import Series
from diskbench.store import Store

from ..synth import T0, add_run, result

PERMISSION = ("job '{name}' failed: error 13 (Permission denied): fio: pid=0, err=13/file:filesetup.c:805, "
              "func=open(/srv/bench/{name}.0.0), error=Permission denied")
FOUR = ("sync", "async", "randread-4k", "seqread-64k")


def _series(iops: float, rep: int, seconds: int = 10) -> Series:
    """A repetition's per-second figures: a wave around its IOPS, each repetition out of phase."""
    rates = [iops * (1 + 0.08 * math.sin(i + 2 * rep)) for i in range(seconds)]
    return Series(1.0, rates, [r * 4096 for r in rates], [1e6 / r for r in rates], "synthetic per-second log")


def add_series_run(store: Store, day: float, jobs: dict[str, list[float]], *, testbed: str = "tb1",
                   bins: bool = True) -> str:
    """A completed run whose results carry per-second series (and latency bins, as json+ gives)."""
    run_id = store.create_run(profile="synth", profile_path=None, profile_text="name: synth\n", options={},
                              run_id=f"2026{int(day):04d}-{int(day * 1440) % 1440:04d}00-{len(store.list_runs()):04x}")
    rows = [{"key": f"local/scratch/{name}" + (f"#{rep}" if len(reps) > 1 else ""), "workload": name,
             "target": "scratch", "host": "local", "base_key": f"local/scratch/{name}", "repeat": rep, "params": {}}
            for name, reps in jobs.items() for rep in range(1, len(reps) + 1)]
    store.add_jobs(run_id, rows)
    for row, iops in zip(rows, [v for reps in jobs.values() for v in reps], strict=True):
        store.update_job(run_id, row["key"], testbed=f"{testbed}-{row['workload']}", status="done",
                         rendered=f"[{row['workload']}]\nrw=randread\n")
        group = result(iops, p50=100.0 * (1 + 0.15 * day), p99=400.0 * (1 + 0.3 * day))  # each run its own curve
        d = group.directions[0]
        d.series = _series(iops, int(row["repeat"]))
        if bins and d.clat:
            d.clat.bins = {int(d.clat.percentiles["p50"] * 1000 * 1.25**k): max(1, 400 - 40 * k) for k in range(12)}
            d.clat.bin_ns = 1.0
        store.add_results(run_id, row["key"], group, workload=row["workload"], target="scratch", host="local",
                          repeat=int(row["repeat"]))
    started = (T0 + timedelta(days=day)).isoformat(timespec="seconds")
    store.update_run(run_id, started=started, status="completed", pid=None, facts={"hostname": "synth"})
    return run_id


def history(store: Store, n: int = 6, spacing: float = 1.0) -> list[str]:
    """``n`` accepted runs of jobs a and b (``spacing`` days apart): a baseline for the gate."""
    return [add_run(store, day * spacing, {"a": [1000 + 5 * (day % 3)], "b": [500 + 3 * (day % 2)]})
            for day in range(n)]


def regressed(store: Store) -> str:
    """A run whose job a fell 20% below six stable runs: the gate says REGRESSED, as stored."""
    history(store)
    run = add_run(store, 7, {"a": [800], "b": [501]})
    store.set_verdict(run, "REGRESSED", False)
    return run


def failed(store: Store, *, partial: bool = False) -> str:
    """A run whose jobs could not open their files (Permission denied); ``partial``: job a still ran."""
    names = ("a", "b")
    run = add_run(store, 8, {name: [1000.0] for name in names}, failed=names[1:] if partial else names,
                  status="partial" if partial else "failed")
    for name in names[1:] if partial else names:
        store.update_job(run, f"local/scratch/{name}", message=PERMISSION.format(name=name))
    return run


def one_day(store: Store, n: int = 6) -> list[str]:
    """``n`` runs of one job ten seconds apart, all within one minute of one day."""
    return [add_run(store, 3 + i * 10 / 86400, {"a": [1000.0 + i]}) for i in range(n)]
