"""What an Azure VM size offers for storage, in the shape of the Resource SKUs API.

A snapshot of Azure's size pages ships with diskbench (``data/sizes.json``: every current general
purpose, memory and storage optimised family from v4 to v6), so plans are checked offline, before
anyone logs in. ``diskbench sizes --refresh`` reads the SKU API for a region and caches what it
returns over the bundle: the API's figures win, the ``Docs*`` figures only the pages publish stay.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "sizes.json"
PREMIUM_TYPES = ("Premium_LRS", "PremiumV2_LRS", "UltraSSD_LRS")
PAGE_ROOT = "https://learn.microsoft.com/azure/"


@dataclass
class SizeInfo:
    """A size's storage, network and boot capabilities. None: not published (not: unlimited)."""

    name: str
    family: str
    vcpus: int
    memory_gb: float
    temp_disk_gb: float  # all temp disks together
    max_data_disks: int
    premium_io: bool
    ephemeral_placements: list[str] = field(default_factory=list)
    cached_iops: int | None = None
    cached_mbps: float | None = None
    cache_gb: float | None = None
    uncached_iops: int | None = None
    uncached_mbps: float | None = None
    nvme_disks: int = 0
    nvme_gb: float = 0.0  # each local NVMe disk
    burst_iops: int | None = None
    burst_mbps: float | None = None
    ultra_v2_iops: int | None = None
    ultra_v2_mbps: float | None = None
    network_mbps: int | None = None
    max_nics: int | None = None
    host_caching: bool = True
    temp_nvme: bool = False  # the temp disks are raw NVMe devices (v6, Lsv4)
    generations: list[str] = field(default_factory=list)  # Hyper-V generations it boots; [] unknown
    controllers: list[str] = field(default_factory=list)  # disk controllers it offers; [] unknown
    architecture: str = ""  # x64 / Arm64; "" unknown

    @classmethod
    def from_sku(cls, sku: dict[str, Any]) -> SizeInfo:
        """From a bundled entry or the SKU API's answer (capabilities as a dict or as [{name, value}])."""
        caps = capabilities(sku)

        def num(key: str) -> float | None:
            return float(caps[key]) if caps.get(key) not in (None, "") else None

        def whole(key: str) -> int | None:
            value = num(key)
            return int(value) if value else None

        def listed(key: str) -> list[str]:
            return [p.strip() for p in str(caps.get(key, "")).split(",") if p.strip()]

        nvme_disks, nvme_gb = _nvme(caps, num)
        return cls(
            name=sku["name"], family=sku.get("family", ""), vcpus=int(num("vCPUs") or 0),
            memory_gb=num("MemoryGB") or 0.0, temp_disk_gb=(num("MaxResourceVolumeMB") or 0.0) / 1024,
            max_data_disks=int(num("MaxDataDiskCount") or 0),
            premium_io=_true(caps, "PremiumIO"), ephemeral_placements=listed("SupportedEphemeralOSDiskPlacements"),
            cached_iops=whole("CombinedTempDiskAndCachedIOPS"),
            cached_mbps=(v / 1e6) if (v := num("CombinedTempDiskAndCachedReadBytesPerSecond")) else None,
            cache_gb=(v / 1024**3) if (v := num("CachedDiskBytes")) else None,
            uncached_iops=whole("UncachedDiskIOPS"),
            uncached_mbps=(v / 1e6) if (v := num("UncachedDiskBytesPerSecond")) else None,
            nvme_disks=nvme_disks, nvme_gb=nvme_gb,
            burst_iops=whole("DocsUncachedBurstIOPS"), burst_mbps=num("DocsUncachedBurstMBps"),
            ultra_v2_iops=whole("DocsUltraV2UncachedIOPS"), ultra_v2_mbps=num("DocsUltraV2UncachedMBps"),
            network_mbps=whole("DocsNetworkMbps"), max_nics=whole("MaxNetworkInterfaces"),
            host_caching=_true(caps, "DocsPremiumCaching", default=_true(caps, "PremiumIO")),
            temp_nvme=_true(caps, "DocsTempDiskNvme"), generations=listed("HyperVGenerations"),
            controllers=listed("DiskControllerTypes"), architecture=str(caps.get("CpuArchitectureType", "")),
        )

    @property
    def nvme_total_gb(self) -> float:
        return self.nvme_disks * self.nvme_gb


def capabilities(sku: dict[str, Any]) -> dict[str, str]:
    """A SKU's capabilities as {name: value}, whichever of the two shapes it came in."""
    caps = sku.get("capabilities") or {}
    if isinstance(caps, list):  # the SKU API's own [{name, value}] form
        return {str(c["name"]): str(c["value"]) for c in caps}
    return {str(k): str(v) for k, v in caps.items()}


def _true(caps: dict[str, str], key: str, default: bool = False) -> bool:
    value = caps.get(key)
    return default if value is None else value.lower() == "true"


def _nvme(caps: dict[str, str], num: Any) -> tuple[int, float]:
    """Local NVMe disks and the GiB of each. The bundle counts them (NvmeDiskCount, size per disk); the
    SKU API gives the total (NvmeDiskSizeInMiB) and the size of one (NvmeSizePerDiskInMiB)."""
    per_disk, total = num("NvmeSizePerDiskInMiB"), num("NvmeDiskSizeInMiB")
    if per_disk and total:
        return round(total / per_disk), per_disk / 1024
    return int(num("NvmeDiskCount") or 0), (total or 0.0) / 1024


@lru_cache(maxsize=1)
def _bundle() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(DATA.read_text())
    return doc


def bundled_skus() -> dict[str, dict[str, Any]]:
    """The bundled entries by size name, in the SKU API's shape."""
    return {s["name"]: s for s in _bundle()["sizes"]}


@lru_cache(maxsize=1)
def bundled_sizes() -> dict[str, SizeInfo]:
    return {name: SizeInfo.from_sku(s) for name, s in bundled_skus().items()}


def family_page(family: str) -> tuple[str, str]:
    """The size page of a family as a learn.microsoft.com address, and the version read (ms.date, commit)."""
    info = _bundle()["families"].get(family, {})
    source = str(info.get("source", ""))
    path = source.split()[1].rstrip(";") if source.startswith("MicrosoftDocs/azure-compute-docs ") else ""
    url = PAGE_ROOT + path.removeprefix("articles/").removesuffix(".md") if path else "diskbench's size data"
    return url, str(info.get("doc_version", "unknown version"))


def merged_sku(live: dict[str, Any]) -> dict[str, Any]:
    """A SKU API entry over the bundled one of the same size: the API's figures win; what only the
    pages publish (the Docs* capabilities, and any the API leaves out) stays."""
    bundled = next((s for n, s in bundled_skus().items() if n.lower() == str(live["name"]).lower()), None)
    caps = dict(capabilities(bundled)) if bundled else {}
    caps.update(capabilities(live))
    return {"name": live["name"], "family": live.get("family") or (bundled or {}).get("family", ""),
            "capabilities": caps}


def cache_path(region: str) -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("diskbench")) / f"azure-sizes-{region}.json"


def save_region(region: str, skus: list[dict[str, Any]]) -> Path:
    """Cache a region's SKU API answer (merged over the bundle) for offline plans and ``sizes``."""
    path = cache_path(region)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"region": region, "read": datetime.now(timezone.utc).isoformat(timespec="seconds"), "sizes": skus}
    path.write_text(json.dumps(doc, indent=1))
    return path


def region_sizes(region: str | None) -> tuple[dict[str, SizeInfo], str]:
    """Sizes for ``region``: the SKU API's answer cached by ``sizes --refresh``, else the bundle."""
    if region:
        try:
            return _cached(region)
        except (OSError, ValueError, TypeError, KeyError):
            pass
    return bundled_sizes(), "bundled size pages; availability unknown offline"


def _cached(region: str) -> tuple[dict[str, SizeInfo], str]:
    """The region's cached SKU API answer, read once per version of the file (a run's VMs, each looking
    its size up while they are created in parallel, do not each parse the whole file)."""
    path = cache_path(region)
    stat = path.stat()
    sizes, source = _read_cached(str(path), region, stat.st_mtime_ns, stat.st_size)
    return dict(sizes), source


@lru_cache(maxsize=8)
def _read_cached(path: str, region: str, mtime_ns: int, size: int) -> tuple[dict[str, SizeInfo], str]:
    doc = json.loads(Path(path).read_text())
    if isinstance(doc, list):  # written by an older diskbench: SizeInfo fields
        known = {f.name for f in fields(SizeInfo)}
        return {s["name"]: SizeInfo(**{k: v for k, v in s.items() if k in known}) for s in doc}, \
            f"SKU API, cached for {region}"
    sizes = {s["name"]: SizeInfo.from_sku(s) for s in doc["sizes"]}
    return sizes, f"SKU API, cached for {region} on {doc.get('read', '?')[:10]}"


def lookup(name: str, region: str | None = None) -> SizeInfo | None:
    sizes, _ = region_sizes(region)
    wanted = name.lower()
    return sizes.get(name) or next((s for k, s in sizes.items() if k.lower() in (wanted, f"standard_{wanted}")),
                                   None)
