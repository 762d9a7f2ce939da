"""Steady state over rounds, by the SNIA Solid State Storage Performance Test Specification (PTS) rule.

A device is in steady state when, over a measurement window of the last five rounds, (1) the data
excursion max - min is within 20% of the window's mean, and (2) the excursion of the least-squares line
through the window (|slope| x (rounds - 1)) is within 10% of the mean. The test runs round after round,
up to 25; if no window qualifies by then, steady state was "not achieved" and the report says so rather
than presenting the last round as if it were steady.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

WINDOW = 5
MAX_ROUNDS = 25
RANGE_LIMIT = 0.20
SLOPE_LIMIT = 0.10


@dataclass(frozen=True)
class SteadyState:
    """The determination. ``window`` is the measurement window as 1-based round numbers (first, last).

    ``status``: ``achieved``; ``not achieved`` (``max_rounds`` ran without a steady window); or
    ``in progress`` (fewer rounds so far - run another). The excursions are in the values' unit.
    """

    status: str
    window: tuple[int, int] | None
    rounds: int
    mean: float | None = None
    range_excursion: float | None = None
    range_allowed: float | None = None
    slope: float | None = None
    slope_excursion: float | None = None
    slope_allowed: float | None = None

    @property
    def achieved(self) -> bool:
        return self.status == "achieved"

    @property
    def done(self) -> bool:
        """No further round is needed: achieved, or out of rounds."""
        return self.status != "in progress"

    def text(self) -> str:
        if self.window is None or self.mean is None:
            return f"steady state {self.status}: {self.rounds} round(s), a window needs {WINDOW}"
        assert self.range_excursion is not None and self.range_allowed is not None
        assert self.slope_excursion is not None and self.slope_allowed is not None
        first, last = self.window
        return (f"steady state {self.status}: rounds {first}-{last}, mean {self.mean:,.1f}; "
                f"range {self.range_excursion:,.1f} (allowed {self.range_allowed:,.1f}), "
                f"slope excursion {self.slope_excursion:,.1f} (allowed {self.slope_allowed:,.1f})")


def steady_state(values: Sequence[float], *, window: int = WINDOW, max_rounds: int = MAX_ROUNDS,
                 range_limit: float = RANGE_LIMIT, slope_limit: float = SLOPE_LIMIT) -> SteadyState:
    """Evaluate rounds ``values`` (one figure per round, e.g. IOPS) in order; the first steady window wins.

    Rounds past ``max_rounds`` are ignored: the PTS stops there.
    """
    if window < 2 or max_rounds < window:
        raise ValueError(f"a window of {window} rounds within {max_rounds} rounds is not a steady-state test")
    rounds = list(values)[:max_rounds]
    last: SteadyState | None = None
    for end in range(window, len(rounds) + 1):
        last = _window(rounds[end - window:end], end - window + 1, end, range_limit, slope_limit)
        if last.achieved:
            return last
    status = "not achieved" if len(rounds) >= max_rounds else "in progress"
    if last is None:
        return SteadyState(status=status, window=None, rounds=len(rounds))
    return replace(last, status=status, rounds=len(rounds))


def _window(ys: list[float], first: int, last: int, range_limit: float, slope_limit: float) -> SteadyState:
    n = len(ys)
    mean = sum(ys) / n
    x_mean = (n - 1) / 2
    slope = sum((i - x_mean) * (y - mean) for i, y in enumerate(ys)) / sum((i - x_mean) ** 2 for i in range(n))
    range_excursion, slope_excursion = max(ys) - min(ys), abs(slope) * (n - 1)
    range_allowed, slope_allowed = range_limit * abs(mean), slope_limit * abs(mean)
    ok = mean != 0 and range_excursion <= range_allowed and slope_excursion <= slope_allowed
    return SteadyState("achieved" if ok else "in progress", (first, last), last, mean, range_excursion, range_allowed,
                       slope, slope_excursion, slope_allowed)
