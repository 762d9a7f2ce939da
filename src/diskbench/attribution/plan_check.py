"""Before a run: jobs too short to get past a disk's burst credits measure the burst, not the baseline.

A P4 bursts from 120 to 3,500 IOPS for up to 30 minutes on a full credit bucket; a 60-second job on it
measures the burst, which is what the seeds' 3,499 IOPS was. ``plan`` says so before any money is spent.
VM-level burst is left out: whether a job passes the VM's baseline at all is only known afterwards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DiskbenchError

if TYPE_CHECKING:
    from ..plan import Plan


def burst_warnings(plan: Plan) -> list[str]:
    from .. import registry

    out: list[str] = []
    for job in plan.jobs:
        if job.entry is None or job.workload.drain_burst:  # drained first: it measures the baseline
            continue
        provider = registry.providers.get(job.provider)
        for part in job.parts:
            try:
                limits = provider.limits(job.entry, part.target)
            except DiskbenchError:
                continue
            bursts = [lim for lim in limits if lim.burst and lim.kind.startswith("disk_") and lim.minutes]
            if not bursts:
                continue
            minutes = min(lim.minutes or 0 for lim in bursts)
            if job.expected_s < minutes * 60:
                out.append(f"{job.machine}: {part.workload.name} on {part.target_label} runs "
                           f"{job.expected_s:,.0f} s; the {bursts[0].scope} lasts up to {minutes:g} min at full "
                           f"credits, so it measures the burst, not the baseline (run longer to see both, or "
                           f"drain_burst: true to measure the baseline alone)")
    return list(dict.fromkeys(out))
