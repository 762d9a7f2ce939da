"""Check machines against their VM size before anything is created; list every problem at once."""

from __future__ import annotations

from ..base import Problem
from .schema import Machine
from .sizes import PREMIUM_TYPES, SizeInfo, lookup


def check_machine(m: Machine, size: SizeInfo | None) -> list[Problem]:
    out: list[Problem] = []

    def bad(message: str, fix: str) -> None:
        out.append(Problem(m.name, message, fix))

    if size is None:
        bad(f"{m.size} is not in diskbench's size data",
            "check the name with `diskbench sizes`, or log in so diskbench can read the SKU API")
        return out
    premium = [d.type for d in m.data_disks if d.type in PREMIUM_TYPES]
    if not size.premium_io and (premium or (m.os_disk.type == "Premium_LRS" and not m.os_disk.ephemeral)):
        bad(f"{m.size} does not support Premium storage (PremiumIO)",
            "pick an 's' size such as Standard_E8s_v4, or Standard_LRS / StandardSSD_LRS disks")
    eph = m.os_disk.ephemeral
    if eph:
        if eph not in size.ephemeral_placements:
            where = ", ".join(size.ephemeral_placements) or "no placement"
            bad(f"{m.size} cannot place an ephemeral OS disk on {eph} (it supports {where})",
                "choose a supported placement or a size with a cache or temp disk")
        elif m.os_disk.size_gb:
            room = size.cache_gb if eph == "CacheDisk" else size.temp_disk_gb if eph == "ResourceDisk" \
                else size.nvme_gb
            if room is not None and m.os_disk.size_gb > room:
                bad(f"an ephemeral OS disk of {m.os_disk.size_gb} GiB does not fit the {eph} "
                    f"({room:.0f} GiB) of {m.size}", "make os_disk.size_gb smaller or the VM size larger")
        if m.os_disk.caching != "ReadOnly":
            bad("an ephemeral OS disk needs caching ReadOnly", "set os_disk.caching: ReadOnly")
    disks = sum(d.count for d in m.data_disks)
    if disks > size.max_data_disks:
        bad(f"{disks} data disks exceed the {size.max_data_disks} that {m.size} takes",
            "use fewer, larger disks or a larger size")
    for d in m.data_disks:
        if d.type in ("PremiumV2_LRS", "UltraSSD_LRS") and d.caching != "None":
            bad(f"{d.type} disks take no host caching", "set caching: None")
        if (d.iops or d.mbps) and d.type not in ("PremiumV2_LRS", "UltraSSD_LRS"):
            bad(f"{d.type} disks have fixed performance; iops/mbps apply to PremiumV2_LRS and UltraSSD_LRS",
                "remove iops/mbps or change the disk type")
    for target in m.named_targets().values():
        if target.kind == "temp" and size.temp_disk_gb <= 0:
            bad(f"{m.size} has no temp disk to measure", "pick a 'd' size (e.g. Standard_E8ds_v4) or another target")
        if target.kind == "nvme" and size.nvme_disks == 0:
            bad(f"{m.size} has no local NVMe disks", "use an L-series size such as Standard_L8s_v2")
        luns = [target.value] if target.kind == "lun" else list(target.value) if target.kind == "luns" else []
        if any(n >= disks for n in luns):
            bad(f"the target uses LUN {max(luns)} but the machine has {disks} data disk(s)",
                "add data_disks or pick an existing LUN")
    return out


def check_machines(machines: list[Machine]) -> list[Problem]:
    problems: list[Problem] = []
    for m in machines:
        problems += check_machine(m, lookup(m.size, m.region))
    return problems
