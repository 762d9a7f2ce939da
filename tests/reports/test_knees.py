"""The knee searches of a run as the reports show them: lines under the table (what each search found,
then its curve in depth order) and one chart per search, p50 and p99 against IOPS with each point
labelled with its depth. The record is written here as the runner stores it (tests/runner/test_knee.py
runs the whole path with fio)."""

from __future__ import annotations

from typing import Any

from diskbench.attribution.knee import FACTS, KneeRule, Point, make_curve
from diskbench.reports.formats import to_markdown, to_table
from diskbench.reports.knees import curve, cut_line, knee_charts, knee_json, knee_lines

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


WHY = ("fio was killed by SIGKILL (signal 9) from outside diskbench, exit -9, not by diskbench's timeout "
       "(check dmesg on the host: the kernel's OOM killer logs 'Killed process' there)")


def cut_run(stopped: str, points: list[Point], cut: dict[str, Any]) -> dict[str, Any]:
    """A run whose search was cut short, its record as the runner stores it (``complete`` false, ``cut``, and
    the cut at the end of its text); the curve rebuilt from its points cannot say so."""
    found = make_curve(points, KneeRule(max_depth=64), stopped)
    record = {"job": "local/dir:/d/rr", "base_key": "local/dir:/d/rr", "workload": "rr", "target": "dir:/d",
              "host": "local", "repeat": 1, "complete": False, **found.to_json(), "cut": cut}
    record["text"] = f"{record['text']}; cut short at step {cut['step']} (QD {cut['iodepth']}): {cut['why']}"
    return {"id": "r1", "profile": "p", "status": "partial", "facts": {"hostname": "h", FACTS: [record]}}


def test_a_search_cut_while_doubling_says_where_in_one_line_of_80_columns() -> None:
    run = cut_run("cut short", POINTS[:2], {"step": 3, "iodepth": 4, "why": WHY})
    lines = knee_lines(run)
    assert lines[0] == "knee: rr on dir:/d: search cut short: highest 2,000 IOPS at QD 2; 2 steps, QD 1-2"
    assert lines[1].startswith("  cut short at step 3 (QD 4): fio was killed by SIGKILL") and len(lines[1]) == 80
    assert lines[1].endswith("…") and lines[2].startswith("  curve: QD 1 ")
    table = to_table(run, []).lines(80)
    assert lines[1] in table and all(len(line) <= 80 for line in table)


def test_a_search_cut_while_bisecting_is_not_shown_as_whole() -> None:
    """Cut after the plateau, the curve has a knee as a whole search has: only the record says it is partial."""
    points = [p for p in POINTS if p.depth != 6]
    run = cut_run("saturated", points, {"step": 6, "iodepth": 6, "why": "interrupted"})
    assert curve(knee_json(run)[0]).knee is not None
    cut = "cut short at step 6 (QD 6): interrupted"
    assert knee_lines(run)[1] == f"  {cut}"
    markdown = to_markdown(run, [])
    assert "- rr on dir:/d: knee at QD 8: 6,000 IOPS" in markdown and f"\n  - {cut}\n" in markdown
    (chart,) = knee_charts([run])
    assert f"(within 10% of the highest, 6,000 at QD 8); 5 steps, QD 1-16; {cut}</p>" in chart


def test_a_whole_search_has_no_cut_line_and_an_old_partial_record_still_says_so() -> None:
    assert cut_line(knee_json(run())[0]) is None and "cut short" not in to_markdown(
        {**run(), "profile": "p", "status": "completed"}, [])
    (record,) = knee_json(run())
    assert cut_line({**record, "complete": False}) == "cut short: the curve is partial"
