"""DiskSpd's part of a segmented ``stop:`` job (``engines/segments.py``).

DiskSpd stopped early writes no result, so a job with ``stop:`` runs as short DiskSpd runs. The
first segment of an attempt keeps the workload's warm-up (``ramp_time``, or DiskSpd's own default
``-W`` of 5 s when the workload gives none): the target was idle before it. Every later segment
runs with ``-W0``: the one before it has just kept the target busy, and DiskSpd's threads reach
their queue depth within milliseconds, so a warm-up per segment would only cost time.

A segment is one interval of the stop rule: its I/Os, bytes and measured time, and for its p99 a
histogram made from DiskSpd's percentile points (the value at each point weighs the I/Os between
it and the point before, by DiskSpd's nearest-rank rule), whose p99 is DiskSpd's printed p99 and
whose merge with others (a batch of several segments) lies between the segments' p99s. That
histogram serves the rule's batches only; the result's percentiles come from ``merge.py``.
"""

from __future__ import annotations

import math

from diskbench.attribution.stop_rule import Sample
from diskbench.model import GroupResult, Latency
from diskbench.profile.workload import Workload

from ..segments import Segments
from .merge import merge_runs

DIRECTIONS = ("read", "write")  # what the stop rule judges (a mix's total is their sum)


class DiskspdSegments(Segments):
    def workload(self, workload: Workload, seconds: int, *, first: bool) -> Workload:
        update: dict[str, object] = {"runtime": f"{seconds}s"}
        if not first:
            update["ramp_time"] = "0s"
        return workload.model_copy(update=update)

    def sample(self, groups: list[GroupResult]) -> dict[str, Sample]:
        seconds = max((d.runtime_s for g in groups for d in g.directions), default=0.0)
        out: dict[str, Sample] = {}
        for name in DIRECTIONS:
            parts = [d for g in groups if (d := g.direction(name)) is not None]
            if not parts:
                continue
            hist: dict[int, int] = {}
            for d in parts:
                for key, n in point_histogram(d.clat, d.ios).items():
                    hist[key] = hist.get(key, 0) + n
            out[name] = Sample(seconds, sum(d.ios for d in parts), sum(d.io_bytes for d in parts), hist)
        return out

    def merge(self, parts: list[list[GroupResult]]) -> list[GroupResult]:
        return merge_runs(parts)


def point_histogram(clat: Latency | None, ios: int) -> dict[int, int]:
    """DiskSpd's percentile points as a histogram of ``ios`` I/Os (ns -> I/Os): the value at point p
    holds the I/Os of ranks ``ceil(p' N / 100) + 1 .. ceil(p N / 100)`` (p' the point before), so
    its percentile p, by the nearest-rank rule, is DiskSpd's own. Empty without latency figures."""
    if clat is None or ios <= 0:
        return {}
    points = sorted((float(k[1:]), v) for k, v in clat.percentiles.items())
    hist: dict[int, int] = {}
    below = 0
    for p, value in points:
        rank = min(ios, math.ceil(p * ios / 100 - 1e-9))
        if rank > below:
            key = round(value * 1000)
            hist[key] = hist.get(key, 0) + rank - below
            below = rank
    return hist
