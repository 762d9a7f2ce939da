"""Warnings before a run starts: workloads too short or too small to give stable numbers here.

Back-to-back runs of a 5-second, 128 MiB profile on a small machine differ by a third (106,619 /
109,040 / 65,528 IOPS): the gate then sees noise, not the disk. Saying so before the run is
cheaper than a red build after it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .units import human_bytes, parse_duration, parse_size

if TYPE_CHECKING:
    from .plan import Plan

MIN_RUNTIME_S = 30.0
MIN_WORKING_SET = 1024**3
DEFAULT_RUNTIME, DEFAULT_SIZE, DEFAULT_RAMP = "30s", "1G", "2s"  # the built-in workload defaults


def local_memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _names(names: Iterable[str]) -> str:
    unique = list(dict.fromkeys(names))
    return ", ".join(unique[:4]) + (f" and {len(unique) - 4} more" if len(unique) > 4 else "")


def stability_warnings(plan: Plan, cpus: int | None = None, memory: int | None = None) -> list[str]:
    """One line per kind of problem, naming the workloads; the local machine's CPUs and memory
    are used for jobs that run here (remote machines are not known before they are reached)."""
    cpus = cpus if cpus is not None else os.cpu_count()
    memory = memory if memory is not None else local_memory_bytes()
    short: list[str] = []
    busy: list[str] = []
    small: list[str] = []
    cached: list[str] = []
    unramped: list[str] = []
    for job in plan.jobs:
        for part in job.parts:
            w = part.workload
            try:
                runtime = parse_duration(w.runtime if w.runtime is not None else DEFAULT_RUNTIME)
                size = parse_size(w.size if w.size is not None else DEFAULT_SIZE)
            except ValueError:
                continue
            numjobs = w.numjobs or 1
            working_set = size * numjobs
            if runtime < MIN_RUNTIME_S:
                short.append(w.name)
            if w.drain_burst and parse_duration(w.ramp_time if w.ramp_time is not None else DEFAULT_RAMP) == 0:
                unramped.append(w.name)
            if job.machine == "local" and cpus and numjobs > cpus:
                busy.append(f"{w.name} ({numjobs} jobs)")
            if working_set < MIN_WORKING_SET:
                small.append(f"{w.name} ({human_bytes(working_set)})")
            elif job.machine == "local" and memory and w.direct is False and working_set <= memory:
                cached.append(w.name)
    out = []
    if short:
        out.append(f"{_names(short)}: measure less than {MIN_RUNTIME_S:.0f} s; results vary from run to run "
                   "(set defaults.runtime: 60s, or use --repeats 3 and let the gate judge the spread)")
    if busy:
        out.append(f"{_names(busy)}: more jobs than this machine's {cpus} CPUs; the CPU, not the disk, may limit")
    if small:
        out.append(f"{_names(small)}: working set under 1 GiB; caches in the disk and its controller "
                   "may answer instead of the media (set defaults.size: 4G)")
    if cached:
        out.append(f"{_names(cached)}: buffered I/O on a working set that fits in this machine's "
                   f"{human_bytes(memory or 0)} of memory; the page cache is measured, not the disk")
    if unramped:
        out.append(f"{_names(unramped)}: drain_burst with ramp_time 0; the credits a disk earns in the seconds "
                   "between draining and measuring are spent at the start and counted (keep ramp_time: 2s)")
    return out
