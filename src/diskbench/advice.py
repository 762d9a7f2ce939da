"""Warnings before a run starts: workloads too short or too small to give stable numbers here.

Back-to-back runs of a 5-second, 128 MiB profile on a small machine differ by a third (106,619 /
109,040 / 65,528 IOPS): the gate then sees noise, not the disk. Saying so before the run is
cheaper than a red build after it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .units import human_bytes, parse_duration, parse_size

if TYPE_CHECKING:
    from .plan import Plan
    from .profile.workload import Workload

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


def listed(names: Iterable[str]) -> str:
    unique = list(dict.fromkeys(names))
    return ", ".join(unique[:4]) + (f" and {len(unique) - 4} more" if len(unique) > 4 else "")


@dataclass(frozen=True)
class Advice:
    """One kind of finding over the workloads it concerns: a warning, or, where the profile says
    the choice is deliberate, a note with its reason (said once, not on every run)."""

    kind: str
    text: str
    reason: str | None = None

    def __str__(self) -> str:
        return self.text


def sort_out(kind: str, found: Sequence[tuple[str, Workload]], what: Callable[[str], str], fix: str) -> list[Advice]:
    """One warning for the workloads that did not mean it, one note per reason for those that did."""
    by_reason: dict[str | None, list[str]] = {}
    for label, w in found:
        by_reason.setdefault((w.deliberate or {}).get(kind), []).append(label)
    out = []
    for reason, labels in by_reason.items():
        out.append(Advice(kind, said(what(listed(labels)), fix, reason), reason))
    return out


def said(text: str, fix: str, reason: str | None) -> str:
    """The warning with its fix; or, chosen on purpose, what it is (up to its first ';') and why."""
    if reason is not None:
        return f"{text.split(';')[0]}, on purpose: {reason}"
    return f"{text} ({fix})" if fix else text


def stability_advice(plan: Plan, cpus: int | None = None, memory: int | None = None) -> list[Advice]:
    """One line per kind of problem, naming the workloads; the local machine's CPUs and memory
    are used for jobs that run here (remote machines are not known before they are reached)."""
    cpus = cpus if cpus is not None else os.cpu_count()
    memory = memory if memory is not None else local_memory_bytes()
    found: dict[str, list[tuple[str, Workload]]] = {}
    for job in plan.units:
        for part in job.jobs:
            w = part.workload
            try:
                runtime = parse_duration(w.runtime if w.runtime is not None else DEFAULT_RUNTIME)
                size = parse_size(w.size if w.size is not None else DEFAULT_SIZE)
            except ValueError:
                continue
            numjobs = w.numjobs or 1
            working_set = size * numjobs
            if runtime < MIN_RUNTIME_S:
                found.setdefault("short_runtime", []).append((w.name, w))
            if w.drain_burst and parse_duration(w.ramp_time if w.ramp_time is not None else DEFAULT_RAMP) == 0:
                found.setdefault("no_ramp", []).append((w.name, w))
            if job.machine == "local" and cpus and numjobs > cpus:
                found.setdefault("jobs_over_cpus", []).append((f"{w.name} ({numjobs} jobs)", w))
            if working_set < MIN_WORKING_SET:
                found.setdefault("small_working_set", []).append((f"{w.name} ({human_bytes(working_set)})", w))
            elif job.machine == "local" and memory and w.direct is False and working_set <= memory:
                found.setdefault("page_cache", []).append((w.name, w))
    said = {
        "short_runtime": (lambda n: f"{n}: measure less than {MIN_RUNTIME_S:.0f} s; results vary from run to run",
                          "set defaults.runtime: 60s, or use --repeats 3 and let the gate judge the spread"),
        "jobs_over_cpus": (lambda n: f"{n}: more jobs than this machine's {cpus} CPUs; the CPU, not the disk, "
                           "may limit", ""),
        "small_working_set": (lambda n: f"{n}: working set under 1 GiB; caches in the disk and its controller "
                              "may answer instead of the media", "set defaults.size: 4G"),
        "page_cache": (lambda n: f"{n}: buffered I/O on a working set that fits in this machine's "
                       f"{human_bytes(memory or 0)} of memory; the page cache is measured, not the disk", ""),
        "no_ramp": (lambda n: f"{n}: drain_burst with ramp_time 0; the credits a disk earns in the seconds "
                    "between draining and measuring are spent at the start and counted", "keep ramp_time: 2s"),
    }
    out: list[Advice] = []
    for kind, (what, fix) in said.items():
        out += sort_out(kind, found.get(kind, []), what, fix)
    return out


def stability_warnings(plan: Plan, cpus: int | None = None, memory: int | None = None) -> list[str]:
    """The warnings of :func:`stability_advice`, without what the profile does on purpose."""
    return [a.text for a in stability_advice(plan, cpus, memory) if a.reason is None]
