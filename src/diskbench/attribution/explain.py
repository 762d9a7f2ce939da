"""``diskbench explain``: why a stored result is what it is, in words that fit 80 columns.

Everything comes from what was stored with the result (its bound, the limits it was compared with and
their sources, its warnings), so an old run is explained against the tables of its day. The last line
says what to change to measure the next limit up: the bound names the ceiling, this names the way past it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..store import StoredResult
from ..units import dollars
from .bound import rate
from .knee import NOTE as KNEE_NOTE
from .limit import Limit
from .record import limits_of

WIDTH = 80
NEXT = {
    "vm_uncached": "a larger VM size: its uncached cap is the ceiling, not the disks",
    "vm_cached": "a larger VM size: its cached (and temp) limit is the ceiling",
    "temp": "a size with a larger (or NVMe) temp disk",
    "disk": "more disks in the stripe or a larger tier, up to the VM's cap",
    "nvme": "a size with more NVMe devices",
    "burst": "drain_burst: true (or a run longer than the credits last), to measure the baseline",
    "host_cache": "caching None (or a working set larger than the cache) to measure the disk itself",
    "cpu": "more numjobs, or a faster ioengine (io_uring), so fio's CPU is not the limit",
    "queue": "a deeper queue (iodepth x numjobs), so the device, not the latency, sets the rate",
}


def _wrap(text: str, indent: str = "  ", first: str | None = None) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first if first is not None else indent,
                         subsequent_indent=indent + ("  " if first is not None else ""), break_on_hyphens=False)


def _limit_rows(limits: Sequence[Limit], direction: str) -> list[str]:
    rows = []
    for lim in limits:
        if not lim.applies_to(direction):
            continue
        flags = [f for f, on in (("burst", lim.burst), ("cache-miss only", lim.cache_miss_only)) if on]
        extra = f" ({', '.join(flags)})" if flags else ""
        rows.append(f"    {lim.scope[:38]:<38} {lim.value:>12,.0f} {lim.unit:<4} {lim.direction}{extra}")
    return rows


@dataclass
class Spent:
    """What one job cost on the machines a provider created for it: its own time on them (the machines'
    creation, boot and delete are the run's, not a job's), and all of those machines' use for scale."""

    seconds: float  # from the job's start to its end, on each machine it held
    machines: list[str]  # the machine, or a client group's clients
    vm_minutes: float  # seconds x machines
    usd: float | None  # None: a machine without a price
    total_vm_minutes: float  # those machines' whole use in the run (run.machines)
    total_usd: float | None

    def to_json(self) -> dict[str, Any]:
        return {"seconds": round(self.seconds, 3), "machines": self.machines, "vm_minutes": round(self.vm_minutes, 3),
                "usd": None if self.usd is None else round(self.usd, 4),
                "machine_vm_minutes": round(self.total_vm_minutes, 3),
                "machine_usd": None if self.total_usd is None else round(self.total_usd, 4)}

    def line(self) -> str:
        """``spent: 0.50 VM-min (30 s on vm1), $0.006; vm1 in all: 6.9 VM-min, $0.09`` (VM-min as the lines
        at the end of a run say it, so the line fits 80 columns with a short machine name)."""
        on = self.machines[0] if len(self.machines) == 1 else f"{len(self.machines)} machines"
        money = "" if self.usd is None else f", {dollars(self.usd)}"
        whole = "" if self.total_usd is None else f", {dollars(self.total_usd)}"
        return (f"spent: {self.vm_minutes:.2f} VM-min ({self.seconds:,.0f} s on {on}){money}; {on} in all: "
                f"{self.total_vm_minutes:.1f} VM-min{whole}")


def spent(job: dict[str, Any] | None, uses: Sequence[dict[str, Any]]) -> Spent | None:
    """What ``job`` (its row in the store) cost on the machines a provider created (``uses``: the run's
    ``machine_use``), each at its own rate; None when it ran on none of them (this machine, SSH hosts
    that exist: diskbench does not count what they cost) or its times are not known."""
    if job is None or not job.get("started") or not job.get("finished"):
        return None
    held = job.get("params", {}).get("clients") or [job["host"]]
    mine = [u for u in uses if u.get("machine") in held]
    if not mine:
        return None
    seconds = max(0.0, (datetime.fromisoformat(job["finished"]) - datetime.fromisoformat(job["started"]))
                  .total_seconds())
    rates = [_hourly(u) for u in mine]
    usd = None if None in rates else sum(seconds / 3600 * (r or 0.0) for r in rates)
    priced = [u.get("usd") for u in mine]
    return Spent(seconds, [str(u["machine"]) for u in mine], seconds / 60 * len(mine), usd,
                 sum(float(u.get("vm_minutes") or 0.0) for u in mine),
                 None if None in priced else sum(float(x or 0.0) for x in priced))


def _hourly(use: dict[str, Any]) -> float | None:
    """A machine's price per hour from what its use cost (the run stores minutes and money, not the rate)."""
    minutes, usd = use.get("vm_minutes"), use.get("usd")
    if usd is None or not minutes:
        return None if usd is None else 0.0
    return float(usd) / float(minutes) * 60


def explain(result: StoredResult, cost: Spent | None = None) -> list[str]:
    """The lines ``explain`` prints for ``result``; ``cost``: what its job spent on created machines."""
    d = result.result
    where = result.target if result.host in ("local", "imported") else f"{result.host}:{result.target}"
    lines = [f"{result.workload} {d.direction} on {where}: {d.iops:,.0f} IOPS, {rate(d.bw_bytes_per_s / 1e6)}"]
    bound: dict[str, Any] | None = d.bound
    if bound is None:
        lines += _wrap("no bound: no published limit applies to this target and fio's CPU was not "
                       "saturated (a cloud provider with limit tables gives one)")
    else:
        lines += _wrap(str(bound.get("text", "")))
        phases = bound.get("phases")
        if phases:
            lines += _wrap(f"phases: burst {phases['burst']['mean']:,.0f} IOPS for "
                           f"{phases['burst']['duration_s']:,.0f} s, then baseline {phases['baseline']['mean']:,.0f}"
                           f" IOPS from {phases['baseline']['start_s']:,.0f} s")
        limits = limits_of(bound)
        if limits:
            lines.append("  limits compared:")
            lines += _limit_rows(limits, d.direction)
            for source in dict.fromkeys(lim.source for lim in limits):
                lines += _wrap(f"source: {source}", "    ")
        hint = NEXT.get(str(bound.get("kind")))
        if hint:
            lines += _wrap(f"to measure the next limit up: {hint}")
        elif limits:
            lines += _wrap("to measure the next limit up: a deeper queue or more jobs; the result is below "
                           "every limit")
    knee = [n.removeprefix(KNEE_NOTE) for n in result.notes if n.startswith(KNEE_NOTE)]
    if knee:  # iodepth: auto: this is the knee's step (or the highest IOPS when there was no knee)
        lines += _wrap(f"iodepth: auto: {knee[0]}; this result is that step's, and each step is a result of its "
                       f"own ({result.workload}-iodepthN)")
    step = result.params.get("knee")
    if isinstance(step, dict) and step.get("job"):
        lines += _wrap(f"step {step.get('step')} of the knee search of {step['job']} (iodepth: auto)")
    if result.stop:  # how an adaptive stop (stop:) ended the run, and how well the figures are known
        from .stop_rule import Decision

        lines += _wrap(Decision.from_json(result.stop).text())
    if cost is not None:
        lines += _wrap(cost.line())
    if d.warnings:
        lines.append("  warnings:")
        for w in d.warnings:
            lines += _wrap(w, "      ", "    - ")
    return lines


def select(results: Sequence[StoredResult], job: str | None) -> list[StoredResult]:
    """The results of ``job`` (a job key, its base key, or a workload name); all when None."""
    if job is None:
        return list(results)
    return [r for r in results if job in (r.job_key, r.base_key, r.workload)
            or r.workload.startswith(f"{job}/")]
