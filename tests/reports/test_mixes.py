"""Mix charts: read + write of one unit add up, latency is the mean over every I/O."""

from __future__ import annotations

from pathlib import Path

from diskbench.model import DirectionResult, GroupResult, Latency
from diskbench.reports.mixes import mix_charts
from diskbench.reports.stats import summarize
from diskbench.store import Store


def _dir(name: str, iops: float, mean: float, n: int) -> DirectionResult:
    return DirectionResult(name, iops, iops * 8192, n, n * 8192, 1.0,
                           Latency(min=1, mean=mean, max=mean * 3, stdev=1, samples=n, percentiles={}))


def test_totals_per_mix_and_line_per_workload(db: Path) -> None:
    store = Store(db)
    run = store.create_run(profile="p", profile_path=None, profile_text="name: p\n", options={})
    jobs = []
    for base in ("rand-4k", "rand-8k"):
        for mix in (100, 50, 0):
            key = f"clients/nfs/{base}-rwmixread{mix}"
            jobs.append({"key": key, "workload": f"{base}-rwmixread{mix}", "target": "nfs", "host": "clients",
                         "base_key": key, "repeat": 1,
                         "params": {"sweep": {"param": "rwmixread", "value": mix, "base": base}}})
    store.add_jobs(run, jobs)
    for job in jobs:
        mix = job["params"]["sweep"]["value"]  # type: ignore[index]
        dirs = [d for d in (_dir("read", 1000 * mix / 100, 100.0, 10 * mix),
                            _dir("write", 1000 * (100 - mix) / 100, 300.0, 10 * (100 - mix))) if d.iops]
        for host in ("clients", "c1"):  # a client's own row must not count in the group's line
            store.add_results(run, str(job["key"]), GroupResult("g", ["g"], 1, "fio", "3.33", dirs),
                              workload=str(job["workload"]), target="nfs", host=host)
    rows = summarize(store.get_results(run))
    assert len(rows) == 2 * 2 * (1 + 2 + 1)  # hosts x workloads x directions over the three mixes
    charts = {c["title"].strip(): c for c in mix_charts(rows, "")}
    assert set(charts) == {"clients", "c1"}
    line = charts["clients"]["lines"][0]
    assert line["label"] == "rand-4k" and line["x"] == [0.0, 50.0, 100.0]
    assert line["iops"] == [1000.0, 1000.0, 1000.0]
    assert line["lat"] == [300.0, 200.0, 100.0]  # 50:50 -> (100 x 500 + 300 x 500) / 1000
