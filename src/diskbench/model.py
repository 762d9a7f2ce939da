"""The result model every engine's output is parsed into, and every report reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# fio's default percentile list; diskbench asks fio for exactly these.
PERCENTILES: tuple[float, ...] = (
    1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99,
)
TABLE_PERCENTILES: tuple[float, ...] = (50, 90, 95, 99, 99.9, 99.99)
DIRECTIONS = ("read", "write", "trim", "total")


def merge_bins(parts: Iterable[Mapping[int, int]]) -> dict[int, int]:
    """Latency histograms (``Latency.bins``: bin key -> I/Os) summed bin by bin: how fio merges its jobs'
    and clients' bins (engines/fio/percentiles.py), and how the stop rule merges its intervals'."""
    merged: dict[int, int] = {}
    for bins in parts:
        for key, count in bins.items():
            merged[key] = merged.get(key, 0) + count
    return merged


def pkey(p: float) -> str:
    """Percentile key as shown and stored: 50 -> 'p50', 99.9 -> 'p99.9'."""
    return f"p{float(p):g}"


@dataclass
class Latency:
    """Completion latency in microseconds."""

    min: float
    mean: float
    max: float
    stdev: float
    samples: int
    percentiles: dict[str, float] = field(default_factory=dict)
    exact: bool = True  # False when percentiles of several jobs had to be combined without bins
    bins: dict[int, int] | None = None  # the engine's latency histogram: bin key -> I/Os, kept out of reports
    bin_ns: float | None = None  # nanoseconds per unit of a bin key, as the parser knows it (fio 3: 1, fio 2: 1000)
    # percentiles merged without bins (DiskSpd's segments): key -> (lowest, highest) the true value can
    # be; the value in ``percentiles`` is then the highest, and ``exact`` False unless the two meet
    bounds: dict[str, tuple[float, float]] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "min": self.min, "mean": self.mean, "max": self.max, "stdev": self.stdev,
            "samples": self.samples,
        }
        out.update(self.percentiles)
        out["percentiles_exact"] = self.exact
        if self.bin_ns is not None:
            out["bin_ns"] = self.bin_ns
        if self.bounds is not None:
            out["percentile_bounds"] = {k: [lo, hi] for k, (lo, hi) in self.bounds.items()}
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Latency:
        pct = {k: float(v) for k, v in data.items() if k.startswith("p") and k[1:2].isdigit()}
        bounds = data.get("percentile_bounds")
        return cls(
            min=data["min"], mean=data["mean"], max=data["max"], stdev=data["stdev"],
            samples=data.get("samples", 0), percentiles=pct,
            exact=data.get("percentiles_exact", True), bin_ns=data.get("bin_ns"),
            bounds={k: (float(v[0]), float(v[1])) for k, v in bounds.items()} if bounds else None,
        )


@dataclass
class Series:
    """Per-interval figures of one direction (fio interval logs, DiskSpd ``-D``): rate over time.

    Each list has one value per interval; ``None`` where the engine gave no value for it.
    """

    interval_s: float
    iops: list[float]
    bw_bytes_per_s: list[float] | None = None
    lat_mean_us: list[float | None] | None = None
    source: str = ""  # how the engine produced it, e.g. "fio iops log", "diskspd -D"

    def to_json(self) -> dict[str, Any]:
        return {"interval_s": self.interval_s, "iops": self.iops, "bw_bytes_per_s": self.bw_bytes_per_s,
                "lat_mean_us": self.lat_mean_us, "source": self.source}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Series:
        return cls(interval_s=float(data["interval_s"]), iops=list(data["iops"]),
                   bw_bytes_per_s=data.get("bw_bytes_per_s"), lat_mean_us=data.get("lat_mean_us"),
                   source=data.get("source", ""))


@dataclass
class DirectionResult:
    direction: str
    iops: float
    bw_bytes_per_s: float
    ios: int
    io_bytes: int
    runtime_s: float
    clat: Latency | None
    series: Series | None = None  # per-interval rates, when the engine recorded them
    bound: dict[str, Any] | None = None  # the limit that bound it (attribution.record.bound_json), if attributed
    warnings: list[str] = field(default_factory=list)  # pitfalls that may make this figure lie, each with a fix


@dataclass
class GroupResult:
    """One reporting group (or one job name with ``per_job``): what a workload measured."""

    name: str
    job_names: list[str]
    jobs: int
    engine: str
    engine_version: str
    directions: list[DirectionResult]
    hosts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    declared: dict[str, Any] = field(default_factory=dict)  # the configuration an engine's output echoes
    cpu_pct: float | None = None  # the engine's usr + sys CPU, mean per job (% of one core)
    # how an adaptive stop (a workload's stop:) ended the run: reason (confident, max reached, not
    # steady), seconds, reached (the widest relative half-width), confidence; None: it ran its runtime
    stop: dict[str, Any] | None = None

    def direction(self, name: str) -> DirectionResult | None:
        return next((d for d in self.directions if d.direction == name), None)
