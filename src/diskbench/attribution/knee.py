"""The knee of the latency-vs-load curve: where more queue depth stops buying IOPS and buys latency.

Engine-neutral and pure: the runner measures a depth when ``Search.next_depth`` asks for it and
hands the result back with ``Search.add``; what the search found is ``Search.curve()``.

**The curve.** A workload run at queue depth q (per job; ``numjobs`` jobs keep N = q x numjobs I/Os
in flight) gives X(q) IOPS. By Little's law the mean latency is R = N / X: while X grows in
proportion to q the latency stays flat; once X stops growing every added I/O in flight waits in
a queue, and the latency grows in proportion to the depth (the "hockey stick").

**The knee.** Doubling the depth from ``min_depth`` (1, 2, 4, ...), the curve has reached its
plateau at the first doubling that adds less than ``gain`` (10%) to the highest IOPS measured
before it: X(2q) < (1 + gain) * max X(<= q). The knee is then the smallest measured depth whose
IOPS are within ``gain`` of the highest measured: X(q*) >= max X / (1 + gain). At the knee the
device delivers all but ``gain`` of what it can; past it, by Little's law, a k-fold deeper queue
raises the mean latency at least k / (1 + gain)-fold for at most ``gain`` more IOPS. This is the
"knee capacity" of Jain (*The Art of Computer Systems Performance Analysis*, Wiley 1991, 3.3:
"the throughput at the knee", beyond which "the response time increases rapidly as a function of
the load but the gain in throughput is small"); the other figure Jain names there, the "usable
capacity" ("the maximum achievable throughput without exceeding a prespecified response-time
limit"), is the highest IOPS whose p99 stays under ``p99_under``.

**The search.** Doubling until the plateau shows (or the p99 passes ``p99_under`` after some depth
kept under it, or the depth reaches ``max_depth``), then bisection: the knee lies between the
knee so far and the measured depth below it (the last doubling before the plateau), so the midpoint
is measured and the knee recomputed, ``bisect`` times; the highest IOPS under the p99 limit is
refined alike between the last depth under the limit and the first above it. A curve that never
flattens stops at ``max_depth`` with no knee, and says how much the last doubling still added.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..units import latency

SATURATED, P99_LIMIT, MAX_DEPTH = "saturated", "p99 limit", "max_iodepth"
FACTS = "knees"  # the run's facts: one record per knee search (the runner writes them, reports read them)
NOTE = "knee search: "  # the note on a search's own result, before its curve's text (explain shows it)


@dataclass(frozen=True)
class KneeRule:
    """The search's settings: the depths it may measure, the growth that counts, the p99 limit (µs)
    and how many bisections refine each bracket."""

    min_depth: int = 1
    max_depth: int = 256
    gain: float = 0.10
    p99_under_us: float | None = None
    bisect: int = 1


@dataclass(frozen=True)
class Point:
    """One measured depth: its IOPS (every direction together), its p50 and p99 (the worst
    direction's, µs), how long it measured and how its adaptive stop ended (if it had one)."""

    depth: int
    iops: float
    p50_us: float | None = None
    p99_us: float | None = None
    seconds: float | None = None
    stop: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"iodepth": self.depth, "iops": round(self.iops, 3),
                "p50_us": None if self.p50_us is None else round(self.p50_us, 3),
                "p99_us": None if self.p99_us is None else round(self.p99_us, 3),
                "seconds": None if self.seconds is None else round(self.seconds, 3), "stop": self.stop}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Point:
        return cls(int(data["iodepth"]), float(data["iops"]), data.get("p50_us"), data.get("p99_us"),
                   data.get("seconds"), data.get("stop"))

    def text(self) -> str:
        lat = f", p50 {latency(self.p50_us)}, p99 {latency(self.p99_us)}" if self.p99_us is not None else ""
        return f"QD {self.depth}: {self.iops:,.0f} IOPS{lat}"


def ladder(rule: KneeRule) -> list[int]:
    """The doubling depths: min_depth, twice that, ..., max_depth last (itself even when not a doubling)."""
    out = [rule.min_depth]
    while out[-1] < rule.max_depth:
        out.append(min(out[-1] * 2, rule.max_depth))
    return out


def steps_at_most(rule: KneeRule) -> int:
    """The most depths the search measures: every doubling, and every bisection of both brackets."""
    return len(ladder(rule)) + rule.bisect * (2 if rule.p99_under_us is not None else 1)


def knee_of(points: Iterable[Point], gain: float) -> Point:
    """The smallest depth whose IOPS are within ``gain`` of the highest measured."""
    ordered = sorted(points, key=lambda p: p.depth)
    top = max(p.iops for p in ordered)
    return next(p for p in ordered if p.iops * (1 + gain) >= top)


def _under(p: Point, limit: float | None) -> bool:
    return limit is not None and p.p99_us is not None and p.p99_us <= limit


@dataclass(frozen=True)
class Curve:
    """What a search found: every measured point (by depth), why the doubling ended (``reason``:
    saturated, p99 limit, max_iodepth; empty when the search was cut short), the knee (None
    unless saturated), the highest IOPS measured, and the highest IOPS with p99 under the limit."""

    rule: KneeRule
    points: list[Point]
    reason: str
    knee: Point | None
    peak: Point
    usable: Point | None

    def growth(self) -> tuple[Point, Point, float] | None:
        """The last doubling measured (the two deepest doubling depths) and how much it added, relative:
        what a curve without a knee still gained."""
        by_depth = {p.depth: p for p in self.points}
        rungs = [by_depth[d] for d in ladder(self.rule) if d in by_depth]
        if len(rungs) < 2:
            return None
        a, b = rungs[-2], rungs[-1]
        return a, b, (b.iops / a.iops - 1) if a.iops > 0 else float("inf")

    def text(self) -> str:
        """One line: the knee (or why there is none), the peak, and the figure under the p99 limit."""
        span = f"{len(self.points)} steps, QD {self.points[0].depth}-{self.points[-1].depth}"
        gain = f"{self.rule.gain * 100:g}%"
        if self.knee is not None:
            out = f"knee at {self.knee.text()} (within {gain} of the highest, {self.peak.iops:,.0f} at QD " \
                  f"{self.peak.depth}); {span}"
        elif self.reason == P99_LIMIT:
            over = next((p for p in self.points if not _under(p, self.rule.p99_under_us)
                         and p.depth > self._ok_depth()), self.points[-1])
            out = (f"no knee below the p99 limit: p99 {latency(over.p99_us)} at QD {over.depth} passed "
                   f"{latency(self.rule.p99_under_us)} while IOPS still grew; highest {self.peak.iops:,.0f} IOPS "
                   f"at QD {self.peak.depth}; {span}")
        elif self.reason == MAX_DEPTH:
            grew = self.growth()
            still = (f": IOPS still grew {grew[2] * 100:,.0f}% from QD {grew[0].depth} to {grew[1].depth}"
                     if grew else "")
            out = (f"no knee up to max_iodepth {self.rule.max_depth}{still}; highest {self.peak.iops:,.0f} IOPS at "
                   f"QD {self.peak.depth}; raise knee.max_iodepth; {span}")
        else:
            out = f"search cut short: highest {self.peak.iops:,.0f} IOPS at QD {self.peak.depth}; {span}"
        return out + self.usable_text()

    def usable_text(self) -> str:
        limit = self.rule.p99_under_us
        if limit is None:
            return ""
        if self.usable is not None:
            return (f"; highest IOPS with p99 under {latency(limit)}: {self.usable.iops:,.0f} at QD "
                    f"{self.usable.depth} (p99 {latency(self.usable.p99_us)})")
        known = [p for p in self.points if p.p99_us is not None]
        if not known:
            return f"; no p99 measured to hold against {latency(limit)}"
        low = min(known, key=lambda p: p.p99_us or 0.0)
        return (f"; no depth kept p99 under {latency(limit)} (lowest p99 {latency(low.p99_us)} at QD "
                f"{low.depth})")

    def _ok_depth(self) -> int:
        ok = [p.depth for p in self.points if _under(p, self.rule.p99_under_us)]
        return max(ok) if ok else 0

    def to_json(self) -> dict[str, Any]:
        r = self.rule
        return {"min_iodepth": r.min_depth, "max_iodepth": r.max_depth, "gain": r.gain,
                "p99_under_us": r.p99_under_us, "bisect": r.bisect, "stopped": self.reason or "cut short",
                "knee": self.knee.to_json() if self.knee else None, "peak": self.peak.to_json(),
                "usable": self.usable.to_json() if self.usable else None,
                "points": [p.to_json() for p in self.points], "text": self.text()}


@dataclass
class Search:
    """The knee search (see the module's docstring): ``next_depth`` says which depth to measure (None:
    done), ``add`` takes its result, ``curve`` says what was found."""

    rule: KneeRule
    points: dict[int, Point] = field(default_factory=dict)
    climbed: list[int] = field(default_factory=list)  # the doubling depths measured, in order
    reason: str = ""  # why the doubling ended; empty while it goes on
    halved: dict[str, int] = field(default_factory=lambda: {"knee": 0, "limit": 0})

    def next_depth(self) -> int | None:
        """The depth to measure next: the next doubling, else a bisection; None once done. A
        bisection it names counts as made (the caller measures it, or the search ends)."""
        rungs = ladder(self.rule)
        if not self.reason:
            return rungs[len(self.climbed)]
        for kind, bracket in (("knee", self._knee_bracket()), ("limit", self._limit_bracket())):
            if bracket is not None and self.halved[kind] < self.rule.bisect and bracket[1] - bracket[0] >= 2:
                self.halved[kind] += 1
                return (bracket[0] + bracket[1]) // 2
        return None

    def add(self, point: Point) -> None:
        self.points[point.depth] = point
        if not self.reason and point.depth == ladder(self.rule)[len(self.climbed)]:
            self.climbed.append(point.depth)
            self.reason = doubling_ends([self.points[d] for d in self.climbed], self.rule)

    def _knee_bracket(self) -> tuple[int, int] | None:
        """The knee so far and the measured depth below it."""
        if self.reason != SATURATED:
            return None
        knee = knee_of(self.points.values(), self.rule.gain).depth
        below = [d for d in self.points if d < knee]
        return (max(below), knee) if below else None

    def _limit_bracket(self) -> tuple[int, int] | None:
        """The depth of the highest IOPS under the p99 limit and the next measured depth, when that one
        is over the limit."""
        limit = self.rule.p99_under_us
        ok = [p for p in self.points.values() if _under(p, limit)]
        if not ok:
            return None
        best = max(ok, key=lambda p: (p.iops, -p.depth)).depth
        above = [d for d in self.points if d > best]
        if not above or _under(self.points[min(above)], limit):
            return None
        return best, min(above)

    def curve(self) -> Curve:
        """What the search found so far (at least one point)."""
        points = sorted(self.points.values(), key=lambda p: p.depth)
        if not points:
            raise ValueError("the knee search measured no depth")
        return make_curve(points, self.rule, self.reason)


def doubling_ends(climbed: list[Point], rule: KneeRule) -> str:
    """Why the doubling ends at the last of ``climbed`` (the doubling depths in order), or empty: the
    plateau (it added less than ``gain`` to the best before it), the p99 limit passed after an
    earlier depth kept under it, or the deepest depth allowed."""
    *before, last = climbed
    if before and last.iops < (1 + rule.gain) * max(p.iops for p in before):
        return SATURATED
    limit = rule.p99_under_us
    if limit is not None and last.p99_us is not None and last.p99_us > limit and any(_under(p, limit) for p in before):
        return P99_LIMIT
    return MAX_DEPTH if last.depth >= rule.max_depth else ""


def make_curve(points: list[Point], rule: KneeRule, reason: str) -> Curve:
    ok = [p for p in points if _under(p, rule.p99_under_us)]
    return Curve(rule, points, reason, knee_of(points, rule.gain) if reason == SATURATED else None,
                 max(points, key=lambda p: (p.iops, -p.depth)),
                 max(ok, key=lambda p: (p.iops, -p.depth)) if ok else None)


def curve_of(points: Iterable[Point], rule: KneeRule) -> Curve:
    """The same definition over any set of measured depths (an exhaustive sweep): the doubling depths
    among them decide whether the plateau shows, then the knee is found among all of them."""
    by_depth = {p.depth: p for p in points}
    climbed: list[Point] = []
    reason = ""
    for depth in ladder(rule):
        if depth not in by_depth:
            break
        climbed.append(by_depth[depth])
        reason = doubling_ends(climbed, rule)
        if reason:
            break
    return make_curve(sorted(by_depth.values(), key=lambda p: p.depth), rule, reason)
