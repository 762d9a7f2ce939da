"""What an Azure VM size offers for storage, in the shape of the Resource SKUs API.

A snapshot for the seed sizes ships with diskbench, so plans are checked offline, before
anyone logs in; the Azure provider refreshes it from the SKU API when it can.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "sizes.json"
PREMIUM_TYPES = ("Premium_LRS", "PremiumV2_LRS", "UltraSSD_LRS")


@dataclass
class SizeInfo:
    name: str
    family: str
    vcpus: int
    memory_gb: float
    temp_disk_gb: float
    max_data_disks: int
    premium_io: bool
    ephemeral_placements: list[str] = field(default_factory=list)
    cached_iops: int | None = None
    cached_mbps: float | None = None
    cache_gb: float | None = None
    uncached_iops: int | None = None
    uncached_mbps: float | None = None
    nvme_disks: int = 0
    nvme_gb: float = 0.0

    @classmethod
    def from_sku(cls, sku: dict[str, Any]) -> SizeInfo:
        caps = sku["capabilities"]
        if isinstance(caps, list):  # the SKU API's own [{name, value}] form
            caps = {c["name"]: c["value"] for c in caps}

        def num(key: str) -> float | None:
            return float(caps[key]) if caps.get(key) not in (None, "") else None

        placements = [p for p in str(caps.get("SupportedEphemeralOSDiskPlacements", "")).split(",") if p]
        return cls(
            name=sku["name"], family=sku.get("family", ""), vcpus=int(num("vCPUs") or 0),
            memory_gb=num("MemoryGB") or 0.0, temp_disk_gb=(num("MaxResourceVolumeMB") or 0.0) / 1024,
            max_data_disks=int(num("MaxDataDiskCount") or 0),
            premium_io=str(caps.get("PremiumIO", "False")).lower() == "true",
            ephemeral_placements=placements,
            cached_iops=int(v) if (v := num("CombinedTempDiskAndCachedIOPS")) else None,
            cached_mbps=(v / 1e6) if (v := num("CombinedTempDiskAndCachedReadBytesPerSecond")) else None,
            cache_gb=(v / 1024**3) if (v := num("CachedDiskBytes")) else None,
            uncached_iops=int(v) if (v := num("UncachedDiskIOPS")) else None,
            uncached_mbps=(v / 1e6) if (v := num("UncachedDiskBytesPerSecond")) else None,
            nvme_disks=int(num("NvmeDiskCount") or 0), nvme_gb=(num("NvmeDiskSizeInMiB") or 0.0) / 1024,
        )


@lru_cache(maxsize=1)
def bundled_sizes() -> dict[str, SizeInfo]:
    doc = json.loads(DATA.read_text())
    return {s["name"]: SizeInfo.from_sku(s) for s in doc["sizes"]}


def cache_path(region: str) -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("diskbench")) / f"azure-sizes-{region}.json"


def save_region(region: str, sizes: list[SizeInfo]) -> Path:
    path = cache_path(region)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(s) for s in sizes], indent=1))
    return path


def region_sizes(region: str | None) -> tuple[dict[str, SizeInfo], str]:
    """Sizes for ``region``: the SKU API's answer cached by ``sizes --refresh``, else the bundle."""
    if region:
        try:
            cached = json.loads(cache_path(region).read_text())
            return {s["name"]: SizeInfo(**s) for s in cached}, f"SKU API, cached for {region}"
        except (OSError, ValueError, TypeError):
            pass
    return bundled_sizes(), "bundled size data; availability unknown offline"


def lookup(name: str, region: str | None = None) -> SizeInfo | None:
    sizes, _ = region_sizes(region)
    return sizes.get(name) or next((s for k, s in sizes.items() if k.lower() == name.lower()), None)
