"""The gate's band, pinned: its constants, its edges, every metric end to end, and runs it must not judge.

tests/reports/test_gate.py covers the verdicts through the CLI on histories where only IOPS moves.
Here the band is computed by hand beside each case (median, MAD, 3 x 1.4826 x MAD, the threshold
share of the median), so a changed constant or a moved edge fails; bandwidth and latency each move
alone through ``gate()`` on a real store; and a run that did not complete is never judged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from diskbench.errors import UsageError
from diskbench.model import DirectionResult, GroupResult, Latency
from diskbench.reports.gate import (
    ACCEPTED,
    EXIT,
    ORDER,
    Check,
    GateResult,
    Policy,
    explain,
    fmt_change,
    fmt_value,
    gate,
    judge,
    load_policy,
    metric_value,
    record,
    to_junit,
    to_markdown,
)
from diskbench.reports.stats import MAD_SCALE, cv, mad, median, summarize
from diskbench.store import Store

T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def around(m: float, d: float) -> list[float]:
    """Five values with median ``m`` and MAD ``d`` (deviations d, d, 0, d, d)."""
    return [m - d, m - d, m, m + d, m + d]


# --- judge: the band by hand ----------------------------------------------------------------
def test_the_constants() -> None:
    assert MAD_SCALE == 1.4826  # MAD -> standard deviation of normal noise
    p = Policy()
    assert p.thresholds == {"iops": 0.10, "bw": 0.10, "p50": 0.10, "p99": 0.15, "p99.9": None}
    assert (p.baseline_runs, p.baseline_days, p.min_runs, p.jobs) == (10, 30, 5, [])
    assert EXIT == {"PASS": 0, "IMPROVED": 0, "LEARNING": 0, "NOT_COMPARABLE": 0, "REGRESSED": 1, "ERROR": 3,
                    "INCONCLUSIVE": 4}
    assert ORDER == ["ERROR", "REGRESSED", "INCONCLUSIVE", "NOT_COMPARABLE", "LEARNING", "IMPROVED", "PASS"]
    assert ACCEPTED == ("PASS", "IMPROVED", "LEARNING", "NOT_COMPARABLE")


def test_the_threshold_band_when_the_baseline_is_quiet() -> None:
    # median 1000, MAD 5: noise 3 x 1.4826 x 5 = 22.239 < 10% of 1000 = 100, so the band is 100
    base = around(1000, 5)
    assert judge(900, base, 0.10, True, 5) == ("PASS", 1000, 900, "")  # on the limit: not beyond it
    assert judge(899.99, base, 0.10, True, 5)[:3] == ("REGRESSED", 1000, 900)
    assert judge(1100, base, 0.10, True, 5)[0] == "PASS"  # on the upper edge: not better than the band
    assert judge(1100.01, base, 0.10, True, 5)[0] == "IMPROVED"
    # latency: higher is worse, the same band mirrored
    assert judge(1100, base, 0.10, False, 5) == ("PASS", 1000, 1100, "")
    assert judge(1100.01, base, 0.10, False, 5)[:3] == ("REGRESSED", 1000, 1100)
    assert judge(900, base, 0.10, False, 5)[0] == "PASS"
    assert judge(899.99, base, 0.10, False, 5)[0] == "IMPROVED"
    assert judge(899.99, base, 0.10, True, 5)[3] == "beyond the limit"
    assert judge(1100.01, base, 0.10, True, 5)[3] == "better than the band around the baseline median"


def test_the_noise_band_when_the_baseline_is_noisy() -> None:
    # median 1000, MAD 30: noise 3 x 1.4826 x 30 = 133.434 > 100, so the band is the noise
    # (and 133.434 < 2 x 100: not too noisy to judge)
    base = around(1000, 30)
    verdict, m, limit, _ = judge(867, base, 0.10, True, 5)
    assert (verdict, m) == ("PASS", 1000) and limit == pytest.approx(866.566)
    assert judge(866.5, base, 0.10, True, 5)[0] == "REGRESSED"
    assert judge(1133.5, base, 0.10, True, 5)[0] == "IMPROVED"
    assert judge(1133.4, base, 0.10, True, 5)[0] == "PASS"
    assert judge(1133.5, base, 0.10, False, 5)[2] == pytest.approx(1133.434)


def test_too_noisy_to_see_the_threshold_is_inconclusive() -> None:
    # the baseline's noise against twice the threshold (200 at 10% of 1000):
    # MAD 44.9: 3 x 1.4826 x 44.9 = 199.706 -> judged; MAD 45: 200.151 -> inconclusive
    assert judge(1000, around(1000, 44.9), 0.10, True, 5)[0] == "PASS"
    verdict, m, limit, reason = judge(1000, around(1000, 45), 0.10, True, 5)
    assert (verdict, m) == ("INCONCLUSIVE", 1000) and limit == pytest.approx(799.849)
    assert reason == "the baseline's own noise (+-20.0% of its median) is wider than twice the 10% threshold"
    # ... but not blind: beyond the (wide) limit is still a regression
    assert judge(799, around(1000, 45), 0.10, True, 5)[0] == "REGRESSED"
    # the same with a negative median (a metric can be compared on either side of zero)
    assert judge(-1000, around(-1000, 45), 0.10, True, 5)[0] == "INCONCLUSIVE"


def test_min_runs_is_the_first_judged_count() -> None:
    base = around(1000, 5)
    # 995, 995, 1000, 1005: median 997.5
    assert judge(500, base[:4], 0.10, True, 5) == ("LEARNING", 997.5, None, "4 of 5 baseline runs")
    assert judge(500, base, 0.10, True, 5)[0] == "REGRESSED"  # 5 of 5: judged
    assert judge(500, base[:3], 0.10, True, 3)[0] == "REGRESSED"
    assert judge(500, [], 0.10, True, 1) == ("LEARNING", None, None, "0 of 1 baseline runs")


def test_statistics() -> None:
    assert median([3, 1, 2]) == 2 and median([4, 1, 2, 3]) == 2.5
    assert mad([1, 2, 3, 4, 100]) == 1  # |x - 3| = 2, 1, 0, 1, 97 -> median 1
    assert cv([5]) is None and cv([0, 0]) is None
    # mean 2, sample stdev sqrt(((1 - 2)^2 + (3 - 2)^2) / 1) = sqrt(2)
    assert cv([1, 3]) == pytest.approx(math.sqrt(2) / 2)


# --- gate end to end on a store --------------------------------------------------------------
@dataclass
class S:
    """One repetition's figures."""

    iops: float = 1000.0
    bw: float = 100e6
    p50: float = 100.0
    p99: float = 400.0


def _result(s: S, direction: str = "read") -> GroupResult:
    clat = Latency(min=s.p50 / 2, mean=s.p50 * 1.2, max=s.p99 * 2, stdev=s.p50 / 4, samples=int(s.iops * 10),
                   percentiles={"p50": s.p50, "p99": s.p99, "p99.9": s.p99 * 2})
    d = DirectionResult(direction, s.iops, s.bw, int(s.iops * 10), int(s.bw * 10), 10.0, clat)
    return GroupResult("j", ["j"], 1, "fio", "3.33", [d])


def add(store: Store, day: float, reps: list[S], *, status: str = "completed", job_status: str = "done",
        testbed: str = "tb", message: str | None = None) -> str:
    """One run of one job ("local/scratch/a", read) with ``reps`` repetitions."""
    run_id = store.create_run(profile="band", profile_path=None, profile_text="name: band\n", options={},
                              run_id=f"2026{int(day):04d}-{int(day * 1440) % 1440:04d}00-{len(store.list_runs()):04x}")
    keys = [f"local/scratch/a#{r}" if len(reps) > 1 else "local/scratch/a" for r in range(1, len(reps) + 1)]
    store.add_jobs(run_id, [{"key": k, "workload": "a", "target": "scratch", "host": "local",
                             "base_key": "local/scratch/a", "repeat": r} for r, k in enumerate(keys, 1)])
    for r, (key, s) in enumerate(zip(keys, reps, strict=True), 1):
        store.update_job(run_id, key, testbed=testbed, status=job_status, message=message)
        store.add_results(run_id, key, _result(s), workload="a", target="scratch", host="local", repeat=r)
    store.update_run(run_id, started=(T0 + timedelta(days=day)).isoformat(timespec="seconds"), status=status,
                     pid=None)
    return run_id


def history(store: Store, values: list[S]) -> None:
    for day, s in enumerate(values):
        add(store, day, [s])


def checks(store: Store, run_id: str, policy: Policy | None = None) -> dict[str, Check]:
    return {c.metric: c for c in gate(store, run_id, policy or Policy()).checks}


QUIET = [S(iops=i, bw=b, p50=p, p99=q) for i, b, p, q in zip(
    around(1000, 5), around(100e6, 0.5e6), around(100, 0.5), around(400, 2), strict=True)]


def test_bandwidth_alone_regresses(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, QUIET)
    run = add(store, 6, [S(bw=85e6)])  # IOPS and latency as before; 15% less bandwidth
    got = checks(store, run)
    assert {m: c.verdict for m, c in got.items()} == {"iops": "PASS", "bw": "REGRESSED", "p50": "PASS",
                                                      "p99": "PASS"}
    bw = got["bw"]
    assert (bw.value, bw.baseline_median, bw.limit, bw.threshold, bw.n) == (85e6, 100e6, 90e6, 0.10, 5)
    assert bw.change == pytest.approx(-0.15)
    assert gate(store, run, Policy()).verdict == "REGRESSED"
    assert explain(bw) == "81.1 MiB/s vs baseline median 95.4 MiB/s (-15.0%, limit 85.8 MiB/s, n 5)"
    better = add(store, 7, [S(bw=120e6)])
    assert checks(store, better)["bw"].verdict == "IMPROVED"


def test_latency_alone_regresses_when_higher(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, QUIET)
    slower = add(store, 6, [S(p99=470)])  # p99 threshold 15%: limit 400 x 1.15 = 460
    got = checks(store, slower)
    assert {m: c.verdict for m, c in got.items()} == {"iops": "PASS", "bw": "PASS", "p50": "PASS",
                                                      "p99": "REGRESSED"}
    assert got["p99"].limit == pytest.approx(460) and got["p99"].threshold == 0.15
    assert "p99.9" not in got  # its threshold is None: not gated
    faster = add(store, 7, [S(p50=80)])  # lower latency is better
    got = checks(store, faster)
    assert (got["p50"].verdict, got["p50"].limit) == ("IMPROVED", pytest.approx(110))
    assert gate(store, faster, Policy()).verdict == "IMPROVED"
    policy = Policy(thresholds={"p99.9": 0.10})  # gating p99.9 too: p99 x 2 = 940 against 800 x 1.1
    assert checks(store, slower, policy)["p99.9"].verdict == "REGRESSED"


def test_min_runs_through_the_gate(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, QUIET[:4])
    run = add(store, 6, [S(iops=500)])
    learning = checks(store, run)["iops"]
    assert (learning.verdict, learning.n, learning.reason) == ("LEARNING", 4, "4 of 5 baseline runs")
    assert gate(store, run, Policy()).verdict == "LEARNING"
    assert gate(store, run, Policy(min_runs=4)).verdict == "REGRESSED"


def test_the_baseline_window_and_count(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    for day, s in zip([0, 1, 2, 3, 4, 10], [S(iops=2000)] * 5 + [S()], strict=True):
        add(store, day, [s])  # five old runs at 2000 IOPS, one recent at 1000
    run = add(store, 40, [S()])  # 40 days after day 0: only day 10 is within 30 days
    assert checks(store, run)["iops"].n == 1
    assert checks(store, run, Policy(baseline_days=40))["iops"].n == 6
    assert checks(store, run, Policy(baseline_days=40, baseline_runs=3))["iops"].n == 3


@pytest.mark.parametrize("status", ["failed", "interrupted", "partial", "running"])
def test_a_run_that_did_not_complete_is_never_judged(tmp_path: Path, status: str) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, QUIET)
    run = add(store, 6, [S(iops=100)], status=status)  # every job done, but the run did not complete
    result = gate(store, run, Policy())
    assert result.verdict == "ERROR" and result.exit_code() == 3 and result.exit_code(strict=True) == 3
    assert [(c.metric, c.verdict) for c in result.checks] == [("run", "ERROR")]
    assert result.checks[0].reason == "job done" and result.checks[0].value is None


def test_a_failed_job_is_an_error_with_its_message(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, QUIET)
    run = add(store, 6, [S(iops=100)], job_status="failed", message="fio: No space left on device")
    result = gate(store, run, Policy())
    assert result.verdict == "ERROR"
    assert [(c.job, c.direction, c.metric, c.verdict, c.reason) for c in result.checks] == [
        ("local/scratch/a", "-", "run", "ERROR", "fio: No space left on device")]
    pending = add(store, 7, [S()], job_status="pending")
    assert [c.reason for c in gate(store, pending, Policy()).checks] == ["job pending"]


def test_a_run_without_jobs_is_an_error(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    run = store.create_run(profile="band", profile_path=None, profile_text="x", options={}, run_id="20260001-000000-0")
    store.update_run(run, started=T0.isoformat(timespec="seconds"), status="failed", pid=None)
    result = gate(store, run, Policy())
    assert [(c.job, c.reason) for c in result.checks] == [("-", "run is failed")] and result.verdict == "ERROR"


def test_repeats_that_vary_more_than_the_threshold_are_inconclusive(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, QUIET)
    # bandwidth repeats 80, 100, 120 MB/s: mean 100, sample stdev 20, CV 20% > 10%
    run = add(store, 6, [S(bw=80e6), S(bw=100e6), S(bw=120e6)])
    got = checks(store, run)
    assert got["bw"].verdict == "INCONCLUSIVE" and got["bw"].run_cv == pytest.approx(0.2)
    assert got["bw"].reason == "this run's repeats vary by 20.0% (n 3), more than the 10% threshold"
    # the run's IOPS CV counts for every metric: 0 here, so the others are judged on their own CV
    assert got["iops"].verdict == "PASS" and got["iops"].run_cv == 0
    assert got["p99"].run_cv == 0


def test_verdict_order_and_exit_codes() -> None:
    result = GateResult("r", "INCONCLUSIVE")
    assert result.exit_code() == 0 and result.exit_code(strict=True) == 4
    assert GateResult("r", "REGRESSED").exit_code() == 1
    assert result.to_json()["schema"] == "diskbench.gate/1" and result.to_json()["exit_code"] == 0


def test_summaries_take_the_median_of_repeats(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    run = add(store, 0, [S(iops=900, p50=90), S(iops=1000, p50=100), S(iops=1300, p50=130)])
    (row,) = summarize(store.get_results(run))
    assert (row.n, row.result.iops, metric_value(row, "p50"), metric_value(row, "p99.99")) == (3, 1000, 100, None)
    assert metric_value(row, "iops") == 1000 and metric_value(row, "bw") == 100e6
    assert row.iops_cv == pytest.approx(cv([900, 1000, 1300]))
    assert row.cvs["p50"] == pytest.approx(cv([90, 100, 130]))


# --- what people read -----------------------------------------------------------------------
def test_values_and_changes_as_people_read_them() -> None:
    assert fmt_value("iops", 16734.4) == "16,734 IOPS"
    assert fmt_value("bw", 130.7 * 1048576) == "131 MiB/s"
    assert fmt_value("bw", 1500 * 1048576) == "1,500 MiB/s"
    assert fmt_value("bw", 999.4 * 1048576) == "999 MiB/s"
    assert fmt_value("p99", 1290.0) == "1.29 ms" and fmt_value("p50", None) == "-"
    assert fmt_change(-0.2041) == "-20.4%" and fmt_change(None) == "-"
    assert fmt_change(0.05, arrows=True) == "▲ +5.0%" and fmt_change(-0.05, arrows=True) == "▼ -5.0%"
    assert fmt_change(0.0, arrows=True) == "+0.0%"


def test_reports_of_a_verdict() -> None:
    checks = [Check("m/t/a", "read", "iops", "REGRESSED", 800, 1005, 904.5, 0.1, 6, "beyond the limit", -0.204),
              Check("m/t/a", "read", "p99", "INCONCLUSIVE", 500, 400, 460, 0.15, 6, "too noisy", 0.25),
              Check("m/t/b", "-", "run", "ERROR", reason="fio <died> & gone"),
              Check("m/t/c", "read", "iops", "LEARNING", 1000, None, None, 0.1, 2, "2 of 5 baseline runs"),
              Check("m/t/d", "read", "all", "NOT_COMPARABLE", reason="no earlier run with the same testbed"),
              Check("m/t/e", "read", "iops", "PASS", 1000, 1000, 900, 0.1, 6, "", 0.0)]
    result = GateResult("r1", "ERROR", checks, ["m/t/d: its configuration changed"])
    assert explain(checks[0]) == "800 IOPS vs baseline median 1,005 IOPS (-20.4%, limit 904 IOPS, n 6)"
    assert explain(checks[1]) == "500 µs vs baseline median 400 µs (+25.0%, limit 460 µs, n 6): too noisy"
    assert explain(checks[2]) == "fio <died> & gone"
    assert explain(checks[3]) == "1,000 IOPS: 2 of 5 baseline runs"
    assert explain(checks[5]) == "1,000 IOPS vs baseline median 1,000 IOPS (+0.0%, limit 900 IOPS, n 6)"
    junit = to_junit(result)
    assert junit.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="diskbench gate" '
                            'tests="6" failures="1" errors="1" skipped="3">\n')
    assert ('<testcase classname="diskbench.r1" name="m/t/a read iops"><failure message="800 IOPS vs baseline '
            'median 1,005 IOPS (-20.4%, limit 904 IOPS, n 6)" type="REGRESSED">800 IOPS vs baseline median 1,005 '
            'IOPS (-20.4%, limit 904 IOPS, n 6)</failure></testcase>') in junit
    assert '<error message="fio &lt;died&gt; &amp; gone" type="ERROR"/>' in junit
    assert '<skipped message="LEARNING: 1,000 IOPS: 2 of 5 baseline runs"/>' in junit
    assert '<skipped message="NOT_COMPARABLE: no earlier run with the same testbed"/>' in junit
    assert '<testcase classname="diskbench.r1" name="m/t/e read iops"></testcase>' in junit
    assert junit.endswith("</testcase>\n</testsuite>\n")
    md = to_markdown(result)
    assert md.startswith("## diskbench gate: ERROR\n\nRun `r1`, 6 checks.\n\n> warning: m/t/d: its configuration "
                         "changed\n\n| job | dir | metric | verdict | value | baseline median | change | limit | n | "
                         "why |\n|---|---|---|---|---:|---:|---:|---:|---:|---|\n")
    assert ("| m/t/a | read | iops | **REGRESSED** | 800 IOPS | 1,005 IOPS | ▼ -20.4% | 904 IOPS | 6 | "
            "beyond the limit |\n") in md
    assert "| m/t/b | - | run | **ERROR** | - | - | - | - | 0 | fio <died> & gone |\n" in md
    assert "m/t/c" not in md and "m/t/e" not in md and md.endswith("|\n")
    assert to_markdown(GateResult("r2", "PASS")) == (
        "## diskbench gate: PASS\n\nRun `r2`, 0 checks.\n\nNo suspect metric.\n")


def test_recording_a_verdict_accepts_only_the_good_ones(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    runs = {v: add(store, n, [S()]) for n, v in enumerate(ORDER)}
    for verdict, run in runs.items():
        record(store, GateResult(run, verdict))
        got = store.get_run(run)
        assert (got["verdict"], got["accepted"]) == (verdict, int(verdict in ACCEPTED)), verdict


# --- the policy ----------------------------------------------------------------------------------
def test_thresholds_are_relative_and_bounded() -> None:
    assert Policy(thresholds={"iops": 10}).thresholds == {"iops": 10}  # 1000%: the most
    assert Policy(thresholds={"iops": None}).thresholds == {"iops": None}  # not gated
    for bad in (0, -0.1, 10.01, float("nan"), float("inf")):
        with pytest.raises(ValueError) as caught:
            Policy(thresholds={"iops": bad})
        assert f"{bad} is not a relative threshold (a number above 0, e.g. 0.1 for 10%)" in str(caught.value)


def test_per_job_thresholds_later_rules_win() -> None:
    p = Policy(jobs=[{"match": "*/a", "thresholds": {"iops": 0.2}},  # type: ignore[list-item]
                     {"match": "m/*", "thresholds": {"iops": 0.3, "p99": None}}])
    assert p.for_job("m/a") == {"iops": 0.3, "bw": 0.10, "p50": 0.10, "p99": None, "p99.9": None}
    assert p.for_job("x/a")["iops"] == 0.2 and p.for_job("x/b") == Policy().thresholds
    assert Policy().for_job("x") is not Policy().thresholds  # a copy: rules never change the defaults


def test_policy_files(tmp_path: Path) -> None:
    assert load_policy(None) == Policy()
    f = tmp_path / "gate.yaml"
    f.write_text("")
    assert load_policy(str(f)) == Policy()
    f.write_text("min_runs: 3\nbaseline_days: 7\njobs:\n  - match: '*'\n    thresholds: {bw: 0.5}\n")
    got = load_policy(str(f))
    assert (got.min_runs, got.baseline_days, got.for_job("a")["bw"]) == (3, 7, 0.5)
    cases = {
        "- a\n- b\n": f"{f}:1: a gate policy is a YAML mapping (thresholds, jobs, baseline_runs ...)",
        "thresholds: {iops: lots}\n": f"{f}:1: thresholds.iops: Input should be a valid number, unable to parse "
                                      "string as a number",
        "min_runs: 2\ncolour: red\n": f"{f}:2: (top level): unknown key 'colour'",
        "jobs:\n  - match: x\n    thresholds: {iops: 0}\n": f"{f}:3: jobs[0].thresholds.iops: 0.0 is not a relative "
                                                            "threshold (a number above 0, e.g. 0.1 for 10%)",
        "jobs:\n  - match: x\n    extra: 1\n    thresholds: {}\n": f"{f}:3: jobs[0]: unknown key 'extra'",
        "min_runs: 0\n": f"{f}:1: min_runs: Input should be greater than or equal to 1",
    }
    for text, message in cases.items():
        f.write_text(text)
        with pytest.raises(UsageError) as caught:
            load_policy(str(f))
        assert caught.value.message == message, text


# --- what the gate compares ------------------------------------------------------------------------
def test_a_new_configuration_is_not_comparable(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    history(store, QUIET)
    run = add(store, 6, [S()], testbed="tb-new")
    result = gate(store, run, Policy())
    assert result.verdict == "NOT_COMPARABLE" and result.exit_code() == 0
    assert [(c.job, c.direction, c.metric, c.verdict, c.n, c.reason) for c in result.checks] == [
        ("local/scratch/a", "read", "all", "NOT_COMPARABLE", 0, "no earlier run with the same testbed")]
    assert result.warnings == ["local/scratch/a: its configuration changed (testbed tb-new); a new baseline starts "
                               "with this run"]
    alone = Store(tmp_path / "t.sqlite")
    first = add(alone, 0, [S()])
    assert gate(alone, first, Policy()).verdict == "LEARNING" and gate(alone, first, Policy()).warnings == []


def test_the_baseline_is_the_same_direction_of_the_same_job(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    for day in range(5):
        add(store, day, [S()])
    writes = store.create_run(profile="band", profile_path=None, profile_text="x", options={},
                              run_id="20260009-000000-ffff")
    store.add_jobs(writes, [{"key": "local/scratch/a", "workload": "a", "target": "scratch", "host": "local",
                             "base_key": "local/scratch/a", "repeat": 1}])
    store.update_job(writes, "local/scratch/a", testbed="tb", status="done")
    store.add_results(writes, "local/scratch/a", _result(S(iops=1), "write"), workload="a", target="scratch",
                      host="local", repeat=1)
    store.update_run(writes, started=(T0 + timedelta(days=5)).isoformat(timespec="seconds"), status="completed",
                     pid=None)
    run = add(store, 6, [S(iops=500)])
    assert checks(store, run)["iops"].n == 5  # the write run is not a read baseline
    assert checks(store, run)["iops"].verdict == "REGRESSED"


def test_a_zero_median_has_no_relative_change() -> None:
    c = Check("j", "read", "iops", "PASS", 0.0, 0.0, 0.0, 0.1, 5, "", None)
    assert explain(c) == "0 IOPS vs baseline median 0 IOPS (-, limit 0 IOPS, n 5)"
    store_free = judge(0.0, [0.0] * 5, 0.10, True, 5)
    assert store_free == ("PASS", 0.0, 0.0, "")


# --- repeats, summarized ---------------------------------------------------------------------------
def test_summaries_keep_what_one_run_says_and_merge_what_several_do(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    run = add(store, 0, [S(iops=900, p50=90, p99=400), S(iops=1000, p50=100, p99=380), S(iops=1300, p50=130, p99=420),
                         S(iops=1100, p50=110, p99=390)])
    (row,) = summarize(store.get_results(run))
    lat = row.result.clat
    assert lat is not None
    # four repeats: medians of two middles; min of mins, max of maxes, samples added
    assert (row.result.iops, lat.percentiles["p50"], lat.percentiles["p99"]) == (1050, 105, 395)
    assert (lat.min, lat.max, lat.samples) == (45, 840, 9000 + 10000 + 13000 + 11000)
    assert lat.mean == pytest.approx(median([108, 120, 156, 132])) and lat.stdev == pytest.approx(26.25)
    assert list(lat.percentiles) == ["p50", "p99", "p99.9"]  # in percentile order
    assert (row.n, row.repeat, row.job_key, row.result.bound, row.result.series) == (4, 0, "local/scratch/a", None,
                                                                                      None)
    assert row.result.ios == int(median([9000, 10000, 13000, 11000]))
    assert row.result.runtime_s == 10.0 and row.result.bw_bytes_per_s == 100e6
    assert row.cvs["iops"] == pytest.approx(cv([900, 1000, 1300, 1100]))
    assert row.cvs["bw"] == 0 and row.cvs["p99"] == pytest.approx(cv([400, 380, 420, 390]))
    one = add(store, 1, [S()])
    (single,) = summarize(store.get_results(one))
    assert (single.n, single.iops_cv, single.cvs["iops"]) == (1, None, None)
    assert "p50" not in single.cvs or single.cvs["p50"] is None
