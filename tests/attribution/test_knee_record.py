"""The knee search's record as users read it: its JSON (run.knees) and its one-line text, pinned on
hand-made curves whose figures are worked out beside each expectation (bench/mutation, 'knee search')."""

from __future__ import annotations

from diskbench.attribution.knee import MAX_DEPTH, P99_LIMIT, SATURATED, Curve, KneeRule, Point, make_curve

P1 = Point(1, 1000.4444, 900.12345, 1500.5556, 10.00049, "confident")


def test_a_point_round_trips_through_its_json_rounded_to_three_places() -> None:
    assert P1.to_json() == {"iodepth": 1, "iops": 1000.444, "p50_us": 900.123, "p99_us": 1500.556,
                            "seconds": 10.0, "stop": "confident"}
    assert Point.from_json(P1.to_json()) == Point(1, 1000.444, 900.123, 1500.556, 10.0, "confident")
    bare = Point(4, 2.0)
    assert bare.to_json() == {"iodepth": 4, "iops": 2.0, "p50_us": None, "p99_us": None, "seconds": None,
                              "stop": None}
    assert Point.from_json({"iodepth": "4", "iops": "2"}) == bare  # strings read as numbers, the rest None


def test_a_points_text_names_its_latency_only_when_it_has_a_p99() -> None:
    assert P1.text() == "QD 1: 1,000 IOPS, p50 900 µs, p99 1.50 ms"
    assert Point(2, 1234.5).text() == "QD 2: 1,234 IOPS"  # 1234.5 rounds half to even: 1,234


def test_a_saturated_curve_names_its_knee_peak_and_usable_depth() -> None:
    # 1 -> 2 doubles, 2 -> 4 adds 5% (< 10%): saturated at QD 4; the knee is the smallest depth within 10%
    # of the highest (2,100 at QD 4): QD 2 (2,000 * 1.1 = 2,200 >= 2,100); under 2 ms: QD 1 and 2, best QD 2
    rule = KneeRule(min_depth=1, max_depth=64, gain=0.10, p99_under_us=2000, bisect=1)
    pts = [Point(1, 1000, 500, 1000), Point(2, 2000, 600, 1500), Point(4, 2100, 1200, 3000)]
    curve = make_curve(pts, rule, SATURATED)
    assert curve.text() == ("knee at QD 2: 2,000 IOPS, p50 600 µs, p99 1.50 ms (within 10% of the highest, "
                            "2,100 at QD 4); 3 steps, QD 1-4; highest IOPS with p99 under 2.00 ms: 2,000 at QD 2 "
                            "(p99 1.50 ms)")
    doc = curve.to_json()
    assert {k: doc[k] for k in ("min_iodepth", "max_iodepth", "gain", "p99_under_us", "bisect", "stopped")} == {
        "min_iodepth": 1, "max_iodepth": 64, "gain": 0.10, "p99_under_us": 2000, "bisect": 1, "stopped": SATURATED}
    assert (doc["knee"]["iodepth"], doc["peak"]["iodepth"], doc["usable"]["iodepth"]) == (2, 4, 2)
    assert [p["iodepth"] for p in doc["points"]] == [1, 2, 4] and doc["text"] == curve.text()


def test_a_curve_that_never_flattens_says_how_much_its_last_doubling_added() -> None:
    # QD 8 -> 16: 1,500 -> 2,400 is +60%; no p99 limit, so no usable text
    rule = KneeRule(min_depth=2, max_depth=16)
    pts = [Point(2, 400), Point(4, 800), Point(6, 1000), Point(8, 1500), Point(16, 2400)]
    curve = make_curve(pts, rule, MAX_DEPTH)
    assert curve.growth() == (pts[3], pts[4], 2400 / 1500 - 1)
    assert curve.text() == ("no knee up to max_iodepth 16: IOPS still grew 60% from QD 8 to 16; highest 2,400 IOPS "
                            "at QD 16; raise knee.max_iodepth; 5 steps, QD 2-16")
    assert curve.to_json()["knee"] is None and curve.to_json()["usable"] is None
    one = make_curve([Point(16, 10)], KneeRule(min_depth=16, max_depth=16), MAX_DEPTH)
    assert one.growth() is None and one.text() == ("no knee up to max_iodepth 16; highest 10 IOPS at QD 16; "
                                                   "raise knee.max_iodepth; 1 steps, QD 16-16")
    zero = make_curve([Point(1, 0), Point(2, 5)], KneeRule(max_depth=2), MAX_DEPTH)
    assert zero.growth() == (Point(1, 0), Point(2, 5), float("inf"))


def test_a_curve_stopped_by_the_p99_limit_names_the_depth_that_passed_it() -> None:
    # QD 1 and 2 under 1 ms; QD 4 at 1.8 ms passed it while IOPS grew (1,500 -> 2,500)
    rule = KneeRule(max_depth=64, p99_under_us=1000)
    pts = [Point(1, 800, 300, 500), Point(2, 1500, 400, 900), Point(3, 2000, 500, 1200),
           Point(4, 2500, 700, 1800)]
    curve = make_curve(pts, rule, P99_LIMIT)
    assert curve.text() == ("no knee below the p99 limit: p99 1.20 ms at QD 3 passed 1.00 ms while IOPS still "
                            "grew; highest 2,500 IOPS at QD 4; 4 steps, QD 1-4; highest IOPS with p99 under "
                            "1.00 ms: 1,500 at QD 2 (p99 900 µs)")


def test_a_cut_short_search_and_a_limit_never_met() -> None:
    rule = KneeRule(p99_under_us=100)
    over = make_curve([Point(1, 50, 90, 300), Point(2, 90, 150, 250)], rule, "")
    assert over.to_json()["stopped"] == "cut short"
    assert over.text() == ("search cut short: highest 90 IOPS at QD 2; 2 steps, QD 1-2; no depth kept p99 under "
                           "100 µs (lowest p99 250 µs at QD 2)")
    blind = make_curve([Point(1, 50)], rule, "")
    assert blind.text() == "search cut short: highest 50 IOPS at QD 1; 1 steps, QD 1-1; no p99 measured to hold " \
                           "against 100 µs"
    assert isinstance(blind, Curve)
