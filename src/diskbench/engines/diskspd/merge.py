"""Several DiskSpd runs of one job (the segments of a ``stop:`` job) merged into one result.

What DiskSpd counts adds up exactly: I/Os and bytes are summed, the measured time too (each run's
``TestTimeSeconds``, which leaves out the moments between runs), and IOPS and bandwidth are those
sums over that time, as DiskSpd computes a single run's. The mean latency is weighted by each run's
I/Os, the standard deviation pooled as DiskSpd pools threads (``results.pooled``), the minimum is
the least of the minima and the maximum the largest of the maxima: all exact.

Percentiles are not. DiskSpd keeps every latency in a histogram but exports only ~108 percentile
points of it, so the merged histogram cannot be rebuilt. What is known is a bracket: the merged
p-quantile lies between the smallest and the largest of the runs' p-quantiles (the merged
distribution is a mixture of the runs'; at the largest, every run has reached p, so the mixture has;
below the smallest, none has). The result keeps that bracket (``Latency.bounds``) and shows the
upper end, marked inexact (``~`` in tables) unless the runs agree, with a note saying so: the
figure is a bound that never understates a latency, not an invented merge. p0 and p100 are the
minimum and maximum, exact.
"""

from __future__ import annotations

from diskbench.model import DirectionResult, GroupResult, Latency, Series

from .results import POINTS_NOT_HISTOGRAM, pooled

EDGES = ("p0", "p100")  # DiskSpd's percentile 0 and 100: the minimum and the maximum


def merge_runs(parts: list[list[GroupResult]]) -> list[GroupResult]:
    """The runs' groups merged position by position (every segment of a job has the same groups);
    a single run is returned as it is."""
    if len(parts) == 1:
        return parts[0]
    width = min(len(p) for p in parts)
    return [_group([p[i] for p in parts]) for i in range(width)]


def merge_note(runs: int) -> str:
    """What a merged result says of itself."""
    return (f"{runs} DiskSpd runs merged: I/Os, bytes and measured time summed, mean latency weighted by "
            "I/Os, min and max exact; DiskSpd exports percentile points, not a histogram, so each merged "
            "percentile is the largest of the runs' (~: an upper bound; the true value lies between the runs' "
            "smallest and largest, kept as percentile_bounds)")


def _seconds(group: GroupResult) -> float:
    """A run's measured time (every direction of a DiskSpd run has the run's)."""
    return max((d.runtime_s for d in group.directions), default=0.0)


def _group(groups: list[GroupResult]) -> GroupResult:
    total_s = sum(_seconds(g) for g in groups)
    names = list(dict.fromkeys(d.direction for g in groups for d in g.directions))
    directions = [_direction(name, [d for g in groups if (d := g.direction(name)) is not None], total_s)
                  for name in names]
    notes = [n for g in groups for n in g.notes if n != POINTS_NOT_HISTOGRAM]
    first = groups[0]
    return GroupResult(
        name=first.name, job_names=list(first.job_names), jobs=first.jobs, engine=first.engine,
        engine_version=" / ".join(dict.fromkeys(g.engine_version for g in groups)), directions=directions,
        hosts=list(dict.fromkeys(h for g in groups for h in g.hosts)),
        errors=list(dict.fromkeys(e for g in groups for e in g.errors)),
        notes=list(dict.fromkeys([*notes, merge_note(len(groups))])), declared=dict(first.declared),
        cpu_pct=_cpu(groups, total_s),
    )


def _cpu(groups: list[GroupResult], total_s: float) -> float | None:
    """DiskSpd's CPU share over all runs, each weighted by its time (None when a run has none)."""
    pairs = [(g.cpu_pct, _seconds(g)) for g in groups]
    if total_s <= 0 or any(c is None for c, _ in pairs):
        return None
    return sum((c or 0.0) * s for c, s in pairs) / total_s


def _direction(name: str, parts: list[DirectionResult], total_s: float) -> DirectionResult:
    ios, nbytes = sum(d.ios for d in parts), sum(d.io_bytes for d in parts)
    clats = [d.clat for d in parts]
    clat = merge_latency([c for c in clats if c is not None]) if all(c is not None for c in clats) else None
    return DirectionResult(direction=name, iops=ios / total_s if total_s > 0 else 0.0,
                           bw_bytes_per_s=nbytes / total_s if total_s > 0 else 0.0, ios=ios, io_bytes=nbytes,
                           runtime_s=total_s, clat=clat, series=_series([d.series for d in parts]),
                           warnings=list(dict.fromkeys(w for d in parts for w in d.warnings)))


def merge_latency(lats: list[Latency]) -> Latency:
    """Exact mean, stdev, min and max; each percentile the bracket's upper end (see the module)."""
    mean, stdev = pooled([(lat.samples, lat.mean, lat.stdev) for lat in lats])
    keys = [k for k in lats[0].percentiles if all(k in lat.percentiles for lat in lats)]
    bounds: dict[str, tuple[float, float]] = {}
    for key in keys:
        values = [lat.percentiles[key] for lat in lats]
        edge = min(values) if key == "p0" else max(values)
        bounds[key] = (edge, edge) if key in EDGES else (min(values), max(values))
    return Latency(min=min(lat.min for lat in lats), mean=mean, max=max(lat.max for lat in lats), stdev=stdev,
                   samples=sum(lat.samples for lat in lats), percentiles={k: hi for k, (_lo, hi) in bounds.items()},
                   exact=all(lo == hi for lo, hi in bounds.values()) and all(lat.exact for lat in lats),
                   bounds=bounds)


def _series(series: list[Series | None]) -> Series | None:
    """The runs' per-second figures end to end (the moments between runs are in none of them)."""
    if not series or any(s is None for s in series):
        return None
    parts = [s for s in series if s is not None]
    step = parts[0].interval_s
    if any(s.interval_s != step for s in parts):
        return None
    bws = [s.bw_bytes_per_s for s in parts]
    lats = [s.lat_mean_us for s in parts]
    bw = None if any(b is None for b in bws) else [v for b in bws if b is not None for v in b]
    lat = None if any(x is None for x in lats) else [v for x in lats if x is not None for v in x]
    return Series(interval_s=step, iops=[v for s in parts for v in s.iops], bw_bytes_per_s=bw, lat_mean_us=lat,
                  source=parts[0].source)
