"""Before a run: jobs too short to get past a disk's burst credits measure the burst, not the baseline.

A P4 bursts from 120 to 3,500 IOPS for up to 30 minutes on a full credit bucket; a 60-second job on it
measures the burst, which is what the seeds' 3,499 IOPS was. ``plan`` says so before any money is spent.
VM-level burst is left out: whether a job passes the VM's baseline at all is only known afterwards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..advice import Advice, listed, said
from ..errors import DiskbenchError

if TYPE_CHECKING:
    from ..plan import Plan


def burst_advice(plan: Plan) -> list[Advice]:
    """One line per burst (its scope and length) over every machine and workload it concerns; a
    note instead where the profile measures the burst on purpose (``deliberate: {burst: ...}``)."""
    from .. import registry

    found: dict[tuple[str, float, str | None], list[tuple[str, str, str, float]]] = {}
    for job in plan.units:
        if job.entry is None or job.workload.drain_burst:  # drained first: it measures the baseline
            continue
        provider = registry.providers.get(job.provider)
        for part in job.jobs:
            try:
                limits = provider.limits(job.entry, part.target)
            except DiskbenchError:
                continue
            bursts = [lim for lim in limits if lim.burst and lim.kind.startswith("disk_") and lim.minutes]
            if not bursts:
                continue
            minutes = min(lim.minutes or 0 for lim in bursts)
            if job.expected_s < minutes * 60:
                reason = (part.workload.deliberate or {}).get("burst")
                found.setdefault((bursts[0].scope, minutes, reason), []).append(
                    (job.machine, part.workload.name, part.target_label, job.expected_s))
    out = []
    for (scope, minutes, reason), rows in found.items():
        seconds = sorted({round(r[3]) for r in rows})
        span = f"{seconds[0]:,}" + (f"-{seconds[-1]:,}" if len(seconds) > 1 else "")
        text = (f"{listed(r[0] for r in rows)}: {listed(r[1] for r in rows)} on {listed(r[2] for r in rows)} "
                f"run{'s' if len(rows) == 1 else ''} {span} s; the {scope} lasts up to {minutes:g} min at full "
                "credits, so it measures the burst, not the baseline")
        out.append(Advice("burst", said(text, "run longer to see both, or drain_burst: true to measure the "
                                        "baseline alone", reason), reason))
    return out


def burst_warnings(plan: Plan) -> list[str]:
    """The warnings of :func:`burst_advice`, without what the profile does on purpose."""
    return [a.text for a in burst_advice(plan) if a.reason is None]
