"""Pitfalls that make a disk figure lie, found from the job and its result: each a warning with the fix.

They are warnings, not errors: the figure is still fio's and is kept, but a reader should not take it
for the disk's. Each message says what happened and what to change, in one line.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import DirectionResult
from ..units import human_bytes, latency
from .limit import Limit

SHORT_RUN_S = 10.0  # a token bucket lets seconds of excess through; shorter runs show no cap reliably
SMALL_WORKING_SET = 1024**3  # a device or controller cache holds less than this easily
MEMORY_LATENCY_US = 5.0  # no network disk and no flash device completes a read this fast


@dataclass(frozen=True)
class JobFacts:
    """What the job was, besides its result."""

    direct: bool
    working_set_bytes: int
    raw_device: str | None  # the device fio ran on, when it ran on one
    written: bool  # diskbench wrote the blocks first (precondition, or a write job earlier in the run)
    hosts: int = 1
    same_offsets: bool = True  # every host issued the same random offsets (hosts > 1)
    stderr: str = ""
    rate_limited: bool = False


def pitfalls(result: DirectionResult, job: JobFacts, limits: Sequence[Limit], bound: dict[str, Any] | None,
             deliberate: Collection[str] = ()) -> list[str]:
    """What may make this figure mislead; a kind the profile marks ``deliberate:`` (plan said its
    reason once) is not said again after the run."""
    out: list[str] = []
    reads = result.direction in ("read", "total")
    kind = (bound or {}).get("kind")
    if not job.direct and "page_cache" not in deliberate:
        out.append("direct=0: the page cache is in the path, so this is partly RAM's figure; set direct: true")
    if "cache invalidation" in job.stderr:
        out.append("fio could not drop the page cache (cache invalidation failed): reads may come from RAM; "
                   "run as root or set direct: true")
    if reads and result.clat and 0 < result.clat.min < MEMORY_LATENCY_US and result.ios:
        out.append(f"minimum read latency {latency(result.clat.min)} is below any disk's floor: some reads came "
                   "from memory (page cache, or blocks never written); precondition the target")
    if result.direction == "read" and job.raw_device and not job.written:
        out.append(f"read blocks of {job.raw_device} that diskbench never wrote: a thin-provisioned disk answers "
                   "them without touching media; set precondition: true on the target")
    if reads and job.working_set_bytes and job.working_set_bytes < SMALL_WORKING_SET \
            and "small_working_set" not in deliberate:
        out.append(f"working set {human_bytes(job.working_set_bytes)}: small enough for device and host caches "
                   "to hold; use size: 1G or more per job to measure the disk")
    if job.hosts > 1 and job.same_offsets:
        out.append(f"{job.hosts} clients with randrepeat on issue the same random offsets; set randrepeat: 0 "
                   "in extra")
    if kind == "queue" and limits and not job.rate_limited and "low_queue_depth" not in deliberate:
        out.append("too few I/Os in flight to reach any limit: the figure is the latency's; raise iodepth or "
                   "numjobs to measure the cap")
    if kind == "cpu":
        out.append("fio's CPU was saturated: the client, not the disk, set the figure; add numjobs or a faster "
                   "ioengine (io_uring)")
    burst = [lim for lim in limits if lim.burst and lim.minutes]
    if kind == "burst" and not (bound or {}).get("phases") and burst and "burst" not in deliberate:
        minutes = min(lim.minutes or 0 for lim in burst)
        out.append(f"ran {result.runtime_s:,.0f} s on burst credits (up to {minutes:g} min at full credits): "
                   "the baseline is lower; run longer than the credits last, or drain_burst: true, to measure it")
    elif 0 < result.runtime_s < SHORT_RUN_S and limits and "short_runtime" not in deliberate:
        out.append(f"ran {result.runtime_s:,.1f} s: too short for a cap's token bucket to show; run 30 s or more "
                   "(time_based)")
    return out
