"""A published ceiling on what a target can deliver, in a form every provider can produce.

Providers turn their own tables (Azure VM sizes, disk tiers, ...) into a flat list of ``Limit``; the
attribution code compares a measurement against that list without knowing which cloud it came from.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

# Limit kinds. "vm_*" are the VM size's caps, "disk_*" the attached disks' caps (summed over a stripe),
# "temp_*" the local temp disk, "nvme_*" local NVMe devices; "*_burst_*" only hold while credits last.
KINDS = (
    "vm_uncached_iops", "vm_uncached_mbps", "vm_burst_iops", "vm_burst_mbps",
    "vm_cached_iops", "vm_cached_mbps", "temp_iops", "temp_mbps",
    "disk_iops", "disk_mbps", "disk_burst_iops", "disk_burst_mbps",
    "nvme_iops", "nvme_mbps",
)
# each baseline cap and the burst cap above it (credits let a target run above the one up to the other)
BURST_OF = {"disk_iops": "disk_burst_iops", "disk_mbps": "disk_burst_mbps",
            "vm_uncached_iops": "vm_burst_iops", "vm_uncached_mbps": "vm_burst_mbps"}


@dataclass(frozen=True)
class Limit:
    """One ceiling: ``value`` IOPS or MB/s (10^6 bytes/s) for I/O in ``direction``.

    ``scope`` names what is limited, as a person would say it ("Standard_D8ds_v4 uncached", "3 x P30").
    ``cache_miss_only``: the ceiling only applies to I/O that misses a host cache (a cached disk's own
    cap), so a result above it is explained by the cache rather than contradicting the table.
    ``burst``: reachable only while burst credits last (``minutes`` at full credits, None if unlimited).
    ``io_unit_bytes``: the platform counts an I/O larger than this as several (Azure SSDs: 256 KiB).
    """

    kind: str
    value: float
    scope: str
    source: str
    direction: str = "any"  # "read", "write" or "any"
    cache_miss_only: bool = False
    burst: bool = False
    minutes: float | None = None
    io_unit_bytes: int | None = None

    @property
    def metric(self) -> str:
        """``iops`` or ``mbps``: what the value counts."""
        return "mbps" if self.kind.endswith("_mbps") else "iops"

    @property
    def unit(self) -> str:
        return "MB/s" if self.metric == "mbps" else "IOPS"

    def applies_to(self, direction: str) -> bool:
        return self.direction == "any" or self.direction == direction

    def label(self) -> str:
        """``Standard_D8ds_v4 uncached 12,800 IOPS``."""
        return f"{self.scope} {self.value:,.0f} {self.unit}"

    def bursts_above(self, base: Limit) -> bool:
        """Whether this is the burst cap over ``base``: its kind's burst kind, for the same target
        ("P10 burst" over "P10", "D8 uncached burst" over "D8 uncached"; scaled alike in a lab)."""
        return self.kind == BURST_OF.get(base.kind) and _stem(self.scope).startswith(_stem(base.scope))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Limit:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def scaled(self, factor: float) -> Limit:
        """The limit times ``factor`` (a lab whose throttles stand for the cloud's caps at a scale)."""
        return replace(self, value=self.value * factor, scope=f"{self.scope} x{factor:g}")


def _stem(scope: str) -> str:
    """A scope without the scale a lab adds (``P10 burst x0.1`` -> ``P10 burst``)."""
    return _SCALED.sub("", scope)


_SCALED = re.compile(r" x[0-9.e+-]+$")
