"""Which limit bound a measured result: a platform cap, a burst, the host cache, the client CPU, the queue - or none.

A platform limit is claimed only when the result is within ``TOLERANCE`` of it and it is the tightest
limit the result did not exceed. The band is 90-110%: throttled results land a little under a cap
(protocol overhead, per-second accounting, ramp edges) or a little over it (the token bucket lets short
excesses through; the seeds measured 13,052 IOPS against 12,800 and 78,521 against 77,000, both 102%),
and published caps are rounded. Wider, and a result could "match" a cap it never touched; narrower, and
real throttling would go unexplained. Where two caps are within the band, the tighter one wins (the
higher ratio), so 13,600 IOPS on a 12,800-IOPS VM with 15,000 IOPS of disks is the VM's.

A result above a limit it should not pass is explained rather than ignored: above a cached disk's own
cap means the host cache served it; above a baseline with a burst cap above it means burst credits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..model import DirectionResult
from ..units import latency
from .limit import Limit
from .phases import BurstPhases, Phase, detect_burst

TOLERANCE = (0.90, 1.10)
CPU_SATURATED = 90.0  # % of one core per job, or of all cores together
SHALLOW_QUEUE = 4  # I/Os in flight (QD x jobs) at or below which a result is latency-bound

BOUND_KINDS = ("vm_uncached", "vm_cached", "temp", "disk", "nvme", "burst", "host_cache", "cpu", "queue", "none")


@dataclass(frozen=True)
class Measured:
    """One direction of one result, with what attribution needs besides the rates.

    ``cpu_pct``: fio's usr_cpu + sys_cpu for a job (% of one core; with group_reporting fio gives the
    mean per job). ``host_cache``: this I/O may have been served by a host cache (reads on a ReadOnly
    or ReadWrite disk, writes on a ReadWrite disk); None: whenever the target's limits say a cache sits
    in the path. ``series``: per-interval IOPS, for burst phases.
    """

    direction: str
    iops: float
    mbps: float  # 10^6 bytes/s
    bs_bytes: int
    duration_s: float = 0.0
    cpu_pct: float | None = None
    cpus: int | None = None
    iodepth: int = 1
    jobs: int = 1
    host_cache: bool | None = None
    lat_mean_us: float | None = None
    series: tuple[float, ...] | None = None
    interval_s: float = 1.0

    @classmethod
    def from_direction(cls, result: DirectionResult, *, bs_bytes: int, iodepth: int, jobs: int,
                       cpu_pct: float | None = None, cpus: int | None = None,
                       host_cache: bool | None = None) -> Measured:
        """From a parsed result; the series' empty intervals are left out."""
        series = result.series
        return cls(direction=result.direction, iops=result.iops, mbps=result.bw_bytes_per_s / 1e6, bs_bytes=bs_bytes,
                   duration_s=result.runtime_s, cpu_pct=cpu_pct, cpus=cpus, iodepth=iodepth, jobs=jobs,
                   host_cache=host_cache, lat_mean_us=result.clat.mean if result.clat else None,
                   series=tuple(v for v in series.iops if v is not None) if series else None,
                   interval_s=series.interval_s if series else 1.0)


@dataclass(frozen=True)
class Bound:
    """The verdict: ``kind`` (one of ``BOUND_KINDS``), the limit and the value compared, and why."""

    kind: str
    limit: float | None
    value: float | None
    ratio: float | None
    source: str
    text: str
    limit_kind: str = ""  # the Limit.kind compared, e.g. "vm_uncached_iops"
    unit: str = ""
    phases: BurstPhases | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Eval:
    limit: Limit
    value: float
    ratio: float


def decide_bound(measured: Measured, limits: Sequence[Limit]) -> Bound:
    """The bound of ``measured`` among ``limits`` (pass every limit of the target; direction is filtered here)."""
    applicable = [lim for lim in limits if lim.applies_to(measured.direction)]
    if measured.host_cache is None:
        measured = replace(measured, host_cache=any(lim.cache_miss_only for lim in applicable))
    evals = [_evaluate(measured, lim) for lim in applicable]
    notes = _exceeded_notes(measured, evals)
    phases = detect_burst(measured.series, measured.interval_s) if measured.series else None
    if phases:
        return _burst_phases(measured, limits, phases, notes)
    # Reads above a cached disk's cap come from the host cache: none of that disk's caps (IOPS or
    # MB/s) binds them, even when the cached rate happens to sit near one of them.
    served = measured.host_cache and any(e.ratio > TOLERANCE[1] and e.limit.cache_miss_only for e in evals)
    capping = [e for e in evals if not (served and e.limit.cache_miss_only)]
    found = _platform(measured, capping, notes) or _cpu(measured, notes) or _queue(measured, capping, notes)
    return found or _explained_excess(measured, evals, notes) or _none(measured, evals, notes)


def _evaluate(measured: Measured, limit: Limit) -> _Eval:
    if limit.metric == "mbps":
        value = measured.mbps
    elif limit.io_unit_bytes:
        value = measured.iops * max(1, -(-measured.bs_bytes // limit.io_unit_bytes))
    else:
        value = measured.iops
    return _Eval(limit, value, value / limit.value)


def _kind_of(limit: Limit) -> str:
    if limit.burst:
        return "burst"
    return next(k for k in ("vm_uncached", "vm_cached", "temp", "disk", "nvme") if limit.kind.startswith(k))


def rate(mbps: float) -> str:
    """A data rate set against a published cap: the cap's unit (MB/s, 10^6 B/s) and the results' (MiB/s)."""
    return f"{mbps:,.1f} MB/s ({mbps * 1e6 / 2**20:,.1f} MiB/s)"


def _phrase(measured: Measured, e: _Eval) -> str:
    value = rate(e.value) if e.limit.metric == "mbps" else f"{e.value:,.0f} {e.limit.unit}"
    text = f"{measured.direction} {value} = {e.ratio:.1%} of {e.limit.label()}"
    if e.limit.metric == "iops" and e.limit.io_unit_bytes and e.value != measured.iops:
        text += f" (I/O over {e.limit.io_unit_bytes // 1024} KiB counted as several)"
    return text


def _platform(measured: Measured, evals: list[_Eval], notes: tuple[str, ...]) -> Bound | None:
    """The tightest limit the result reached (within the band) and did not pass."""
    within = [e for e in evals if e.ratio <= TOLERANCE[1]]
    if not within:
        return None
    best = max(within, key=lambda e: e.ratio)
    if best.ratio < TOLERANCE[0]:
        return None
    kind = _kind_of(best.limit)
    what = {"vm_uncached": "bound by the VM", "vm_cached": "bound by the VM's cached limit",
            "temp": "bound by the temp disk", "disk": "bound by the disk", "nvme": "bound by the NVMe devices",
            "burst": "bound by the burst cap"}[kind]
    if kind == "disk" and (" x " in best.limit.scope or " + " in best.limit.scope):
        what = "bound by the disks"
    text = f"{_phrase(measured, best)}: {what}"
    rival = _next_limit(best, within)
    if rival:
        text += f", not the {rival.limit.scope} ({rival.limit.value:,.0f})"
    if best.limit.burst and best.limit.minutes:
        text += f"; lasts up to {best.limit.minutes:g} min at full credits"
    return Bound(kind, best.limit.value, best.value, best.ratio, best.limit.source, text + _suffix(notes),
                 best.limit.kind, best.limit.unit, notes=notes)


def _next_limit(best: _Eval, within: list[_Eval]) -> _Eval | None:
    """The nearest looser limit of the same metric from another level (disk vs VM), for 'not the ...'."""
    others = [e for e in within if e.limit.metric == best.limit.metric and not e.limit.burst
              and _kind_of(e.limit) != _kind_of(best.limit) and e.limit.value > best.limit.value]
    return min(others, key=lambda e: e.limit.value) if others else None


def _exceeded_notes(measured: Measured, evals: list[_Eval]) -> tuple[str, ...]:
    """Why the result passed limits it passed: host cache, burst credits, or a table that looks wrong."""
    notes = []
    for e in evals:
        if e.ratio <= TOLERANCE[1]:
            continue
        if e.limit.cache_miss_only and measured.host_cache:
            notes.append(f"above the {e.limit.label()}: served by the host cache")
        elif _burst_sibling(e, evals):
            notes.append(f"above the {e.limit.label()} baseline: on burst credits")
        elif e.limit.cache_miss_only:
            notes.append(f"above the {e.limit.label()}: a host cache served it (reads may have hit the cache)")
        else:
            notes.append(f"above the published {e.limit.label()} ({e.limit.source}): the table may be out of date")
    return tuple(notes)


def _burst_sibling(e: _Eval, evals: list[_Eval]) -> bool:
    return any(o.limit.bursts_above(e.limit) and o.ratio <= TOLERANCE[1] for o in evals)


def _suffix(notes: tuple[str, ...]) -> str:
    return "; " + "; ".join(notes) if notes else ""


def _cpu(measured: Measured, notes: tuple[str, ...]) -> Bound | None:
    if measured.cpu_pct is None:
        return None
    per_job, total = measured.cpu_pct, measured.cpu_pct * measured.jobs
    if per_job >= CPU_SATURATED:
        why = f"fio used {per_job:.0f}% of a core per job: each job's thread was CPU-bound"
        value, limit = per_job, 100.0
    elif measured.cpus and total >= CPU_SATURATED * measured.cpus:
        why = f"fio used {total:.0f}% of {measured.cpus} cores: the client ran out of CPU"
        value, limit = total, 100.0 * measured.cpus
    else:
        return None
    text = f"{measured.direction} {measured.iops:,.0f} IOPS: bound by the client CPU ({why})"
    return Bound("cpu", limit, value, value / limit, "fio usr_cpu + sys_cpu", text + _suffix(notes), unit="% CPU",
                 notes=notes)


def _queue(measured: Measured, evals: list[_Eval], notes: tuple[str, ...]) -> Bound | None:
    """Too few I/Os in flight to reach any limit: the result is the latency, inverted (Little's law)."""
    inflight = measured.iodepth * measured.jobs
    if inflight > SHALLOW_QUEUE:
        return None
    text = (f"{measured.direction} {measured.iops:,.0f} IOPS: bound by the queue "
            f"(QD{measured.iodepth} x {measured.jobs} job(s))")
    if measured.lat_mean_us:
        allowed = inflight / (measured.lat_mean_us / 1e6)
        text += f", {inflight} I/O in flight at {latency(measured.lat_mean_us)} mean latency allow ~{allowed:,.0f} IOPS"
    tight = [e for e in evals if e.ratio <= TOLERANCE[1] and e.limit.metric == "iops"]
    if tight:
        best = max(tight, key=lambda e: e.ratio)
        text += f"; {best.ratio:.0%} of the {best.limit.label()}"
    return Bound("queue", float(inflight), float(inflight), None, "iodepth x numjobs", text + _suffix(notes),
                 unit="I/O in flight", notes=notes)


def _explained_excess(measured: Measured, evals: list[_Eval], notes: tuple[str, ...]) -> Bound | None:
    """Above a cached disk's cap (host cache) or a baseline (burst credits), yet at no cap."""
    cached = [e for e in evals if e.ratio > TOLERANCE[1] and e.limit.cache_miss_only and measured.host_cache]
    bursting = [e for e in evals if e.ratio > TOLERANCE[1] and _burst_sibling(e, evals)]
    if cached:
        e, kind, how = max(cached, key=lambda x: x.ratio), "host_cache", "served by the host cache"
    elif bursting:
        e, kind, how = max(bursting, key=lambda x: x.ratio), "burst", "on burst credits, below the burst cap"
    else:
        return None
    text = f"{_phrase(measured, e)}: {how}"
    ceiling = [o for o in evals if o.ratio <= TOLERANCE[1] and o.limit.metric == e.limit.metric]
    if ceiling:
        top = max(ceiling, key=lambda o: o.ratio)
        text += f" ({top.ratio:.0%} of the {top.limit.label()})"
    rest = tuple(n for n in notes if e.limit.label() not in n)
    return Bound(kind, e.limit.value, e.value, e.ratio, e.limit.source, text + _suffix(rest), e.limit.kind,
                 e.limit.unit, notes=notes)


def _none(measured: Measured, evals: list[_Eval], notes: tuple[str, ...]) -> Bound:
    text = f"{measured.direction} {measured.iops:,.0f} IOPS, {rate(measured.mbps)}: "
    within = [e for e in evals if e.ratio <= TOLERANCE[1]]
    if within:
        top = max(within, key=lambda e: e.ratio)
        text += f"below every limit (highest: {top.ratio:.0%} of the {top.limit.label()})"
        return Bound("none", top.limit.value, top.value, top.ratio, top.limit.source, text + _suffix(notes),
                     top.limit.kind, top.limit.unit, notes=notes)
    text += "no published limit applies" if not evals else "above every published limit"
    return Bound("none", None, None, None, "", text + _suffix(notes), notes=notes)


def _burst_phases(measured: Measured, limits: Sequence[Limit], phases: BurstPhases,
                  notes: tuple[str, ...]) -> Bound:
    """A series that steps down: the burst phase against the burst caps, the baseline phase against the rest."""
    scale = measured.mbps / measured.iops if measured.iops else 0.0
    parts, matches = [], []
    for name, phase in (("burst", phases.burst), ("baseline", phases.baseline)):
        level = _plateau(measured, phase)
        at = replace(measured, iops=level, mbps=level * scale, series=None)
        evals = [_evaluate(at, lim) for lim in limits if lim.applies_to(measured.direction)]
        within = [e for e in evals if TOLERANCE[0] <= e.ratio <= TOLERANCE[1]]
        if within:
            best = max(within, key=lambda e: e.ratio)
            parts.append(f"{name} {level:,.0f} IOPS = {best.ratio:.1%} of the {best.limit.label()}")
            matches.append(best)
        else:
            parts.append(f"{name} {level:,.0f} IOPS")
    text = f"{measured.direction} stepped down: {phases.text()}; " + ", ".join(parts)
    if matches:  # the burst phase's cap when it reached one, else the baseline's
        m = matches[0]
        return Bound("burst", m.limit.value, m.value, m.ratio, m.limit.source, text, m.limit.kind, m.limit.unit,
                     phases, notes)
    return Bound("burst", None, phases.burst.mean, None, "per-interval series", text, unit="IOPS", phases=phases,
                 notes=notes)


def _plateau(measured: Measured, phase: Phase) -> float:
    """The phase's level: the median of its intervals, so the second in which the bucket ran dry (half burst,
    half baseline) does not pull the burst's level down; the phase's mean where there is no series."""
    if not measured.series:
        return phase.mean
    first = round(phase.start_s / measured.interval_s)
    values = sorted(measured.series[first:first + max(1, round(phase.duration_s / measured.interval_s))])
    if not values:
        return phase.mean
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
