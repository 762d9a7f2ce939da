"""A result's attribution as it is stored and reported: the bound as JSON, burst phases, steady state.

Reports and ``explain`` read the stored JSON only, so a result keeps the limits it was compared with
(the tables of the day it was measured), not whatever the bundled tables say when it is read again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from ..model import DirectionResult, Series
from .bound import Bound, Measured, decide_bound
from .limit import Limit
from .phases import BurstPhases
from .steady_state import SteadyState, steady_state

MIN_ROUNDS = 5  # intervals grouped into at least this many rounds for the steady-state rule
MAX_ROUNDS = 25
PLATEAU_GAIN = 1.05  # the median second this much above fio's mean: the mean is diluted by the run's edges

# Short tags for the table's "bound" column.
TAGS = {"vm_uncached": "VM", "vm_cached": "VM cached", "temp": "temp disk", "disk": "disk", "nvme": "NVMe",
        "burst": "burst", "host_cache": "host cache", "cpu": "CPU", "queue": "queue", "none": "-"}


def bound_json(bound: Bound, limits: Sequence[Limit]) -> dict[str, Any]:
    """``{kind, limit, value, ratio, source, text, ...}`` plus the limits compared (for explain and charts)."""
    out: dict[str, Any] = {"kind": bound.kind, "limit": bound.limit, "value": bound.value, "ratio": bound.ratio,
                           "source": bound.source, "text": bound.text, "limit_kind": bound.limit_kind,
                           "unit": bound.unit, "notes": list(bound.notes)}
    if bound.phases is not None:
        out["phases"] = phases_json(bound.phases)
    out["limits"] = [lim.to_json() for lim in limits]
    return out


def phases_json(phases: BurstPhases) -> dict[str, Any]:
    return {"burst": asdict(phases.burst), "baseline": asdict(phases.baseline), "drop": phases.drop}


def tag(bound: dict[str, Any] | None) -> str:
    """``VM 100%``, ``host cache``, ``-``: what the table shows."""
    if not bound:
        return ""
    text = TAGS.get(str(bound.get("kind")), str(bound.get("kind")))
    ratio = bound.get("ratio")
    if bound.get("kind") not in ("none", "queue", "host_cache") and isinstance(ratio, (int, float)):
        text += f" {ratio:.0%}"
    return text


def limits_of(bound: dict[str, Any] | None) -> list[Limit]:
    return [Limit.from_json(x) for x in (bound or {}).get("limits", [])]


def decide(result: DirectionResult, limits: Sequence[Limit], *, bs_bytes: int, iodepth: int, jobs: int,
           cpu_pct: float | None, cpus: int | None) -> Bound:
    measured = Measured.from_direction(result, bs_bytes=bs_bytes, iodepth=iodepth, jobs=jobs, cpu_pct=cpu_pct,
                                       cpus=cpus)
    bound = decide_bound(measured, limits)
    level = _median(measured.series)
    if bound.kind != "none" or level is None or not measured.iops or level < measured.iops * PLATEAU_GAIN:
        return bound
    # A throttled run sits at its cap second after second; its mean is diluted by the first second (queues
    # filling) and the last, partial one. The median second is the cap's level then, and is said to be.
    steady = decide_bound(replace(measured, iops=level, mbps=measured.mbps * level / measured.iops, series=None),
                          limits)
    if steady.kind in ("none", "queue", "cpu"):
        return bound
    return replace(steady, text=f"{steady.text} (median second; fio's mean {measured.iops:,.0f} IOPS includes "
                                f"the first and last seconds)")


def _median(series: tuple[float, ...] | None) -> float | None:
    if not series or len(series) < MIN_ROUNDS:
        return None
    values = sorted(series)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def rounds_of(series: Series, start_s: float = 0.0) -> list[float]:
    """The series (from ``start_s``) averaged into 5-25 equal rounds, for the PTS rule."""
    first = int(start_s / series.interval_s) if series.interval_s else 0
    values = [v for v in series.iops[first:] if v is not None]
    if len(values) < MIN_ROUNDS:
        return []
    per = max(1, math.ceil(len(values) / MAX_ROUNDS))
    chunks = [values[i:i + per] for i in range(0, len(values) - per + 1, per)]
    return [sum(c) / len(c) for c in chunks]


def steady(series: Series, phases: dict[str, Any] | None) -> SteadyState | None:
    """The SNIA PTS rule over the run's rounds (the baseline phase only, after a burst); None: too short."""
    start = phases["baseline"]["start_s"] if phases else 0.0
    rounds = rounds_of(series, start)
    if len(rounds) < MIN_ROUNDS:
        return None
    return steady_state(rounds, max_rounds=max(MIN_ROUNDS, len(rounds)))
