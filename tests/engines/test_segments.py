"""How long the segments of a segmented stop: job are, what they may add to a plan, and the fewest a job
runs (the least the plan counts)."""

from __future__ import annotations

import pytest

from diskbench.attribution.stop_rule import StopRule
from diskbench.engines.segments import SEGMENT_MIN_S, START_S, fewest, least, lengths, overhead, shortest


@pytest.mark.parametrize(("min_s", "max_s", "expected"), [
    (10, 60, [5] * 12),  # a fifth of min is 2 s: the 5 s floor
    (25, 60, [5] * 12),  # a fifth of min is the floor itself
    (30, 60, [6] * 10),  # min over five batches: one segment per batch at min
    (31, 60, [7] * 8 + [4]),  # whole seconds, rounded up; the last one what is left of max
    (10, 12, [5, 5, 2]),
    (3, 3, [3]),  # max shorter than the floor: one segment of max
    (10, 10.5, [5, 5]),  # DiskSpd counts whole seconds
])
def test_lengths_add_up_to_max(min_s: float, max_s: float, expected: list[int]) -> None:
    rule = StopRule(within=0.02, confidence=0.95, min_s=min_s, max_s=max_s)
    got = lengths(rule)
    assert got == expected and sum(got) == int(max_s)
    assert all(n >= min(SEGMENT_MIN_S, int(max_s)) for n in got[:-1])
    assert overhead(rule) == (len(got) - 1) * START_S


@pytest.mark.parametrize(("min_s", "max_s", "fewest_", "shortest_"), [
    (10, 60, 5, 25),  # segments of 5 s: the rule's five batches need five of them, 25 s, past min
    (25, 60, 5, 25),  # five segments are min itself
    (30, 60, 5, 30),  # a fifth of min each: five segments at min
    (31, 60, 5, 35),  # 7 s each: five of them pass min (31 s)
    (10, 22, 5, 22),  # the fifth is what is left of max
    (10, 12, 3, 12),  # max allows only three: every one of them
    (3, 3, 1, 3),  # one segment of max
])
def test_the_fewest_segments_are_five_and_min(min_s: float, max_s: float, fewest_: int, shortest_: float) -> None:
    rule = StopRule(within=0.02, confidence=0.95, min_s=min_s, max_s=max_s)
    assert (fewest(rule), shortest(rule)) == (fewest_, shortest_)
    assert least(rule) == shortest_ + (fewest_ - 1) * START_S
