"""The gate's remaining edges, in process: a run's own per-second noise, its repeats' spread at the
threshold, the checks it writes for runs it cannot judge, how repeats are merged, and the exact
JSON, JUnit and Markdown a CI job reads.

tests/reports/test_gate_band.py pins the band itself; tests/reports/test_gate.py shows the same
rules through the CLI (a child process: it cannot see a changed function in this process). Every
figure below is worked out by hand beside its case.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from diskbench.errors import UsageError
from diskbench.model import PERCENTILES, DirectionResult, GroupResult, Latency, Series, pkey
from diskbench.reports.gate import (
    Check,
    GateResult,
    Policy,
    explain,
    fmt_value,
    gate,
    job_checks,
    load_policy,
    metric_value,
    noisy_baseline,
    to_junit,
    to_markdown,
    worst,
)
from diskbench.reports.stats import summarize
from diskbench.store import Store
from diskbench.store.store import StoredResult

T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
JOB = "local/scratch/a"


@dataclass
class R:
    """One repetition of one job: its figures, and what its engine logged each second."""

    iops: float = 1000.0
    bw: float = 100e6
    p50: float = 100.0
    p99: float = 400.0
    per_second: list[float] | None = None  # IOPS each second
    lat_per_second: list[float | None] | None = None  # mean latency each second (None: no I/O that second)
    latency: bool = True  # False: an engine run that measured no latency (DiskSpd without -L)


def _result(r: R, workload: str = "a") -> GroupResult:
    clat = Latency(min=r.p50 / 2, mean=r.p50 * 1.2, max=r.p99 * 2, stdev=r.p50 / 4, samples=int(r.iops * 10),
                   percentiles={"p50": r.p50, "p99": r.p99}) if r.latency else None
    d = DirectionResult("read", r.iops, r.bw, int(r.iops * 10), int(r.bw * 10), 10.0, clat)
    if r.per_second is not None:
        d.series = Series(1.0, r.per_second, [v * 100e3 for v in r.per_second], r.lat_per_second, "synthetic")
    return GroupResult(workload, [workload], 1, "fio", "3.33", [d])


def add(store: Store, day: int, jobs: dict[str, list[R]], *, testbeds: dict[str, str] | None = None,
        status: str = "completed", failed: tuple[str, ...] = ()) -> str:
    """One run: ``jobs`` maps a workload to its repetitions, in the order the run stored them."""
    run_id = store.create_run(profile="edges", profile_path=None, profile_text="name: edges\n", options={},
                              run_id=f"2026{day:04d}-000000-{len(store.list_runs()):04x}")
    rows = []
    for name, reps in jobs.items():
        base = f"local/scratch/{name}"
        for rep in range(1, len(reps) + 1):
            rows.append(({"key": base + (f"#{rep}" if len(reps) > 1 else ""), "workload": name, "target": "scratch",
                          "host": "local", "base_key": base, "repeat": rep}, reps[rep - 1]))
    store.add_jobs(run_id, [job for job, _ in rows])
    for job, r in rows:
        name = job["workload"]
        store.update_job(run_id, job["key"], testbed=(testbeds or {}).get(name, "tb"),
                         status="failed" if name in failed else "done", message=None)
        if name not in failed:
            store.add_results(run_id, job["key"], _result(r, name), workload=name, target="scratch", host="local",
                              repeat=job["repeat"])
    store.update_run(run_id, started=(T0 + timedelta(days=day)).isoformat(timespec="seconds"), status=status,
                     pid=None)
    return run_id


def around(m: float, d: float) -> list[float]:
    """Five values with median ``m`` and MAD ``d``."""
    return [m - d, m - d, m, m + d, m + d]


# Five quiet baseline runs: medians 1000 IOPS, 100 MB/s, p50 100 µs, p99 400 µs, each MAD small
# enough that the band is the threshold (3 x 1.4826 x 5 = 22.2 < 10% of 1000, and so on).
QUIET = [R(iops=i, bw=b, p50=p, p99=q) for i, b, p, q in zip(
    around(1000, 5), around(100e6, 0.5e6), around(100, 0.5), around(400, 2), strict=True)]


def history(store: Store, reps: list[R] = QUIET, workloads: tuple[str, ...] = ("a",)) -> None:
    for day, r in enumerate(reps):
        add(store, day, {w: [r] for w in workloads})


def checks(store: Store, run_id: str, policy: Policy | None = None) -> dict[str, Check]:
    return {c.metric: c for c in gate(store, run_id, policy or Policy()).checks}


def se3(per_second: list[float]) -> float:
    """Three standard errors of a run's mean from its per-second figures (sample CV / sqrt(n))."""
    return 3 * statistics.stdev(per_second) / statistics.fmean(per_second) / math.sqrt(len(per_second))


# --- a run's own per-second noise ------------------------------------------------------------------
def test_a_regression_within_the_runs_own_noise_is_inconclusive(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store)
    # 800 IOPS and 80 MB/s: 20% below the medians, beyond the 10% band. Its three seconds read 1050,
    # 600, 750 (mean 800): deviations 250, -200, -50, sample variance 105000 / 2 = 52500, stdev
    # 229.13, CV 28.64%, standard error 28.64% / sqrt(3) = 16.54%, three of them 49.6% >= 20%.
    noisy = add(store, 6, {"a": [R(iops=800, bw=80e6, per_second=[1050, 600, 750])]})
    assert se3([1050, 600, 750]) == pytest.approx(0.49608, abs=5e-6)  # the hand-derived figure above
    got = checks(store, noisy)
    why = ("regressed by 20.0%, within this run's own noise (+-49.6% from its 3 per-second figures); "
           "run longer or with --repeats")
    assert (got["iops"].verdict, got["iops"].reason) == ("INCONCLUSIVE", why)
    assert (got["bw"].verdict, got["bw"].reason) == ("INCONCLUSIVE", why)  # bandwidth follows the IOPS seconds
    # latency unchanged: PASS, with no reason (nothing to explain), whatever its seconds say
    assert (got["p50"].verdict, got["p50"].reason) == ("PASS", "")
    assert (got["p99"].verdict, got["p99"].reason) == ("PASS", "")
    result = gate(store, noisy, Policy())
    assert (result.run_id, result.verdict) == (noisy, "INCONCLUSIVE")
    assert [(c.job, c.direction) for c in result.checks] == [(JOB, "read")] * 4


def test_the_same_drop_measured_steadily_is_a_regression(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store)
    # ten seconds within +-2 of 800: CV 0.18%, three standard errors 0.17%, far below the 20% drop
    steady = add(store, 6, {"a": [R(iops=800, bw=80e6, per_second=[800, 801, 799, 802, 798] * 2)]})
    got = checks(store, steady)
    assert (got["iops"].verdict, got["iops"].reason) == ("REGRESSED", "beyond the limit")
    assert (got["bw"].verdict, got["bw"].reason) == ("REGRESSED", "beyond the limit")
    assert gate(store, steady, Policy()).verdict == "REGRESSED"


def test_an_improvement_within_the_runs_own_noise_is_a_pass(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store)
    # 1200 IOPS, 20% above; its seconds 1575, 900, 1125 are the case above x 1.5: the same CV, 49.6%
    better = add(store, 6, {"a": [R(iops=1200, per_second=[1575, 900, 1125])]})
    got = checks(store, better)["iops"]
    assert (got.verdict, got.reason) == ("PASS", "improved by 20.0%, within this run's own noise (+-49.6% from its "
                                                 "3 per-second figures); run longer or with --repeats")
    steady = add(store, 7, {"a": [R(iops=1200, per_second=[1200, 1201, 1199])]})
    assert (checks(store, steady)["iops"].verdict, checks(store, steady)["iops"].reason) == (
        "IMPROVED", "better than the band around the baseline median")


def test_a_change_of_exactly_three_standard_errors_is_within_the_noise(tmp_path: Path) -> None:
    """The rule: a change *no larger than* three standard errors proves nothing."""
    store = Store(tmp_path / "s.sqlite")
    history(store)
    policy = Policy(thresholds={"iops": 0.05})  # band 50 IOPS: 900 is beyond it
    # nine seconds 1080, 720 and seven 900: mean 900, sample variance 2 x 180^2 / 8 = 8100, stdev 90,
    # CV 10%, standard error 10% / sqrt(9) = 3.33%: three of them are exactly the 10% drop
    edge = add(store, 6, {"a": [R(iops=900, per_second=[1080, 720] + [900] * 7)]})
    got = checks(store, edge, policy)["iops"]
    assert got.change == -0.1 and got.verdict == "INCONCLUSIVE"
    assert got.reason.startswith("regressed by 10.0%, within this run's own noise (+-10.0% from its 9 ")
    # 12% down with the same spread (880 x 1.2, 880 x 0.8, seven 880: CV 10% again): beyond three
    # standard errors (10%), though within four (13.3%)
    beyond = add(store, 7, {"a": [R(iops=880, per_second=[1056, 704] + [880] * 7)]})
    assert (checks(store, beyond, policy)["iops"].verdict, checks(store, beyond, policy)["iops"].reason) == (
        "REGRESSED", "beyond the limit")


def test_three_seconds_are_the_fewest_that_say_anything(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store)
    # two seconds, however far apart (1050 and 550: CV 44%), are not enough to call the drop noise
    two = add(store, 6, {"a": [R(iops=800, per_second=[1050, 550])]})
    assert (checks(store, two)["iops"].verdict, checks(store, two)["iops"].reason) == ("REGRESSED",
                                                                                        "beyond the limit")
    # three are (the case above: +-49.6%)
    three = add(store, 7, {"a": [R(iops=800, per_second=[1050, 600, 750])]})
    assert checks(store, three)["iops"].verdict == "INCONCLUSIVE"


def test_latency_is_held_to_its_own_per_second_spread_too(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store)
    # IOPS steady at 800 (a 20% drop, well measured); the mean latency each second 100, 160, 70,
    # (no I/O), 130 µs: mean 115, deviations -15, 45, -45, 15, sample variance 4500 / 3 = 1500,
    # stdev 38.73, CV 33.68%; over the run's five seconds a standard error of 33.68% / sqrt(5) =
    # 15.06%, three of them 45.2%
    run = add(store, 6, {"a": [R(iops=800, bw=80e6, p99=470, per_second=[800, 801, 799, 800, 800],
                                 lat_per_second=[100, 160, 70, None, 130])]})
    got = checks(store, run)
    # p99 17.5% up (470 against 400, past its 15% band) but within 45.2%: inconclusive
    assert (got["p99"].verdict, got["p99"].reason) == (
        "INCONCLUSIVE", "regressed by 17.5%, within this run's own noise (+-45.2% from its 5 per-second figures); "
                        "run longer or with --repeats")
    # IOPS and bandwidth are judged on the IOPS seconds alone: a regression
    assert (got["iops"].verdict, got["iops"].reason) == ("REGRESSED", "beyond the limit")
    assert (got["bw"].verdict, got["bw"].reason) == ("REGRESSED", "beyond the limit")
    assert (got["p50"].verdict, got["p50"].reason) == ("PASS", "")


def test_a_learning_job_stays_learning_whatever_its_seconds(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, QUIET[:4])
    run = add(store, 6, {"a": [R(iops=990, per_second=[1300, 700, 970])]})
    got = checks(store, run)["iops"]
    assert (got.verdict, got.reason, got.n) == ("LEARNING", "4 of 5 baseline runs", 4)
    # and explained with the baseline so far but no limit (none is set while learning): 995, 995,
    # 1000, 1005 -> median 997.5; 990 is 0.75% below it
    assert explain(got) == "990 IOPS vs baseline median 998 IOPS (-0.8%, n 4): 4 of 5 baseline runs"


# --- a run's repeats --------------------------------------------------------------------------------
def test_repeats_varying_by_exactly_the_threshold_are_judged(tmp_path: Path) -> None:
    """The rule: a run whose repeats vary by *more than* the threshold is inconclusive."""
    store = Store(tmp_path / "s.sqlite")
    history(store)
    # 80, 100, 120 MB/s: mean 100, sample stdev 20, CV exactly 20%, the threshold here
    run = add(store, 6, {"a": [R(bw=80e6), R(bw=100e6), R(bw=120e6)]})
    got = checks(store, run, Policy(thresholds={"bw": 0.2}))
    assert list(got) == ["bw"] and got["bw"].run_cv == 0.2
    assert (got["bw"].verdict, got["bw"].reason) == ("PASS", "")


def test_the_iops_spread_of_repeats_counts_for_every_metric(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store)
    # IOPS 800, 1000, 1200 (CV 20%) while bandwidth and latency repeat exactly: a run that cannot
    # repeat its IOPS within 10% cannot show a 10% change in anything
    run = add(store, 6, {"a": [R(iops=800), R(iops=1000), R(iops=1200)]})
    got = checks(store, run)
    for metric in ("iops", "bw", "p50", "p99"):
        assert got[metric].run_cv == pytest.approx(0.2), metric
        assert got[metric].verdict == "INCONCLUSIVE", metric
    assert got["bw"].reason == "this run's repeats vary by 20.0% (n 3), more than the 10% threshold"
    assert got["p99"].reason == "this run's repeats vary by 20.0% (n 3), more than the 15% threshold"


# --- what is gated, and what is not ----------------------------------------------------------------
def test_an_ungated_metric_does_not_stop_the_others(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store)
    run = add(store, 6, {"a": [R(bw=80e6)]})
    policy = Policy(thresholds={"iops": None, "bw": 0.10, "p99": 0.15})  # IOPS first, not gated
    got = checks(store, run, policy)
    assert {m: c.verdict for m, c in got.items()} == {"bw": "REGRESSED", "p99": "PASS"}


def test_a_run_without_latency_is_gated_on_iops_and_bandwidth(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, [R(iops=r.iops, bw=r.bw, latency=False) for r in QUIET])
    run = add(store, 6, {"a": [R(iops=800, latency=False)]})
    got = checks(store, run)
    assert {m: c.verdict for m, c in got.items()} == {"iops": "REGRESSED", "bw": "PASS"}
    (row,) = summarize(store.get_results(run))
    assert metric_value(row, "p99") is None and metric_value(row, "iops") == 800


def test_per_job_thresholds_apply_in_the_gate(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store)
    run = add(store, 6, {"a": [R(iops=880)]})  # 12% down: beyond 10%, within 20%
    assert checks(store, run)["iops"].verdict == "REGRESSED"
    policy = Policy(jobs=[{"match": "*/a", "thresholds": {"iops": 0.2}}])  # type: ignore[list-item]
    got = checks(store, run, policy)["iops"]
    assert (got.verdict, got.threshold, got.limit) == ("PASS", 0.2, 800)  # 1000 - 20% of 1000
    other = Policy(jobs=[{"match": "*/b", "thresholds": {"iops": 0.2}}])  # type: ignore[list-item]
    assert checks(store, run, other)["iops"].verdict == "REGRESSED"


def test_a_new_configuration_does_not_stop_the_other_jobs(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, workloads=("a", "b"))
    # job a (stored first) now runs on a changed testbed; job b, unchanged, dropped 20%
    run = add(store, 6, {"a": [R()], "b": [R(iops=800)]}, testbeds={"a": "tb-new"})
    result = gate(store, run, Policy())
    assert [(c.job, c.metric, c.verdict, c.n) for c in result.checks][:2] == [
        ("local/scratch/a", "all", "NOT_COMPARABLE", 0), ("local/scratch/b", "iops", "REGRESSED", 5)]
    assert result.verdict == "REGRESSED"


def test_a_run_with_nothing_to_gate_is_learning(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store)
    run = add(store, 6, {"a": [R(iops=100)]})
    result = gate(store, run, Policy(thresholds={"iops": None}))
    assert (result.checks, result.verdict, result.exit_code()) == ([], "LEARNING", 0)


# --- runs the gate does not judge --------------------------------------------------------------------
def test_a_failed_repeat_is_named_by_its_job(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store)
    run = add(store, 6, {"a": [R(), R()]}, failed=("a",), status="failed")
    result = gate(store, run, Policy())
    assert [(c.job, c.direction, c.metric, c.verdict, c.reason) for c in result.checks] == [
        (JOB, "-", "run", "ERROR", "job failed")] * 2
    assert (result.run_id, result.verdict) == (run, "ERROR")


def test_a_job_stored_without_a_base_key_is_named_by_its_key(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    run = store.create_run(profile="edges", profile_path=None, profile_text="x", options={},
                           run_id="20260001-000000-0")
    store.add_jobs(run, [{"key": "m/t/w", "workload": "w", "target": "t", "host": "m", "base_key": None}])
    store.update_job(run, "m/t/w", status="failed", message="fio exited 1")
    store.update_run(run, started=T0.isoformat(timespec="seconds"), status="failed", pid=None)
    assert [(c.job, c.reason) for c in gate(store, run, Policy()).checks] == [("m/t/w", "fio exited 1")]


def test_a_run_without_jobs_has_one_error_check(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    run = store.create_run(profile="edges", profile_path=None, profile_text="x", options={},
                           run_id="20260001-000000-0")
    store.update_run(run, started=T0.isoformat(timespec="seconds"), status="interrupted", pid=None)
    result = gate(store, run, Policy())
    assert [(c.job, c.direction, c.metric, c.verdict, c.reason, c.value, c.n) for c in result.checks] == [
        ("-", "-", "run", "ERROR", "run is interrupted", None, 0)]


# --- repeats, merged --------------------------------------------------------------------------------
def _stored(iops: float, *, lat: Latency | None = None, series: Series | None = None,
            bound: dict[str, object] | None = None, warnings: list[str] | None = None,
            errors: list[str] | None = None, notes: list[str] | None = None, repeat: int = 1) -> StoredResult:
    d = DirectionResult("read", iops, iops * 4096, int(iops * 10), int(iops * 10 * 4096), 10.0, lat, series=series,
                        bound=bound, warnings=warnings or [])
    return StoredResult("r", f"{JOB}#{repeat}", "a", "scratch", "local", "fio", "3.33", 1, d, errors=errors or [],
                        notes=notes or [], repeat=repeat, base_key=JOB, testbed="tb")


def test_one_repetition_keeps_its_bound_and_seconds_several_do_not(tmp_path: Path) -> None:
    bound = {"kind": "device", "limit": 1000}
    series = Series(1.0, [999.0, 1001.0], None, None, "fio iops log")
    (one,) = summarize([_stored(1000, series=series, bound=bound)])
    assert (one.result.bound, one.result.series) == (bound, series)
    # two repetitions: whose bound and whose seconds would it be? neither
    (two,) = summarize([_stored(1000, series=series, bound=bound),
                        _stored(1100, series=series, bound=bound, repeat=2)])
    assert (two.n, two.result.bound, two.result.series) == (2, None, None)


def test_merged_repeats_keep_every_warning_error_and_note_once(tmp_path: Path) -> None:
    (row,) = summarize([
        _stored(1000, warnings=["cache: the file fits in RAM", "ramp: none"], errors=["e2"], notes=["n2", "n1"]),
        _stored(1010, warnings=["ramp: none", "cpu: 95% busy"], errors=["e1", "e2"], notes=["n1"], repeat=2),
        _stored(990, repeat=3)])
    # warnings in the order they first appear; errors and notes sorted, each once
    assert row.result.warnings == ["cache: the file fits in RAM", "ramp: none", "cpu: 95% busy"]
    assert (row.errors, row.notes) == (["e1", "e2"], ["n1", "n2"])
    # io_bytes: the median of 1000, 1010 and 990 IOPS x 10 s x 4 KiB
    assert (row.result.ios, row.result.io_bytes) == (10000, 10000 * 4096)


def test_merged_latency_is_exact_only_when_every_repeat_was(tmp_path: Path) -> None:
    # fio's own percentile keys; a string sort would put p10 before p5 and p99.99 before p99.5
    pct = {pkey(p): float(p) for p in PERCENTILES}
    exact = Latency(10, 50, 100, 5, 1000, dict(pct))
    inexact = Latency(10, 50, 100, 5, 1000, dict(pct), exact=False)
    (both,) = summarize([_stored(1000, lat=exact), _stored(1000, lat=exact, repeat=2)])
    (mixed,) = summarize([_stored(1000, lat=exact), _stored(1000, lat=inexact, repeat=2)])
    assert both.result.clat is not None and mixed.result.clat is not None
    assert (both.result.clat.exact, mixed.result.clat.exact) == (True, False)
    assert list(mixed.result.clat.percentiles) == [pkey(p) for p in PERCENTILES]


# --- what a CI job reads -----------------------------------------------------------------------------
def test_bandwidth_reads_with_a_thousands_separator_from_1000_mib_per_s() -> None:
    # 1 MiB/s is 1,048,576 bytes/s: exactly 1000 MiB/s is the first figure written as a whole number
    assert fmt_value("bw", 1000 * 1048576) == "1,000 MiB/s"
    assert fmt_value("bw", 999.4 * 1048576) == "999 MiB/s"


def test_the_json_verdict_in_full() -> None:
    c = Check(JOB, "read", "iops", "REGRESSED", 800.0, 1000.0, 900.0, 0.1, 5, "beyond the limit", -0.2, None)
    result = GateResult("r1", "REGRESSED", [c], ["w1"])
    assert result.to_json() == {
        "schema": "diskbench.gate/1", "run": "r1", "verdict": "REGRESSED", "exit_code": 1, "warnings": ["w1"],
        "checks": [{"job": JOB, "direction": "read", "metric": "iops", "verdict": "REGRESSED", "value": 800.0,
                    "baseline_median": 1000.0, "limit": 900.0, "threshold": 0.1, "n": 5,
                    "reason": "beyond the limit", "change": -0.2, "run_cv": None}]}


CASES = [Check(JOB, "read", "iops", "REGRESSED", 800, 1000, 900, 0.1, 5, "beyond the limit", -0.2),
         Check(JOB, "read", "p99", "INCONCLUSIVE", 500, 400, 460, 0.15, 5, "too noisy", 0.25),
         Check(JOB, "read", "bw", "PASS", 100e6, 100e6, 90e6, 0.1, 5, "", 0.0),
         Check("local/scratch/b", "-", "run", "ERROR", reason="job failed")]


def test_the_junit_report_in_full() -> None:
    # four checks: one failure, one error, one skipped (inconclusive), one passed
    assert to_junit(GateResult("r1", "ERROR", CASES)) == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuite name="diskbench gate" tests="4" failures="1" errors="1" skipped="1">\n'
        '  <testcase classname="diskbench.r1" name="local/scratch/a read iops"><failure message="800 IOPS vs '
        'baseline median 1,000 IOPS (-20.0%, limit 900 IOPS, n 5)" type="REGRESSED">800 IOPS vs baseline median '
        '1,000 IOPS (-20.0%, limit 900 IOPS, n 5)</failure></testcase>\n'
        '  <testcase classname="diskbench.r1" name="local/scratch/a read p99"><skipped message="INCONCLUSIVE: '
        '500 µs vs baseline median 400 µs (+25.0%, limit 460 µs, n 5): too noisy"/></testcase>\n'
        '  <testcase classname="diskbench.r1" name="local/scratch/a read bw"></testcase>\n'
        '  <testcase classname="diskbench.r1" name="local/scratch/b - run"><error message="job failed" '
        'type="ERROR"/></testcase>\n'
        '</testsuite>\n')


def test_the_markdown_report_in_full() -> None:
    assert to_markdown(GateResult("r1", "ERROR", CASES)) == (
        "## diskbench gate: ERROR\n\nRun `r1`, 4 checks.\n\n"
        "| job | dir | metric | verdict | value | baseline median | change | limit | n | why |\n"
        "|---|---|---|---|---:|---:|---:|---:|---:|---|\n"
        "| local/scratch/a | read | iops | **REGRESSED** | 800 IOPS | 1,000 IOPS | ▼ -20.0% | 900 IOPS | 5 | "
        "beyond the limit |\n"
        "| local/scratch/a | read | p99 | **INCONCLUSIVE** | 500 µs | 400 µs | ▲ +25.0% | 460 µs | 5 | too noisy |\n"
        "| local/scratch/b | - | run | **ERROR** | - | - | - | - | 0 | job failed |\n")


# --- the policy file ---------------------------------------------------------------------------------
def test_policy_file_problems_name_the_file_and_what_it_should_be(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        load_policy(str(tmp_path))
    assert caught.value.message == f"{tmp_path}: not a regular file; a gate policy is a YAML file"
    f = tmp_path / "gate.yaml"
    f.write_text("thresholds: {iops: 0.1\n")
    with pytest.raises(UsageError) as caught:
        load_policy(str(f))
    assert caught.value.message.startswith(f"{f}:2: invalid YAML: ")
    f.write_text("jobs: " + "[" * 70 + "]" * 70 + "\n")  # deeper than the 64 levels yamldoc allows
    with pytest.raises(UsageError) as caught:
        load_policy(str(f))
    assert caught.value.message.endswith("nested more than 64 levels deep; a gate policy is a few levels of "
                                         "mappings and lists")
    f.write_text("min_runs: 0\n")
    with pytest.raises(UsageError) as caught:
        load_policy(str(f))
    assert caught.value.hint == ("the policy's keys are thresholds, jobs, baseline_runs, baseline_days and min_runs "
                                 "(docs/reports-and-gate.md)")


# --- a run still under way (run --repeats auto asks between rounds) ------------------------------------
def test_a_running_run_is_judged_from_its_finished_units_and_nothing_is_recorded(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, workloads=("a", "b"))
    # a: 1000, 1000, 1200 done (the median 1000 passes the 900..1100 band, but 100 / 1066.7 is not
    # the spread: sample stdev of 1000, 1000, 1200 is 115.5, CV 10.8% > 10%: INCONCLUSIVE); its fourth
    # is pending and counts for nothing. b: 800 (20% below: REGRESSED) with one repeat.
    run = add(store, 6, {"a": [R(iops=1000), R(iops=1000), R(iops=1200), R(iops=5000)], "b": [R(iops=800)]},
              status="running")
    store.update_job(run, "local/scratch/a#4", status="pending")
    result = job_checks(store, run, Policy(thresholds={"iops": 0.10}), ["local/scratch/a"])
    assert [(c.job, c.metric, c.verdict) for c in result.checks] == [("local/scratch/a", "iops", "INCONCLUSIVE")]
    assert result.checks[0].value == 1000 and result.checks[0].run_cv == pytest.approx(115.47 / 1066.67, abs=1e-4)
    assert result.verdict == "INCONCLUSIVE" and not noisy_baseline(result.checks[0])
    assert result.run_id == run  # the run asked about, as gate() names it
    both = job_checks(store, run, Policy(thresholds={"iops": 0.10}), ["local/scratch/a", "local/scratch/b"])
    assert worst(both.checks) == "REGRESSED" and worst([]) == "LEARNING"
    assert store.get_run(run)["verdict"] is None  # read-only: a run under way has no verdict yet
    assert gate(store, run, Policy()).verdict == "ERROR"  # the gate proper judges finished runs only


def test_a_noisy_baseline_is_told_from_a_noisy_run(tmp_path: Path) -> None:
    """The band is max(threshold x median, 3 x 1.4826 x MAD): a baseline is too noisy when that is
    wider than twice the threshold; at exactly twice it is not."""
    def check(m: float, limit: float, threshold: float | None = 0.10) -> Check:
        return Check("j", "read", "iops", "INCONCLUSIVE", 1000, m, limit, threshold, 5)

    assert noisy_baseline(check(1000, 799)) and noisy_baseline(check(1000, 1201))  # latency: limit above
    assert not noisy_baseline(check(1000, 800)) and not noisy_baseline(check(1000, 900))
    # no baseline median (a first run) or no band: nothing to call noisy, whatever the other says
    assert not noisy_baseline(Check("j", "read", "iops", "LEARNING", 1000, None, 1100, 0.10, 0))
    assert not noisy_baseline(Check("j", "read", "iops", "LEARNING", 1000, 1000, None, 0.10, 0))
    assert not noisy_baseline(check(1000, 700, None)) and not noisy_baseline(Check("j", "read", "iops", "LEARNING"))
    store = Store(tmp_path / "s.sqlite")
    history(store, [R(iops=v) for v in (1000, 1200, 850, 1150, 900)])  # median 1000, MAD 150: band 667
    run = add(store, 6, {"a": [R(iops=1000)] * 3})
    got = checks(store, run, Policy(thresholds={"iops": 0.10}))["iops"]
    assert got.verdict == "INCONCLUSIVE" and noisy_baseline(got)
