"""The knee searches of a run as the reports show them: lines under the table (what each search found,
then its curve in depth order) and one chart per search, p50 and p99 against IOPS with each point
labelled with its depth. The record is written here as the runner stores it (tests/runner/test_knee.py
runs the whole path with fio)."""

from __future__ import annotations

from typing import Any

from diskbench.attribution.knee import FACTS, KneeRule, Point, make_curve
from diskbench.reports.knees import curve, knee_charts, knee_json, knee_lines

POINTS = [Point(1, 1000.0, 900.0, 1500.0, 2.0, "confident"), Point(2, 2000.0, 950.0, 1500.0, 2.0, "confident"),
          Point(4, 4000.0, 950.0, 1500.0, 3.0, "confident"), Point(6, 6000.0, 980.0, 1500.0, 3.0, "confident"),
          Point(8, 6000.0, 1300.0, 2000.0, 4.0, "max reached"), Point(16, 6000.0, 2600.0, 4000.0, 4.0, "confident")]


def run(**facts: Any) -> dict[str, Any]:
    found = make_curve(POINTS, KneeRule(max_depth=64, p99_under_us=2500.0), "saturated")
    record = {"job": "local/dir:/d/rr", "base_key": "local/dir:/d/rr", "workload": "rr", "target": "dir:/d",
              "host": "local", "repeat": 1, "complete": True, **found.to_json()}
    return {"id": "r1", "facts": {FACTS: [record], **facts}}


def test_the_table_says_what_each_search_found_and_its_curve() -> None:
    lines = knee_lines(run())
    assert lines == [
        "knee: rr on dir:/d: knee at QD 6: 6,000 IOPS, p50 980 µs, p99 1.50 ms (within 10% of the highest, 6,000 "
        "at QD 6); 6 steps, QD 1-16; highest IOPS with p99 under 2.50 ms: 6,000 at QD 6 (p99 1.50 ms)",
        "  curve: QD 1 1,000 IOPS p50 900 µs p99 1.50 ms; QD 2 2,000 IOPS p50 950 µs p99 1.50 ms; QD 4 4,000 IOPS "
        "p50 950 µs p99 1.50 ms; QD 6 6,000 IOPS p50 980 µs p99 1.50 ms; QD 8 6,000 IOPS p50 1.30 ms p99 2.00 ms; "
        "QD 16 6,000 IOPS p50 2.60 ms p99 4.00 ms"]


def test_a_run_without_a_search_shows_nothing() -> None:
    assert knee_lines({"id": "r", "facts": {}}) == [] and knee_json({"id": "r", "facts": {}}) == []
    assert knee_charts([{"id": "r", "facts": {"hostname": "h"}}]) == []


def test_the_record_reads_back_as_the_curve() -> None:
    (record,) = knee_json(run())
    got = curve(record)
    assert got.points == POINTS and got.knee == POINTS[3] and got.usable == POINTS[3]
    assert got.text() == record["text"]


def test_the_chart_labels_each_point_with_its_depth_and_draws_the_limit() -> None:
    (chart,) = knee_charts([run()])
    assert "rr on dir:/d: latency vs IOPS, knee search" in chart
    for depth in (1, 2, 4, 6, 8, 16):
        assert f">QD {depth}<" in chart
    assert "p99 limit 2.50 ms" in chart and "knee at QD 6" in chart
