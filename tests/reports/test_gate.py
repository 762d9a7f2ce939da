"""The gate's statistics on synthetic histories, and every verdict's exit code through the CLI."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from diskbench.reports.gate import Policy, gate, judge
from diskbench.store import Store

from ..conftest import diskbench
from ..synth import add_run

STABLE = [1000, 1010, 990, 1005, 995, 1002, 998]


@pytest.mark.parametrize(("baseline", "value", "verdict"), [
    (STABLE, 1003, "PASS"),                       # stable history, same value
    (STABLE, 850, "REGRESSED"),                   # a step change down of 15%
    (STABLE, 1200, "IMPROVED"),                   # a step change up
    ([1000, 1010, 990, 1005, 995, 400], 1000, "PASS"),      # one outlier in the baseline is ignored
    ([1000, 1010, 990, 1005, 995, 400], 860, "REGRESSED"),  # ...and does not widen the band
    ([1000, 1200, 850, 1150, 900, 1100, 950], 980, "INCONCLUSIVE"),  # too noisy to see 10%
    ([1000, 1200, 850, 1150, 900, 1100, 950], 400, "REGRESSED"),     # but not blind to a big drop
    ([1000, 1010, 990], 500, "LEARNING"),         # too short: fewer than 5 runs
])
def test_judge_iops(baseline: list[float], value: float, verdict: str) -> None:
    assert judge(value, baseline, 0.10, True, 5)[0] == verdict


def test_judge_latency_is_worse_when_higher() -> None:
    lat = [100, 101, 99, 100, 102, 98]
    assert judge(120, lat, 0.15, False, 5)[0] == "REGRESSED"
    assert judge(80, lat, 0.15, False, 5)[0] == "IMPROVED"
    verdict, median, limit, _ = judge(110, lat, 0.15, False, 5)
    assert (verdict, median, limit) == ("PASS", 100, pytest.approx(115))


def _history(store: Store, n: int = 6, **kw: object) -> None:
    for day in range(n):
        add_run(store, day, {"a": [1000 + 5 * (day % 3)], "b": [500 + 3 * (day % 2)]}, **kw)  # type: ignore[arg-type]


def _gate(db: Path, run_id: str, *args: str) -> tuple[int, dict[str, object], str]:
    out = diskbench("gate", run_id, "--json", str(db.parent / "v.json"), "--junit", str(db.parent / "v.xml"),
                    "--markdown", str(db.parent / "v.md"), *args, db=db)
    return out.returncode, json.loads((db.parent / "v.json").read_text()), out.stdout + out.stderr


def test_pass_and_the_outputs(db: Path) -> None:
    store = Store(db)
    _history(store)
    run = add_run(store, 7, {"a": [1003], "b": [501]})
    code, verdict, _ = _gate(db, run)
    assert (code, verdict["verdict"]) == (0, "PASS")
    suite = ET.parse(db.parent / "v.xml").getroot()
    assert suite.get("tests") == str(len(verdict["checks"])) and suite.get("failures") == "0"
    assert "No suspect metric" in (db.parent / "v.md").read_text()
    assert Store(db).get_run(run)["accepted"] == 1


def test_regressed_exits_1_with_details_and_stays_out_of_baselines(db: Path) -> None:
    store = Store(db)
    _history(store)
    run = add_run(store, 7, {"a": [800], "b": [501]})
    code, verdict, text = _gate(db, run)
    assert (code, verdict["verdict"]) == (1, "REGRESSED")
    # units, the baseline median, the change, the limit and n: no bare 4.692e+04
    line = ("REGRESSED: local/scratch/a read iops: 800 IOPS vs baseline median 1,005 IOPS "
            "(-20.4%, limit 904 IOPS, n 6)")
    assert line in text and "e+0" not in text
    failure = ET.parse(db.parent / "v.xml").getroot().find("testcase/failure")
    assert failure is not None
    assert failure.get("message") == line.split(": ", 2)[2] and failure.text == failure.get("message")
    md = (db.parent / "v.md").read_text()
    assert ("| local/scratch/a | read | iops | **REGRESSED** | 800 IOPS | 1,005 IOPS | ▼ -20.4% | 904 IOPS | 6 |"
            in md)
    assert Store(db).get_run(run)["accepted"] == 0
    # the suspect run is not a baseline for the next one, until accepted
    nxt = add_run(store, 8, {"a": [1001], "b": [500]})
    checks = gate(Store(db), nxt, Policy()).checks
    assert {c.n for c in checks if c.metric == "iops"} == {6}
    # accepting a REGRESSED run makes it the new normal: without a terminal to ask on, --yes
    refused = diskbench("accept", run, db=db)
    assert refused.returncode == 2 and "was REGRESSED" in refused.stderr and "--yes" in refused.stderr
    assert {c.n for c in gate(Store(db), nxt, Policy()).checks if c.metric == "iops"} == {6}
    assert diskbench("accept", run, "--yes", db=db).returncode == 0
    checks = gate(Store(db), nxt, Policy()).checks
    assert {c.n for c in checks if c.metric == "iops"} == {7}
    # history keeps the verdict and says it was accepted
    history = diskbench("history", "-w", "a", db=db, env={"COLUMNS": "120"}).stdout
    assert "REGRESSED (accepted)" in history and history.count("(accepted)") == 1


def test_improved_learning_and_not_comparable_exit_0(db: Path) -> None:
    store = Store(db)
    first = add_run(store, 0, {"a": [1000]})
    assert _gate(db, first)[:2] == (0, {**_gate(db, first)[1], "verdict": "LEARNING"})
    _history(store)
    better = add_run(store, 7, {"a": [1500], "b": [700]})
    assert _gate(db, better)[1]["verdict"] == "IMPROVED"
    changed = add_run(store, 8, {"a": [1000], "b": [500]}, testbed="tb2")
    code, verdict, text = _gate(db, changed)
    assert (code, verdict["verdict"]) == (0, "NOT_COMPARABLE")
    assert "configuration changed" in text


def test_inconclusive_exits_4_only_with_strict(db: Path) -> None:
    store = Store(db)
    for day, iops in enumerate([1000, 1500, 700, 1300, 600, 1400, 800]):
        add_run(store, day, {"a": [iops]})
    run = add_run(store, 8, {"a": [990]})
    assert _gate(db, run)[:1] == (0,)
    code, verdict, _ = _gate(db, run, "--strict")
    assert (code, verdict["verdict"]) == (4, "INCONCLUSIVE")


def test_noisy_repeats_make_a_run_inconclusive(db: Path) -> None:
    store = Store(db)
    _history(store)
    run = add_run(store, 7, {"a": [1000, 700, 1300], "b": [500, 501, 499]})
    assert _gate(db, run, "--strict")[1]["verdict"] == "INCONCLUSIVE"


def test_a_run_noisier_than_the_threshold_is_inconclusive_not_regressed(db: Path) -> None:
    """As the README says: IOPS CVs of 18.8% and 26.3% cannot show a 10% change either way."""
    store = Store(db)
    _history(store)
    run = add_run(store, 7, {"a": [700, 1000, 650], "b": [300, 500, 280]})  # medians look 30-40% worse
    code, verdict, text = _gate(db, run)
    assert (code, verdict["verdict"]) == (0, "INCONCLUSIVE")
    assert "REGRESSED" not in text and "this run's repeats vary by" in text and "n 3" in text
    checks = {(c["job"], c["metric"]): c for c in verdict["checks"]}  # type: ignore[attr-defined]
    assert checks[("local/scratch/a", "iops")]["run_cv"] > 0.10
    assert _gate(db, run, "--strict")[0] == 4
    # the same medians without the spread are a regression
    steady = add_run(store, 8, {"a": [700, 700, 701], "b": [300, 301, 300]})
    assert _gate(db, steady)[:2][0] == 1


def test_infrastructure_failure_is_error_not_regression(db: Path) -> None:
    store = Store(db)
    _history(store)
    run = add_run(store, 7, {"a": [10], "b": [500]}, failed=("b",), status="partial")
    code, verdict, _ = _gate(db, run)
    assert (code, verdict["verdict"]) == (3, "ERROR")
    assert ET.parse(db.parent / "v.xml").getroot().find("testcase/error") is not None


def test_policy_thresholds_per_job(db: Path, tmp_path: Path) -> None:
    store = Store(db)
    _history(store)
    run = add_run(store, 7, {"a": [880], "b": [500]})  # 12% down
    assert _gate(db, run)[1]["verdict"] == "REGRESSED"
    policy = tmp_path / "gate.yaml"
    policy.write_text("jobs:\n  - match: '*/a'\n    thresholds: {iops: 0.2, bw: 0.2}\n")
    assert _gate(db, run, "--policy", str(policy))[1]["verdict"] == "PASS"
    policy.write_text("thresholds: {iops: lots}\n")
    bad = diskbench("gate", run, "--policy", str(policy), db=db)
    # no verdict could be reached: exit 3 (GATE_ERROR), never 1, which means REGRESSED
    assert bad.returncode == 3 and bad.stderr.startswith(f"error: {policy}:1: thresholds.iops")


def test_a_change_within_the_runs_own_per_second_noise_is_inconclusive(db: Path) -> None:
    """Issue 26: two quiet 3 s runs as the baseline and a third under background load must not flap.

    The third run's median is 20% down, past the 10% band, but its three per-second figures swing
    by +-25%: three standard errors of its mean (3 x 0.25 / sqrt(3) = 43%) cover the change.
    """
    store = Store(db)
    for day in range(2):
        add_run(store, day, {"a": [1000 + day]}, per_second={"a": [1000, 1001, 999]})
    policy = db.parent / "gate.yaml"
    policy.write_text("min_runs: 2\n")
    noisy = add_run(store, 3, {"a": [800]}, per_second={"a": [1050, 600, 750]})
    code, verdict, text = _gate(db, noisy, "--policy", str(policy))
    assert (code, verdict["verdict"]) == (0, "INCONCLUSIVE")
    assert "within this run's own noise" in text and "3 per-second figures" in text
    # the same drop measured steadily over ten seconds is a regression: the rule is not blind
    steady = add_run(store, 4, {"a": [800]}, per_second={"a": [800, 801, 799, 802, 798] * 2})
    code, verdict, _ = _gate(db, steady, "--policy", str(policy))
    assert (code, verdict["verdict"]) == (1, "REGRESSED")


def test_a_bad_gate_policy_names_file_line_and_key(db: Path) -> None:
    store = Store(db)
    run = add_run(store, 0, {"a": [1000]})
    policy = db.parent / "gate.yaml"
    policy.write_text("thresholds:\n  iops: 0.1\nmin_runs: none\n")
    out = diskbench("gate", run, "--policy", str(policy), db=db)
    assert out.returncode == 3 and out.stderr.count("\n") == 1 and "docs/reports-and-gate.md" in out.stderr
    assert f"{policy}:3: min_runs:" in out.stderr and "Traceback" not in out.stderr
