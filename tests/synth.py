"""Synthetic runs in a real store, for gate, compare, history and report tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from diskbench.model import PERCENTILES, DirectionResult, GroupResult, Latency, Series, pkey
from diskbench.store import Store

T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def result(iops: float, p50: float = 100.0, p99: float = 400.0,
           per_second: list[float] | None = None) -> GroupResult:
    pct = {pkey(p): p50 * (1 + (p / 100) ** 8 * (p99 / p50 - 1)) for p in PERCENTILES}
    pct["p50"], pct["p99"] = p50, p99
    clat = Latency(min=p50 / 2, mean=p50 * 1.1, max=p99 * 3, stdev=p50 / 3, samples=int(iops * 5),
                   percentiles=pct)
    d = DirectionResult("read", iops, iops * 4096, int(iops * 5), int(iops * 5 * 4096), 5.0, clat)
    if per_second is not None:
        d.series = Series(1.0, per_second, [v * 4096 for v in per_second], None, "synthetic")
    return GroupResult("j", ["j"], 1, "fio", "3.33", [d])


def add_run(store: Store, day: float, jobs: dict[str, list[float]], *, testbed: str = "tb1",
            status: str = "completed", failed: tuple[str, ...] = (), p99: float = 400.0,
            sweep: dict[str, object] | None = None, per_second: dict[str, list[float]] | None = None) -> str:
    """One run; ``jobs`` maps a workload to the IOPS of each repetition, ``per_second`` to the
    per-second IOPS its (single) repetition logged."""
    run_id = store.create_run(profile="synth", profile_path=None, profile_text="name: synth\n", options={},
                              run_id=f"2026{int(day):04d}-{int(day * 1440) % 1440:04d}00-{len(store.list_runs()):04x}")
    started = (T0 + timedelta(days=day)).isoformat(timespec="seconds")
    rows = []
    for name, reps in jobs.items():
        for rep in range(1, len(reps) + 1):
            key = f"local/scratch/{name}" + (f"#{rep}" if len(reps) > 1 else "")
            params = {"sweep": sweep[name]} if sweep and name in sweep else {}
            rows.append({"key": key, "workload": name, "target": "scratch", "host": "local",
                         "base_key": f"local/scratch/{name}", "repeat": rep, "params": params})
    store.add_jobs(run_id, rows)
    for row, iops in zip(rows, [v for reps in jobs.values() for v in reps], strict=True):
        store.update_job(run_id, row["key"], testbed=f"{testbed}-{row['workload']}",
                         status="failed" if row["workload"] in failed else "done",
                         rendered=f"[{row['workload']}]\nrw=randread\n")
        if row["workload"] not in failed:
            series = (per_second or {}).get(row["workload"])
            store.add_results(run_id, row["key"], result(iops, p99=p99, per_second=series), workload=row["workload"],
                              target="scratch", host="local", repeat=row["repeat"])
    store.update_run(run_id, started=started, status=status, pid=None, facts={"hostname": "synth"})
    return run_id
