"""SNIA PTS steady state over rounds: synthetic series that are steady, trending, spiked, or never steady."""

from __future__ import annotations

import pytest

from diskbench.attribution.steady_state import steady_state


def test_steady_from_the_first_window() -> None:
    rounds = [10000.0, 10150, 9900, 10050, 9980, 10020]
    ss = steady_state(rounds)
    assert ss.achieved and ss.done and ss.window == (1, 5) and ss.rounds == 5
    assert ss.mean == pytest.approx(10016)
    assert ss.range_excursion == pytest.approx(250) and ss.range_allowed == pytest.approx(2003.2)
    assert ss.slope_excursion is not None and ss.slope_allowed is not None
    assert ss.slope_excursion <= ss.slope_allowed
    assert ss.text().startswith("steady state achieved: rounds 1-5, mean 10,016.0; range 250.0 (allowed 2,003.2), ")


def test_trend_is_not_steady_even_inside_the_range() -> None:
    rounds = [10000.0 * 1.035**i for i in range(25)]  # +3.5% a round: ~14% range and slope excursion per window
    ss = steady_state(rounds)
    assert ss.status == "not achieved" and ss.done and not ss.achieved
    assert ss.window == (21, 25) and ss.rounds == 25
    assert ss.range_excursion is not None and ss.range_allowed is not None
    assert ss.range_excursion <= ss.range_allowed  # the range test alone would pass
    assert ss.slope_excursion is not None and ss.slope_allowed is not None
    assert ss.slope_excursion > ss.slope_allowed
    assert "not achieved: rounds 21-25" in ss.text()


def test_one_outlier_delays_steady_state_until_it_leaves_the_window() -> None:
    rounds = [5000.0, 5020, 4990, 7600, 5010, 4980, 5005, 5015, 4995, 5000]
    ss = steady_state(rounds)
    assert ss.achieved and ss.window == (5, 9)  # every window holding round 4 fails the range test


def test_never_steady() -> None:
    rounds = [800.0 if i % 2 else 1200.0 for i in range(30)]  # 40% range, no trend
    ss = steady_state(rounds)
    assert ss.status == "not achieved" and ss.rounds == 25  # the PTS stops at 25 rounds
    assert ss.range_excursion == pytest.approx(400) and ss.range_allowed == pytest.approx(0.2 * ss.mean)  # type: ignore[operator]


def test_in_progress_until_a_window_or_25_rounds() -> None:
    assert steady_state([100.0, 101, 99]).status == "in progress"
    assert steady_state([100.0, 101, 99]).text() == "steady state in progress: 3 round(s), a window needs 5"
    short = steady_state([100.0, 150, 100, 150, 100, 150])
    assert short.status == "in progress" and not short.done and short.window == (2, 6)
    with pytest.raises(ValueError):
        steady_state([1.0] * 5, window=1)
