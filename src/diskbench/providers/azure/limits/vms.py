"""The storage limits of an Azure VM size, read from the bundled size data (SKU API shape + ``Docs*`` figures).

The SKU API publishes uncached and combined cached+temp limits for older sizes only; burst, temp-disk
read/write, NVMe and the separate Ultra/Premium SSD v2 caps exist only on the size pages, so the bundle
carries them as ``Docs*`` capabilities, with the page and its version per family.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

SIZE_DATA = Path(__file__).resolve().parents[1] / "data" / "sizes.json"


@dataclass(frozen=True)
class VmLimits:
    """A VM size's storage caps. None: not published for this size (not: unlimited). MB/s = 10^6 bytes/s."""

    size: str
    family: str
    vcpus: int
    max_data_disks: int
    premium_io: bool
    host_caching: bool  # "Premium Storage caching" supported
    uncached_iops: int | None
    uncached_mbps: float | None
    burst_iops: int | None  # credit-based VM burst of the uncached caps, 30 min at full credits
    burst_mbps: float | None
    ultra_v2_iops: int | None  # separate uncached caps for Ultra / Premium SSD v2 disks (v6 pages)
    ultra_v2_mbps: float | None
    ultra_v2_burst_iops: int | None
    ultra_v2_burst_mbps: float | None
    cached_iops: int | None  # "max cached and temp storage throughput" (one budget shared by both)
    cached_mbps: float | None
    cache_gib: float | None
    temp_gib: float
    temp_disks: int
    temp_nvme: bool  # the temp disks are raw NVMe devices (v6, Lsv4)
    temp_read_iops: int | None
    temp_read_mbps: float | None
    temp_write_iops: int | None
    temp_write_mbps: float | None
    nvme_disks: int  # local NVMe data disks (L series), all of them
    nvme_gib_each: float
    nvme_read_iops: int | None  # over all NVMe disks
    nvme_read_mbps: float | None
    nvme_write_iops: int | None
    nvme_write_mbps: float | None
    ephemeral_placements: tuple[str, ...]
    source: str
    doc_version: str


@lru_cache(maxsize=1)
def _sizes() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, str]]]:
    doc = json.loads(SIZE_DATA.read_text())
    return {s["name"].lower(): s for s in doc["sizes"]}, doc.get("families", {})


def size_names() -> list[str]:
    """Every size the bundle knows, as Azure spells them."""
    return [s["name"] for s in _sizes()[0].values()]


def vm_limits(size_name: str) -> VmLimits | None:
    """The limits of ``size_name`` (``Standard_D8ds_v4``; case and the ``Standard_`` prefix optional)."""
    sizes, families = _sizes()
    key = size_name.lower()
    sku = sizes.get(key) or sizes.get(f"standard_{key}")
    if sku is None:
        return None
    caps: dict[str, str] = sku["capabilities"]
    family = families.get(sku.get("family", ""), {})
    return VmLimits(
        size=sku["name"], family=sku.get("family", ""), vcpus=_int(caps, "vCPUs") or 0,
        max_data_disks=_int(caps, "MaxDataDiskCount") or 0, premium_io=_bool(caps, "PremiumIO"),
        host_caching=_bool(caps, "DocsPremiumCaching", default=_bool(caps, "PremiumIO")),
        uncached_iops=_int(caps, "UncachedDiskIOPS"), uncached_mbps=_bytes_mbps(caps, "UncachedDiskBytesPerSecond"),
        burst_iops=_int(caps, "DocsUncachedBurstIOPS"), burst_mbps=_num(caps, "DocsUncachedBurstMBps"),
        ultra_v2_iops=_int(caps, "DocsUltraV2UncachedIOPS"), ultra_v2_mbps=_num(caps, "DocsUltraV2UncachedMBps"),
        ultra_v2_burst_iops=_int(caps, "DocsUltraV2BurstIOPS"), ultra_v2_burst_mbps=_num(caps, "DocsUltraV2BurstMBps"),
        cached_iops=_int(caps, "CombinedTempDiskAndCachedIOPS"),
        cached_mbps=_bytes_mbps(caps, "CombinedTempDiskAndCachedReadBytesPerSecond"),
        cache_gib=(v / 1024**3) if (v := _num(caps, "CachedDiskBytes")) else None,
        temp_gib=(_num(caps, "MaxResourceVolumeMB") or 0.0) / 1024, temp_disks=_int(caps, "DocsTempDiskCount") or 0,
        temp_nvme=_bool(caps, "DocsTempDiskNvme"),
        temp_read_iops=_int(caps, "DocsTempReadIOPS"), temp_read_mbps=_num(caps, "DocsTempReadMBps"),
        temp_write_iops=_int(caps, "DocsTempWriteIOPS"), temp_write_mbps=_num(caps, "DocsTempWriteMBps"),
        nvme_disks=_int(caps, "NvmeDiskCount") or 0, nvme_gib_each=(_num(caps, "NvmeDiskSizeInMiB") or 0.0) / 1024,
        nvme_read_iops=_int(caps, "DocsNvmeReadIOPS"), nvme_read_mbps=_num(caps, "DocsNvmeReadMBps"),
        nvme_write_iops=_int(caps, "DocsNvmeWriteIOPS"), nvme_write_mbps=_num(caps, "DocsNvmeWriteMBps"),
        ephemeral_placements=tuple(p for p in caps.get("SupportedEphemeralOSDiskPlacements", "").split(",") if p),
        source=family.get("source", "bundled size data"), doc_version=family.get("doc_version", "unknown"),
    )


def _num(caps: dict[str, str], key: str) -> float | None:
    value = caps.get(key)
    return float(value) if value not in (None, "") else None


def _int(caps: dict[str, str], key: str) -> int | None:
    value = _num(caps, key)
    return int(value) if value is not None else None


def _bool(caps: dict[str, str], key: str, default: bool = False) -> bool:
    value = caps.get(key)
    return default if value is None else value.lower() == "true"


def _bytes_mbps(caps: dict[str, str], key: str) -> float | None:
    """The bundle stores decimal bytes/s for every size, so MB/s is an exact division."""
    value = _num(caps, key)
    return value / 1e6 if value else None
