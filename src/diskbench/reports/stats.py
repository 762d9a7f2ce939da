"""Statistics over repeated results: medians, spread, and the robust noise band of the gate."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..model import DirectionResult, Latency
from ..store import StoredResult

MAD_SCALE = 1.4826  # MAD x 1.4826 estimates the standard deviation of normal noise


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def mad(values: Sequence[float]) -> float:
    m = median(values)
    return median([abs(v - m) for v in values])


def cv(values: Sequence[float]) -> float | None:
    """Coefficient of variation (sample stdev / mean); None below two values."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean else None


@dataclass
class Summary(StoredResult):
    """One job and direction of a run: the median over its repetitions."""

    n: int = 1
    iops_cv: float | None = None
    cvs: dict[str, float | None] = field(default_factory=dict)  # per metric: iops, bw, p50, p99, ...


def _median_latency(lats: list[Latency]) -> Latency | None:
    if not lats:
        return None
    keys = set.intersection(*(set(lat.percentiles) for lat in lats))
    return Latency(
        min=min(lat.min for lat in lats), max=max(lat.max for lat in lats),
        mean=median([lat.mean for lat in lats]), stdev=median([lat.stdev for lat in lats]),
        samples=sum(lat.samples for lat in lats), exact=all(lat.exact for lat in lats),
        percentiles={k: median([lat.percentiles[k] for lat in lats]) for k in sorted(
            keys, key=lambda k: float(k[1:]))},
    )


def _cvs(rs: Sequence[StoredResult]) -> dict[str, float | None]:
    """The spread of each metric over a job's repetitions: a run is only as exact as its repeats."""
    out: dict[str, float | None] = {"iops": cv([r.result.iops for r in rs]),
                                    "bw": cv([r.result.bw_bytes_per_s for r in rs])}
    lats = [r.result.clat for r in rs if r.result.clat]
    if len(lats) == len(rs):
        for key in set.intersection(*(set(lat.percentiles) for lat in lats)) if lats else set():
            out[key] = cv([lat.percentiles[key] for lat in lats])
    return out


def summarize(results: Sequence[StoredResult]) -> list[Summary]:
    """Group repetitions of the same job and direction; keep the order they first appear in."""
    groups: dict[tuple[str, str, str, str, str], list[StoredResult]] = {}
    for r in results:  # one unit may store several rows: each client's or section's, and their merge
        groups.setdefault((r.group_key, r.workload, r.target, r.host, r.result.direction), []).append(r)
    out = []
    for (key, _w, _t, _h, direction), rs in groups.items():
        first = rs[0]
        iops = [r.result.iops for r in rs]
        result = DirectionResult(
            direction=direction, iops=median(iops), bw_bytes_per_s=median([r.result.bw_bytes_per_s for r in rs]),
            ios=int(median([r.result.ios for r in rs])), io_bytes=int(median([r.result.io_bytes for r in rs])),
            runtime_s=median([r.result.runtime_s for r in rs]),
            clat=_median_latency([r.result.clat for r in rs if r.result.clat]),
            bound=first.result.bound if len(rs) == 1 else None, series=first.result.series if len(rs) == 1 else None,
            warnings=list(dict.fromkeys(w for r in rs for w in r.result.warnings)),
        )
        kept = {f: getattr(first, f) for f in StoredResult.__dataclass_fields__}
        kept.update(result=result, job_key=key, repeat=0, errors=sorted({e for r in rs for e in r.errors}),
                    notes=sorted({n for r in rs for n in r.notes}))
        out.append(Summary(**kept, n=len(rs), iops_cv=cv(iops), cvs=_cvs(rs)))
    return out
