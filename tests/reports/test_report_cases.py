"""The report leads with what went wrong (issue 26 §3): the verdict box, overlaid runs and repeats,
history labels that differ, labelled sweep points, and a save link on every chart."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from diskbench.reports.gate import Policy
from diskbench.reports.html import build_report
from diskbench.reports.trend import time_axis
from diskbench.reports.verdict import split_hint, verdict_box
from diskbench.store import Store

from ..synth import add_run
from .report_cases import FOUR, add_series_run, failed, history, one_day, regressed


def captions(html: str) -> list[str]:
    return re.findall(r"<figcaption>(.*?)</figcaption>", html)


def box(html: str) -> str:
    found = re.search(r'<section id="verdict".*?</section>', html, re.DOTALL)
    assert found, "no verdict box"
    return found.group(0)


def test_a_failed_run_opens_with_its_cause_and_what_to_do(db: Path) -> None:
    store = Store(db)
    html = build_report(store, [failed(store)])
    assert re.search(r"<h1>diskbench report</h1>\s*<section id=\"verdict\" class=\"verdict bad\">", html)
    verdict = box(html)
    assert ">FAILED<" in verdict and "failed: 2 of 2 job(s) failed" in verdict
    assert verdict.count("Permission denied") == 2  # one entry for both jobs: error 13 (...) ... error=...
    assert "2 jobs: local/scratch/a, local/scratch/b" in verdict and "job &#39;a&#39; failed" not in verdict
    assert "what to do: the user diskbench runs as may not create or open files there" in verdict
    assert "never a regression" in verdict  # not gated: a failed run is ERROR to the gate
    assert "No results: see the verdict above for why." in html  # not an empty table
    assert html.index("Permission denied") < html.index('id="summary"')


def test_a_regressed_run_lists_each_suspect_metric_with_baseline_now_change_and_limit(db: Path) -> None:
    store = Store(db)
    run = regressed(store)
    html = build_report(store, [run])
    verdict = box(html)
    assert 'class="verdict bad"' in verdict and ">REGRESSED<" in verdict and "gate REGRESSED" in verdict
    row = re.search(r"<tr><td class=\"l w\"><span class=\"err\">REGRESSED</span> <b>a read IOPS</b>.*?</tr>",
                    verdict)
    assert row, verdict
    cells = re.findall(r"<td>(.*?)</td>", row.group(0))
    assert cells == ["1,005 IOPS", "800 IOPS", "▼ -20.4%", "904 IOPS", "6"]  # baseline, now, change, limit, n
    assert "a read MiB/s" in verdict and "3.12 MiB/s" in verdict  # bandwidth in MiB/s
    assert Store(db).get_run(run)["verdict"] == "REGRESSED"


def test_the_report_reruns_the_gate_read_only(db: Path) -> None:
    store = Store(db)
    history(store)
    run = add_run(store, 7, {"a": [800], "b": [501]})  # never gated
    html = build_report(store, [run])
    assert "not gated; the gate would say REGRESSED now (the default policy)" in box(html)
    assert "800 IOPS" in box(html)
    after = Store(db).get_run(run)
    assert after["verdict"] is None and after["accepted"] is None  # nothing recorded


def test_a_partial_run_shows_its_results_and_its_failed_job(db: Path) -> None:
    store = Store(db)
    html = build_report(store, [failed(store, partial=True)])
    verdict = box(html)
    assert ">PARTIAL<" in verdict and "1 of 2 job(s) failed" in verdict and "(local/scratch/b)" in verdict
    assert "No results" not in html and '<td class="l w">a</td>' in html


def test_two_runs_of_four_jobs_share_one_chart_per_job_and_metric(db: Path) -> None:
    store = Store(db)
    ids = [add_series_run(store, day, {name: [5000.0 * (i + 1) + 300 * day] for i, name in enumerate(FOUR)})
           for day in (1, 2)]
    html = build_report(store, ids, with_history=False)
    names = captions(html)
    kinds = ("completion latency by percentile", "latency histogram", "IOPS (and MiB/s)", "IOPS over time",
             "MiB/s over time", "mean latency over time")
    assert sorted(names) == sorted(f"{job} read: {kind}" for job in FOUR for kind in kinds)  # 24, not 36
    assert not any(i in name for name in names for i in ids)  # runs are lines and bars, never charts
    for figure in re.findall(r"<figure.*?</figure>", html, re.DOTALL):
        assert all(i in figure for i in ids), figure[:200]  # ... and each chart holds both runs
        assert 'data-save="svg"' in figure and 'data-save="png"' in figure


def test_repeats_draw_one_line_per_repetition_over_time(db: Path) -> None:
    store = Store(db)
    run = add_series_run(store, 1, {"sync": [5000.0, 5400.0, 4700.0], "async": [20000.0, 21000.0, 19000.0]})
    html = build_report(store, [run], with_history=False)
    assert 'id="timeline"' in html
    timeline = html[html.index('id="timeline"'):html.index('id="metadata"')]
    figures = re.findall(r"<figure.*?</figure>", timeline, re.DOTALL)
    assert len(figures) == 2 * 3  # two jobs: IOPS, MiB/s, mean latency
    for figure in figures:
        assert [label for label in re.findall(r"<b>scratch (#\d)</b>", figure)] == ["#1", "#2", "#3"]
        assert figure.count("<polyline") == 3


def test_history_of_one_minute_labels_every_tick_differently(db: Path) -> None:
    store = Store(db)
    ids = one_day(store)
    html = build_report(store, ids[-1:])
    charts = [f for f in re.findall(r"<figure.*?</figure>", html, re.DOTALL) if "by date" in f]
    assert charts
    for chart in charts:
        ticks = re.findall(r'<text x="[\d.]+" y="272" text-anchor="\w+">([^<]*)</text>', chart)
        assert len(ticks) >= 2 and len(set(ticks)) == len(ticks), ticks
        assert all(re.fullmatch(r"\d\d:\d\d:\d\d", t) for t in ticks), ticks


def test_time_axis_is_as_precise_as_the_runs_need() -> None:
    def stamp(*args: int) -> float:
        return datetime(*args, tzinfo=timezone.utc).timestamp()  # type: ignore[misc]

    same_second = time_axis([stamp(2026, 11, 3, 12, 0, 0)] * 3)
    assert same_second.labels == ["run 1", "run 2", "run 3"]
    hours = time_axis([stamp(2026, 11, 3, h, 0, 0) for h in (9, 12, 15)])
    assert len(set(hours.labels)) == 3 and all(re.fullmatch(r"\d\d:\d\d", t) for t in hours.labels)
    days = time_axis([stamp(2026, 11, d, 12, 0, 0) for d in (1, 8, 15, 22, 29, 30)])
    assert len(set(days.labels)) == len(days.labels) == 5 and all(re.fullmatch(r"\d\d-\d\d", t) for t in days.labels)


def test_mix_and_sweep_charts_name_the_target_and_label_each_point(db: Path) -> None:
    store = Store(db)
    mix = {f"mix-rwmixread{v}": {"param": "rwmixread", "value": v, "base": "mix"} for v in (100, 50, 0)}
    qd = {f"qd{v}": {"param": "iodepth", "value": v, "base": "qd"} for v in (1, 8, 32)}
    run = add_run(store, 1, {**{n: [1000.0 + 10 * int(s["value"])] for n, s in mix.items()},  # type: ignore[call-overload]
                             **{n: [500.0 * int(s["value"])] for n, s in qd.items()}},  # type: ignore[call-overload]
                  sweep={**mix, **qd})
    html = build_report(store, [run], with_history=False)
    assert "Read/write mix on scratch: total IOPS by read %" in html and " on local" not in html
    marks = re.findall(r'class="m" fill="[^"]+">([^<]*)</text>', html)
    assert {"0%", "50%", "100%"} <= set(marks) and {"iodepth=1", "8", "32"} <= set(marks)
    assert "each point is labelled with its read %" in html and "each point is labelled with its iodepth" in html


def test_errors_get_hints() -> None:
    assert split_hint("error 28 (No space left on device): x")[1].startswith("the target is full")
    assert split_hint("m1: fio is not installed (install fio on the host, or set install_engine: true)") == (
        "m1: fio is not installed", "install fio on the host, or set install_engine: true")
    timeout = split_hint("fio did not finish in time and was stopped by diskbench's timeout (exit 124)")
    assert timeout[0].endswith("(exit 124)") and timeout[1].startswith("the job ran far past its runtime")
    killed = split_hint("fio was killed by SIGKILL (signal 9) from outside diskbench, exit -9, not by diskbench's "
                        "timeout (check dmesg on the host: the kernel's OOM killer logs 'Killed process' there)")
    assert killed[0].endswith("not by diskbench's timeout") and killed[1].startswith("check dmesg on the host")
    assert split_hint("something odd happened") == ("something odd happened", "")


def test_many_calm_runs_take_one_line(db: Path) -> None:
    store = Store(db)
    ids = history(store, n=6)
    bad = failed(store)
    runs = [store.get_run(i) for i in [*ids, bad]]
    jobs = {r["id"]: store.get_jobs(r["id"]) for r in runs}
    raw = {r["id"]: store.get_results(r["id"]) for r in runs}
    found = verdict_box(store, runs, jobs, raw, Policy())
    assert [v.run_id for v in found.runs] == [bad] and found.tone == "bad"
    assert found.calm_line() == "6 more run(s) completed without errors (gate: not gated 6)."
