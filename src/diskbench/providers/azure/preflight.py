"""Check machines against their VM size and image before anything is created; list every problem at once.

Each rule is one Azure refuses at create time, and each problem names the page that says so, so a
plan fails in a second instead of after a resource group, a network and a half-built VM.
``DISKBENCH_AZURE_PREFLIGHT=off`` skips these checks (not the subscription's restrictions and quota):
for when the bundled size data is behind Azure and Azure should be the judge.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..base import Problem
from .schema import DataDisk, Machine
from .sizes import PREMIUM_TYPES, SizeInfo, family_page, lookup

IMAGES = Path(__file__).resolve().parent / "data" / "images.json"
DOCS = "https://learn.microsoft.com/azure/virtual-machines/"
CACHING_DOC = DOCS + "premium-storage-performance#disk-caching"
EPHEMERAL_DOC = DOCS + "ephemeral-os-disks#size-requirements"
ULTRA_DOC = DOCS + "disks-enable-ultra-ssd"
PREMIUM_V2_DOC = DOCS + "disks-deploy-premium-v2"
GEN2_DOC = DOCS + "generation-2"
NVME_DOC = DOCS + "enable-nvme-interface"
NVME_TEMP_DOC = DOCS + "enable-nvme-temp-faqs"
NO_HOST_CACHE_GIB = 4096  # host caching stops at disks of 4 TiB
PROVISIONED = ("PremiumV2_LRS", "UltraSSD_LRS")


@dataclass(frozen=True)
class ImageFacts:
    generation: str
    controllers: tuple[str, ...]
    architecture: str
    os_disk_gib: int


@lru_cache(maxsize=1)
def _images() -> dict[str, ImageFacts]:
    doc: dict[str, Any] = json.loads(IMAGES.read_text())
    return {i["image"].lower(): ImageFacts(i["generation"], tuple(i["controllers"]), i["architecture"],
                                           i["os_disk_gib"]) for i in doc["images"]}


def nvme_only(size: SizeInfo) -> bool:
    """Whether the size attaches its disks over NVMe only (v6, Lsv4, ...): the VM body asks for the NVMe
    controller (vmspec.disk_controller), its image must be tagged for it, and its data disks are NVMe
    namespaces, not SCSI LUNs."""
    return size.controllers == ["NVMe"]


def image_facts(image: str) -> ImageFacts | None:
    """What pre-flight knows of a Marketplace image (``publisher:offer:sku[:version]``); None: not listed."""
    return _images().get(":".join(image.split(":")[:3]).lower())


Report = Callable[[str, str], None]


def check_machine(m: Machine, size: SizeInfo | None) -> list[Problem]:
    out: list[Problem] = []

    def bad(message: str, fix: str) -> None:
        out.append(Problem(m.name, message, fix))

    if os.environ.get("DISKBENCH_AZURE_PREFLIGHT", "").lower() == "off":
        return out
    if size is None:
        bad(f"{m.size} is not in diskbench's size data",
            "check the name with `diskbench sizes`, or log in and run `diskbench sizes --refresh`")
        return out
    page = family_page(size.family)[0]
    image = image_facts(m.image)
    _premium(m, size, page, bad)
    _boot(m, size, image, page, bad)
    _ephemeral(m, size, image, page, bad)
    _disks(m, size, page, bad)
    _targets(m, size, bad)
    return out


def _premium(m: Machine, size: SizeInfo, page: str, bad: Report) -> None:
    premium = [d.type for d in m.data_disks if d.type in PREMIUM_TYPES]
    if not size.premium_io and (premium or (m.os_disk.type == "Premium_LRS" and not m.os_disk.ephemeral)):
        bad(f"{m.size} does not support Premium storage (PremiumIO), which {', '.join(premium) or 'Premium_LRS'} "
            f"needs", f"pick an 's' size, or Standard_LRS / StandardSSD_LRS disks; {page}")


def _boot(m: Machine, size: SizeInfo, image: ImageFacts | None, page: str, bad: Report) -> None:
    """The image must boot on the size: its generation, its disk controller and its architecture."""
    if image is None:
        return
    if size.generations and image.generation not in size.generations:
        bad(f"{m.size} boots Hyper-V generation {' or '.join(size.generations)} only; image {m.image} is "
            f"generation {image.generation}", f"pick a Gen2 image (sku ending -gen2/-g2) or another size; {GEN2_DOC}")
    if nvme_only(size) and "NVMe" not in image.controllers:
        bad(f"{m.size} attaches disks over NVMe only; image {m.image} is not tagged for NVMe",
            f"pick an NVMe-tagged Gen2 image such as Canonical:ubuntu-24_04-lts:server, or a SCSI size; {NVME_DOC}")
    if size.architecture and image.architecture.lower() != size.architecture.lower():
        bad(f"{m.size} is {size.architecture}; image {m.image} is {image.architecture}",
            f"pick an {size.architecture} image (e.g. Canonical:ubuntu-24_04-lts:server-arm64) or an "
            f"{image.architecture} size; {page}")


def _ephemeral(m: Machine, size: SizeInfo, image: ImageFacts | None, page: str, bad: Report) -> None:
    eph = m.os_disk.ephemeral
    if not eph:
        return
    if m.os_disk.caching != "ReadOnly":
        bad("an ephemeral OS disk needs caching ReadOnly", f"set os_disk.caching: ReadOnly; {EPHEMERAL_DOC}")
    if eph not in size.ephemeral_placements:
        where = ", ".join(size.ephemeral_placements) or "no placement: the size takes no ephemeral OS disk"
        bad(f"{m.size} cannot place an ephemeral OS disk on {eph} (it supports {where})",
            f"choose a supported placement or a size with a cache or temp disk; {page}")
        return
    needed = m.os_disk.size_gb or (image.os_disk_gib if image else None)
    room = {"CacheDisk": size.cache_gb, "ResourceDisk": size.temp_disk_gb,
            "NvmeDisk": size.temp_disk_gb or size.nvme_total_gb}.get(eph)
    if needed and room is not None and needed > room:
        what = f"{needed} GiB" if m.os_disk.size_gb else f"the image's {needed} GiB"
        bad(f"an ephemeral OS disk of {what} does not fit the {eph} ({room:.0f} GiB) of {m.size}",
            f"make os_disk.size_gb smaller, choose another placement or a larger size; {EPHEMERAL_DOC}")


def _disks(m: Machine, size: SizeInfo, page: str, bad: Report) -> None:
    count = sum(d.count for d in m.data_disks)
    if count > size.max_data_disks:
        bad(f"{count} data disks exceed the {size.max_data_disks} that {m.size} takes",
            f"use fewer, larger disks or a larger size; {page}")
    if (m.os_disk.size_gb or 0) >= NO_HOST_CACHE_GIB and m.os_disk.caching != "None" and not m.os_disk.ephemeral:
        bad(f"host caching {m.os_disk.caching} on a {m.os_disk.size_gb} GiB OS disk: Azure caches disks under "
            "4 TiB only", f"set os_disk.caching: None; {CACHING_DOC}")
    for d in m.data_disks:
        _disk(m, d, bad)


def _disk(m: Machine, d: DataDisk, bad: Report) -> None:
    if d.type in PROVISIONED:
        doc = ULTRA_DOC if d.type == "UltraSSD_LRS" else PREMIUM_V2_DOC
        if d.caching != "None":
            bad(f"{d.type} disks take no host caching (caching: {d.caching})", f"set caching: None; {doc}")
        if not m.zone:
            bad(f"{d.type} disks attach only to a VM in an availability zone; the machine has no zone",
                f"set zone: (1, 2 or 3, one the size is offered in); {doc}")
    elif d.caching != "None" and d.size_gb >= NO_HOST_CACHE_GIB:
        bad(f"host caching {d.caching} on {d.size_gb} GiB {d.type} disks: Azure caches disks under 4 TiB only",
            f"set caching: None for disks of 4 TiB or more; {CACHING_DOC}")
    if (d.iops or d.mbps) and d.type not in PROVISIONED:
        bad(f"{d.type} disks have fixed performance; iops/mbps apply to PremiumV2_LRS and UltraSSD_LRS",
            "remove iops/mbps or change the disk type")


def _targets(m: Machine, size: SizeInfo, bad: Report) -> None:
    disks = sum(d.count for d in m.data_disks)
    for target in m.named_targets().values():
        if target.kind == "temp" and size.temp_disk_gb <= 0 and not (size.temp_nvme and size.nvme_disks):
            bad(f"{m.size} has no temp disk to measure", "pick a 'd' size (e.g. Standard_E8ds_v4) or another target")
        elif target.kind == "temp" and size.temp_nvme and m.os == "windows":
            # enable-nvme-temp-faqs: v6 temp disks come raw, "Customers should initialize and format the disks"
            bad(f"{m.size}'s temp disks are raw NVMe devices, which diskbench formats on Linux only (Windows "
                "images have no D: there)", f"use a Linux image, or a size with a SCSI temp disk; {NVME_TEMP_DOC}")
        elif target.kind == "temp" and getattr(target, "raw", None) and not size.temp_nvme:
            bad(f"temp: raw: true takes a temp disk that comes raw; {m.size}'s is a SCSI disk the Azure agent "
                f"formats and mounts {'as D:' if m.os == 'windows' else 'at /mnt'}",
                "leave raw: out to measure it there, or pick a size whose temp "
                f"disks are raw NVMe (v6, e.g. Standard_D4ds_v6); {NVME_TEMP_DOC}")
        if target.kind == "nvme" and size.nvme_disks == 0:
            bad(f"{m.size} has no local NVMe disks", "use an L-series size such as Standard_L8s_v2")
        luns = [target.value] if target.kind == "lun" else list(target.value) if target.kind == "luns" else []
        if any(n >= disks for n in luns):
            bad(f"the target uses LUN {max(luns)} but the machine has {disks} data disk(s)",
                "add data_disks or pick an existing LUN")


def check_machines(machines: list[Machine]) -> list[Problem]:
    problems: list[Problem] = []
    for m in machines:
        problems += check_machine(m, lookup(m.size, m.region))
    return problems
