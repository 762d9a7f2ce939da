"""What one DiskSpd run measured, independent of the output format, and its GroupResults.

The XML and the text readers both fill a :class:`RunData`; only this module turns it into
diskbench's result model, so both formats give the same figures for the same run.
DiskSpd's XML reports counts, not rates: there IOPS and bytes/s are counts over the measured
duration, as Microsoft's own scripts compute them (Process-DiskSpd.ps1, VMFleet). Its text
output prints 'I/O per s' per thread and in total, from the unrounded duration: those printed
figures are the IOPS (a target's is the sum of its threads'), since the duration it prints is
rounded to 10 ms and counts over it differ (by up to 9e-5 in the real outputs). Bandwidth stays
bytes over the duration: the printed MiB/s (two decimals) is coarser than that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from diskbench.errors import ParseError
from diskbench.model import DirectionResult, GroupResult, Latency, Series

DIRS = ("read", "write")
ENGINE = "diskspd"
LINUX_ENGINE = "diskspd-for-linux"

NO_LATENCY = "latency was not recorded (DiskSpd ran without -L)"
NO_SERIES = "no per-second series (DiskSpd ran without -D)"
TEXT_NO_SERIES = "no per-second series: DiskSpd's text output has none (run with -D -Rxml)"
POINTS_NOT_HISTOGRAM = (
    "percentiles are DiskSpd's own for this run; DiskSpd exports percentile points, not a histogram, "
    "so results of several runs or machines cannot be merged exactly"
)


@dataclass
class Row:
    """One thread's I/O on one target (DiskSpd's per-thread, per-target counters)."""

    thread: int
    path: str
    read_ios: int
    read_bytes: int
    write_ios: int
    write_bytes: int
    rates: dict[str, float] = field(default_factory=dict)  # DiskSpd's printed IOPS (text): read, write, total

    def ios(self, direction: str) -> int:
        return self.read_ios if direction == "read" else self.write_ios

    def nbytes(self, direction: str) -> int:
        return self.read_bytes if direction == "read" else self.write_bytes


@dataclass
class DirLatency:
    """DiskSpd's latency figures of one direction, in µs; min/max unknown where DiskSpd gives none."""

    mean: float
    stdev: float
    min: float | None = None
    max: float | None = None
    percentiles: dict[str, float] = field(default_factory=dict)


@dataclass
class DirSeries:
    """Per-interval IOPS of one direction and, with -L, the mean latency in each interval (µs)."""

    iops: list[float]
    lat_mean_us: list[float | None] | None = None
    lat_min_us: float | None = None  # lowest per-interval minimum: the direction's minimum
    lat_max_us: float | None = None


@dataclass
class RunData:
    """Everything diskbench keeps of one DiskSpd run (one timespan)."""

    engine: str
    version: str
    seconds: float  # measured duration (Windows) or requested one (diskspd-for-linux)
    rows: list[Row]
    totals: dict[str, tuple[int, int]] | None = None  # text 'total:' rows: (ios, bytes)
    latency: dict[str, DirLatency] | None = None  # None: no -L; keys read/write/total
    target_latency: dict[str, dict[str, DirLatency]] = field(default_factory=dict)
    series: dict[str, DirSeries] | None = None  # None: no -D
    target_series: dict[str, dict[str, DirSeries]] = field(default_factory=dict)
    interval_s: float = 1.0
    block_sizes: dict[str, int] = field(default_factory=dict)
    hosts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    series_note: str = NO_SERIES
    total_percentiles_exact: bool = True
    total_rates: dict[str, float] | None = None  # text 'total:' rows' printed IOPS: read, write, total

    def paths(self) -> list[str]:
        return list(dict.fromkeys(r.path for r in self.rows))


def _sum(rows: list[Row], direction: str) -> tuple[int, int]:
    return sum(r.ios(direction) for r in rows), sum(r.nbytes(direction) for r in rows)


def _counts(run: RunData, rows: list[Row], use_totals: bool) -> dict[str, tuple[int, int]]:
    counts = {d: _sum(rows, d) for d in DIRS}
    if use_totals and run.totals is not None:
        counts = {d: run.totals[d] for d in DIRS}
    counts["total"] = (counts["read"][0] + counts["write"][0], counts["read"][1] + counts["write"][1])
    return counts


def _latency(lat: DirLatency | None, samples: int, *, exact: bool = True) -> Latency | None:
    if lat is None or lat.min is None or lat.max is None:
        return None
    return Latency(min=lat.min, mean=lat.mean, max=lat.max, stdev=lat.stdev, samples=samples,
                   percentiles=dict(lat.percentiles), exact=exact, bins=None)


def _uniform_block_size(run: RunData, paths: list[str]) -> int | None:
    sizes = {run.block_sizes.get(p) for p in paths}
    if len(sizes) != 1:
        return None
    return next(iter(sizes))


def _series(s: DirSeries | None, interval_s: float, block_size: int | None) -> Series | None:
    if s is None:
        return None
    bw = [v * block_size for v in s.iops] if block_size else None
    return Series(interval_s=interval_s, iops=list(s.iops), bw_bytes_per_s=bw,
                  lat_mean_us=list(s.lat_mean_us) if s.lat_mean_us is not None else None,
                  source="diskspd -D")


def _present(counts: dict[str, tuple[int, int]]) -> list[str]:
    # Like fio's parser: a direction without I/O is left out, 'total' only for a read/write mix.
    dirs = [d for d in DIRS if counts[d][0] > 0]
    return [*dirs, "total"] if len(dirs) == 2 else dirs


@dataclass
class _Scope:
    """What one GroupResult covers: all targets, or one."""

    name: str
    paths: list[str]
    rows: list[Row]
    latency: dict[str, DirLatency] | None
    series: dict[str, DirSeries] | None
    use_totals: bool


def _directions(run: RunData, scope: _Scope, notes: list[str]) -> list[DirectionResult]:
    counts = _counts(run, scope.rows, scope.use_totals)
    block_size = _uniform_block_size(run, scope.paths)
    out = []
    for d in _present(counts):
        ios, nbytes = counts[d]
        lat = scope.latency.get(d) if scope.latency is not None else None
        exact = run.total_percentiles_exact or d != "total"
        clat = _latency(lat, ios, exact=exact)
        if scope.latency is not None and clat is None and ios > 0:
            notes.append(f"{d}: DiskSpd gave no complete latency figures for this direction")
        series = _series(scope.series.get(d) if scope.series is not None else None, run.interval_s, block_size)
        iops = _printed_iops(run, scope, d)
        out.append(DirectionResult(direction=d, iops=ios / run.seconds if iops is None else iops,
                                   bw_bytes_per_s=nbytes / run.seconds,
                                   ios=ios, io_bytes=nbytes, runtime_s=run.seconds, clat=clat, series=series))
    return out


def _printed_iops(run: RunData, scope: _Scope, direction: str) -> float | None:
    """DiskSpd's own IOPS for the scope (text output), or None (XML: counts only)."""
    if scope.use_totals and run.total_rates is not None:
        return run.total_rates[direction]
    if scope.rows and all(direction in r.rates for r in scope.rows):
        return round(sum(r.rates[direction] for r in scope.rows), 2)  # printed to 0.01 each
    return None


def _group(run: RunData, scope: _Scope, extra_notes: list[str]) -> GroupResult:
    notes = [*run.notes, *extra_notes]
    directions = _directions(run, scope, notes)
    if run.latency is None:
        notes.append(NO_LATENCY)
    elif any(d.clat is not None and d.clat.percentiles for d in directions):
        notes.append(POINTS_NOT_HISTOGRAM)
    if scope.series is None:
        notes.append(run.series_note)
    errors = [] if directions else ["DiskSpd completed no I/O in the measured time"]
    threads = {r.thread for r in scope.rows}
    return GroupResult(name=scope.name, job_names=list(scope.paths), jobs=len(threads), engine=run.engine,
                       engine_version=run.version, directions=directions, hosts=list(run.hosts),
                       errors=errors, notes=list(dict.fromkeys(notes)))


def _target_latency(run: RunData, path: str) -> dict[str, DirLatency] | None:
    if run.latency is None:
        return None
    lat = {d: run.target_latency.get(path, {}).get(d) for d in (*DIRS, "total")}
    series = run.target_series.get(path, {})
    out: dict[str, DirLatency] = {}
    for d, value in lat.items():
        if value is None:
            continue
        s = series.get(d)
        if value.min is None and s is not None:  # XML: min/max only from the per-second buckets
            value = DirLatency(mean=value.mean, stdev=value.stdev, min=s.lat_min_us, max=s.lat_max_us,
                               percentiles=value.percentiles)
        out[d] = value
    return out


def _rows_add_up(run: RunData) -> bool:
    if run.totals is None:
        return True
    return all(_sum(run.rows, d) == run.totals[d] for d in DIRS)


def build_groups(run: RunData, *, per_target: bool, name: str) -> list[GroupResult]:
    """One GroupResult for the whole run, or (``per_target``) one per target path.

    A single-target run's per-target group is the whole run (with its exact percentiles).
    """
    paths = run.paths()
    rows_ok = _rows_add_up(run)
    trimmed = [] if rows_ok else ["the per-thread rows do not add up to DiskSpd's totals (a trimmed file?); "
                                  "the totals are used"]
    if not per_target or len(paths) <= 1:
        group_name = paths[0] if per_target and paths else name
        scope = _Scope(group_name, paths, run.rows, run.latency, run.series, use_totals=True)
        return [_group(run, scope, trimmed)]
    if not rows_ok:
        raise ParseError("the per-thread rows do not add up to DiskSpd's totals; cannot split the run by target")
    groups = []
    for path in paths:
        rows = [r for r in run.rows if r.path == path]
        lat = _target_latency(run, path)
        note = []
        if lat is not None and not any(v.percentiles for v in lat.values()):
            note = ["per-target latency: DiskSpd gives only mean and stdev per target here (no percentiles); "
                    "the run's percentiles cover all targets"]
        scope = _Scope(path, [path], rows, lat, run.target_series.get(path) if run.series is not None else None,
                       use_totals=False)
        groups.append(_group(run, scope, note))
    return groups


def pooled(parts: list[tuple[int, float, float]]) -> tuple[float, float]:
    """Mean and population stdev of several (samples, mean, stdev) parts, as DiskSpd computes stdev."""
    n = sum(p[0] for p in parts)
    if n == 0:
        return 0.0, 0.0
    mean = sum(c * m for c, m, _ in parts) / n
    var = sum(c * (s * s + (m - mean) ** 2) for c, m, s in parts) / n
    return mean, math.sqrt(max(var, 0.0))
