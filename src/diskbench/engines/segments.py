"""A ``stop:`` job as a series of short engine runs, for an engine that cannot end a job early.

fio is ended the moment its answer is known and still writes its whole result (``Live``). An
engine that cannot be stopped that way (DiskSpd: stopped early, it writes no result at all) runs
the job as **segments** instead: short runs of the same job, one after another, each parsed and
stored as it ends, until the stop rule says the answer is known or the segments add up to
``max``. Each segment is one interval of the stop rule (``attribution/stop_rule.py``), so its five
batches are batches of whole segments: batch means over segments. The engine says what a segment
runs (``Segments.workload``), what it measured as the rule's interval (``sample``) and how the
segments' results merge into one (``merge``: exactly where its output allows).

The length is the same for every engine, and ``plan`` counts from it: ``SEGMENT_MIN_S`` or a fifth
of ``min`` (whichever is longer), in whole seconds. A fifth of ``min``, so that the first stage of
the rule has its five batches at ``min`` when ``min`` allows; at least 5 s, since each segment
costs an engine start (with DiskSpd, also the check of its profile on the host), which this keeps
to a small share of the time measured. The last segment is shorter when ``max`` is not a
multiple of the length, so that the segments never add up to more than ``max``. ``plan`` counts
every segment ``max`` allows as the most a job takes, and its ``fewest`` (five, and ``min``) as the
least: the stop rule cannot judge fewer.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..attribution.stop_rule import Sample, StopRule
    from ..model import GroupResult
    from ..profile.workload import Workload

SEGMENT_MIN_S = 5  # the shortest segment: an engine start costs about a second
BATCH_SEGMENTS = 5  # the stop rule's batches (confidence.BATCHES): min over five is one segment per batch
START_S = 2.0  # what each segment after the first adds to a plan: the engine's start and its profile check


def lengths(rule: StopRule) -> list[int]:
    """The most segments a job with ``rule`` runs, each in whole seconds (the last one may be
    shorter), adding up to ``max``; the job stops after any of them once the rule is satisfied."""
    total = max(1, math.floor(rule.max_s + 1e-9))
    each = min(total, max(SEGMENT_MIN_S, math.ceil(rule.min_s / BATCH_SEGMENTS - 1e-9)))
    out = [each] * (total // each)
    return out + [total % each] if total % each else out


def fewest(rule: StopRule) -> int:
    """The fewest segments a job with ``rule`` runs before it can stop: the stop rule judges nothing
    before ``min``, nor before it has five intervals (its five batches, one segment each), so a short
    ``min`` still takes five segments; every segment ``max`` allows when it allows fewer."""
    plan = lengths(rule)
    done = 0
    for number, seconds in enumerate(plan, 1):
        done += seconds
        if number >= BATCH_SEGMENTS and done + 1e-9 >= rule.min_s:
            return number
    return len(plan)


def shortest(rule: StopRule) -> float:
    """The least a job with ``rule`` measures as segments: its ``fewest`` segments, max(min, five
    segments) when ``max`` allows that, which is what the plan's adaptive minimum counts."""
    return float(sum(lengths(rule)[:fewest(rule)]))


def least(rule: StopRule) -> float:
    """The least a job with ``rule`` takes as segments: its ``fewest`` segments and their starts."""
    return shortest(rule) + (fewest(rule) - 1) * START_S


def overhead(rule: StopRule) -> float:
    """What running ``rule``'s job as segments may add to its time: one start per extra segment."""
    return (len(lengths(rule)) - 1) * START_S


class Segments(ABC):
    """An engine's part of a segmented ``stop:`` job."""

    @abstractmethod
    def workload(self, workload: Workload, seconds: int, *, first: bool) -> Workload:
        """The workload one segment runs: ``seconds`` long; with the workload's warm-up only when
        ``first`` (the first segment of an attempt: the target has been idle before it)."""

    @abstractmethod
    def sample(self, groups: list[GroupResult]) -> dict[str, Sample]:
        """One segment's results as one interval of the stop rule, by direction (read, write)."""

    @abstractmethod
    def merge(self, parts: list[list[GroupResult]]) -> list[GroupResult]:
        """The segments' results (each segment's groups, in order) as the job's one result: exact
        where the engine's output allows, and saying so where it does not."""
