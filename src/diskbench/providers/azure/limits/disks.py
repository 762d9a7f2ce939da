"""Published Azure limits: what a managed disk and a VM size may deliver, with the document each came from.

Pure arithmetic over two bundled data files: ``data/disk-types.json`` (disk tiers and the Premium SSD v2 /
Ultra rules, several doc versions where they changed) and ``data/sizes.json`` (VM sizes in
the SKU API's shape, plus ``Docs*`` capabilities that only the size pages publish: burst, temp and NVMe
figures). Nothing here talks to Azure; a result can be attributed offline, years later, against the
limits that were published when it was measured.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ....errors import DiskbenchError
from .vms import VmLimits, size_names, vm_limits

__all__ = ["DiskLimits", "LimitsError", "VmLimits", "burst_seconds", "disk_kind", "disk_limits", "effective_iops",
           "premium_v2_max", "size_names", "tier_for", "vm_limits"]

DISK_DATA = Path(__file__).resolve().parents[1] / "data" / "disk-types.json"
IO_UNIT_BYTES = 256 * 1024  # Azure SSDs count a larger I/O as several of this size


class LimitsError(DiskbenchError):
    """A disk or VM description the published limits cannot answer (unknown type, size or performance)."""


@dataclass(frozen=True)
class DiskLimits:
    """What one managed disk may deliver: baseline, burst, and how the platform counts large I/O."""

    storage_type: str
    kind: str  # premium_ssd, standard_ssd, standard_hdd, premium_ssd_v2, ultra
    tier: str  # P30, E10, S4; "PremiumV2" / "Ultra" for provisioned-performance disks
    size_gib: int  # the tier's size (what the disk is billed and performs as), or the provisioned size
    iops: int
    mbps: float
    burst_iops: int | None = None
    burst_mbps: float | None = None
    burst_minutes: float | None = None  # at the max burst rate with a full credit bucket; None: unlimited
    burst_model: str | None = None  # "credit" or "on-demand"
    io_unit_bytes: int | None = None
    host_caching: bool = True
    source: str = ""
    doc_version: str = ""

    @property
    def label(self) -> str:
        """``P30`` for tiers, ``PremiumV2 20,000 IOPS/500 MB/s`` for provisioned disks."""
        if self.kind in ("premium_ssd_v2", "ultra"):
            return f"{self.tier} {self.iops:,} IOPS/{self.mbps:,.0f} MB/s"
        return self.tier


@lru_cache(maxsize=1)
def _disk_table() -> dict[str, Any]:
    types: dict[str, Any] = json.loads(DISK_DATA.read_text())["types"]
    return types


def disk_kind(storage_type: str) -> str:
    """The disk family of an ARM storage account type (``Premium_LRS`` -> ``premium_ssd``)."""
    for kind, spec in _disk_table().items():
        if any(storage_type.lower() == t.lower() for t in spec["storage_types"]):
            return kind
    known = ", ".join(t for spec in _disk_table().values() for t in spec["storage_types"])
    raise LimitsError(f"unknown disk type {storage_type!r}", hint=f"use one of {known}")


def tier_for(storage_type: str, size_gb: int) -> str:
    """The tier a disk of ``size_gb`` GiB is billed and performs as: the smallest tier it fits in."""
    return _tier_row(disk_kind(storage_type), storage_type, size_gb)["tier"]  # type: ignore[no-any-return]


def _tier_row(kind: str, storage_type: str, size_gb: int) -> dict[str, Any]:
    spec = _disk_table()[kind]
    if "tiers" not in spec:
        raise LimitsError(f"{storage_type} has no size tiers: its limits are provisioned (give iops and mbps)")
    if size_gb < 1:
        raise LimitsError(f"disk size {size_gb} GiB is not a size", hint="use a whole number of GiB >= 1")
    for row in spec["tiers"]:
        if size_gb <= row["size_gib"]:
            return row  # type: ignore[no-any-return]
    largest = spec["tiers"][-1]
    raise LimitsError(f"{storage_type} disks go up to {largest['size_gib']:,} GiB ({largest['tier']}), "
                      f"not {size_gb:,} GiB")


def disk_limits(storage_type: str, size_gb: int, iops: int | None = None, mbps: float | None = None, *,
                on_demand_burst: bool = False, doc_version: str | None = None) -> DiskLimits:
    """The published limits of one managed disk.

    Tiered types (Premium SSD, Standard SSD/HDD) map ``size_gb`` to the smallest tier that fits and ignore
    ``iops``/``mbps``. Premium SSD v2 and Ultra are checked against the rules of ``doc_version`` (default:
    the newest bundled) and get what was provisioned (Premium SSD v2 defaults to its free 3,000/125).
    ``on_demand_burst``: the disk has on-demand bursting enabled (Premium SSD above 512 GiB only).
    """
    kind = disk_kind(storage_type)
    spec = _disk_table()[kind]
    if "rules" in spec:
        return _provisioned(kind, storage_type, spec, size_gb, iops, mbps, doc_version)
    row = _tier_row(kind, storage_type, size_gb)
    burst: dict[str, Any] = {}
    if "burst_iops" in row:
        burst = {"burst_iops": row["burst_iops"], "burst_mbps": float(row["burst_mbps"]),
                 "burst_minutes": float(row["burst_minutes"]), "burst_model": row["burst_model"]}
    elif on_demand_burst and "on_demand_burst_iops" in row:
        burst = {"burst_iops": row["on_demand_burst_iops"], "burst_mbps": float(row["on_demand_burst_mbps"]),
                 "burst_minutes": None, "burst_model": "on-demand"}
    return DiskLimits(storage_type=storage_type, kind=kind, tier=row["tier"], size_gib=row["size_gib"],
                      iops=row["iops"], mbps=float(row["mbps"]), io_unit_bytes=spec["io_unit_bytes"],
                      host_caching=spec["host_caching"], source=spec["source"], doc_version=spec["doc_version"],
                      **burst)


def _rules(spec: dict[str, Any], doc_version: str | None) -> dict[str, Any]:
    if doc_version is None:
        return spec["rules"][0]  # type: ignore[no-any-return]
    for rules in spec["rules"]:
        if rules["doc_version"] == doc_version:
            return rules  # type: ignore[no-any-return]
    known = ", ".join(r["doc_version"] for r in spec["rules"])
    raise LimitsError(f"no {spec['label']} rules of {doc_version!r}", hint=f"bundled: {known}")


def _provisioned(kind: str, storage_type: str, spec: dict[str, Any], size_gb: int, iops: int | None,
                 mbps: float | None, doc_version: str | None) -> DiskLimits:
    rules = _rules(spec, doc_version)
    label = spec["label"]
    if not rules["min_gib"] <= size_gb <= rules["max_gib"]:
        raise LimitsError(f"{label} sizes are {rules['min_gib']}-{rules['max_gib']:,} GiB, not {size_gb:,}")
    if kind == "premium_ssd_v2":
        iops = rules["base_iops"] if iops is None else iops
        mbps = rules["base_mbps"] if mbps is None else mbps
        max_iops, max_mbps = premium_v2_max(rules, size_gb, iops)
        min_iops, min_mbps = rules["base_iops"], rules["base_mbps"]
    else:
        if iops is None or mbps is None:
            raise LimitsError(f"{label} limits are what was provisioned", hint="give the disk's iops and mbps")
        max_iops = min(rules["iops_per_gib"] * size_gb, rules["max_iops"])
        max_mbps = min(rules["mbps_per_iops"] * iops, rules["max_mbps"])
        min_iops, min_mbps = rules["min_iops"], rules["min_mbps"]
    if not min_iops <= iops <= max_iops:
        raise LimitsError(f"a {size_gb:,} GiB {label} takes {min_iops:,}-{max_iops:,.0f} IOPS, not {iops:,}")
    if not min_mbps <= mbps <= max_mbps:
        raise LimitsError(f"a {label} with {iops:,} IOPS takes {min_mbps:,}-{max_mbps:,.0f} MB/s, not {mbps:,}")
    return DiskLimits(storage_type=storage_type, kind=kind, tier="PremiumV2" if kind == "premium_ssd_v2" else "Ultra",
                      size_gib=size_gb, iops=iops, mbps=float(mbps), host_caching=False, source=rules["source"],
                      doc_version=rules["doc_version"])


def premium_v2_max(rules: dict[str, Any], size_gb: int, iops: int) -> tuple[int, float]:
    """Largest IOPS a Premium SSD v2 of ``size_gb`` may be given, and largest MB/s at ``iops``.

    Up to ``free_gib`` GiB a disk keeps the 3,000 IOPS baseline; each further GiB allows 500 more, to
    80,000. Throughput above the 125 MB/s baseline needs 0.25 MB/s per provisioned IOPS, up to the max.
    """
    extra_gib = max(0, size_gb - rules["free_gib"])
    max_iops = min(rules["base_iops"] + rules["iops_per_gib"] * extra_gib, rules["max_iops"])
    max_mbps = min(max(rules["base_mbps"], rules["mbps_per_iops"] * iops), rules["max_mbps"])
    return int(max_iops), float(max_mbps)


def effective_iops(measured_iops: float, bs_bytes: int, io_unit_bytes: int = IO_UNIT_BYTES) -> float:
    """IOPS as an Azure SSD counts them: an I/O larger than 256 KiB is several 256 KiB I/Os.

    1 MiB blocks at 200 IOPS use 800 of a Premium SSD's IOPS; 256 KiB and smaller count once each.
    """
    if bs_bytes <= 0:
        raise ValueError(f"block size {bs_bytes} is not a size")
    return measured_iops * max(1, math.ceil(bs_bytes / io_unit_bytes))


def burst_seconds(limits: DiskLimits, rate_iops: float) -> float | None:
    """How long a full credit bucket lasts at ``rate_iops``; None when the disk has no credit burst.

    The bucket holds 30 minutes at the max burst rate: (burst - baseline) x 1,800 s of I/O above the
    baseline. At or below the baseline credits are not spent (``inf``).
    """
    if limits.burst_model != "credit" or limits.burst_iops is None or limits.burst_minutes is None:
        return None
    above = min(rate_iops, limits.burst_iops) - limits.iops
    if above <= 0:
        return math.inf
    return (limits.burst_iops - limits.iops) * limits.burst_minutes * 60 / above
