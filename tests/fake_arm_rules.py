"""What Azure Resource Manager refuses when a VM is created, for the fake in tests/fake_arm.py.

Written from Azure's documentation and the error texts Azure users have reported, on their own:
nothing here comes from diskbench's pre-flight (providers/azure/preflight.py), so a test that sees
both refuse a machine has two independent witnesses. A rule sees the VM's request body, the size's
capabilities as the Resource SKUs API gives them, and the Marketplace image it names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Rejection = tuple[int, str, str]  # HTTP status, error code, message
MAX_CACHED_GB = 4095  # premium-storage-performance: host caching is for disks smaller than 4 TiB
PROVISIONED = ("PremiumV2_LRS", "UltraSSD_LRS")
PREMIUM = ("Premium_LRS", "PremiumV2_LRS", "UltraSSD_LRS")

# publisher:offer:sku -> generation, tagged for NVMe, architecture, OS disk GiB. generation-2.md and the
# Marketplace names (-gen2 skus); enable-nvme-interface.md: only Gen2 images of Ubuntu 18.04+, Debian 11+,
# Windows Server 2019+ ... are tagged for NVMe (CentOS is not); Windows images have 127 GiB OS disks.
IMAGES: dict[str, tuple[str, bool, str, int]] = {
    "canonical:ubuntu-24_04-lts:server": ("V2", True, "x64", 30),
    "canonical:ubuntu-24_04-lts:server-gen1": ("V1", False, "x64", 30),
    "canonical:ubuntu-24_04-lts:server-arm64": ("V2", True, "Arm64", 30),
    "canonical:0001-com-ubuntu-server-jammy:22_04-lts": ("V1", False, "x64", 30),
    "canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2": ("V2", True, "x64", 30),
    "openlogic:centos:7_9": ("V1", False, "x64", 30),
    "openlogic:centos:7_9-gen2": ("V2", False, "x64", 30),
    "debian:debian-12:12": ("V1", False, "x64", 30),
    "debian:debian-12:12-gen2": ("V2", True, "x64", 30),
    "microsoftwindowsserver:windowsserver:2022-datacenter-azure-edition": ("V2", True, "x64", 127),
    "microsoftwindowsserver:windowsserver:2022-datacenter": ("V1", False, "x64", 127),
}


def vm_rejection(body: dict[str, Any], size: str, caps: dict[str, str]) -> Rejection | None:
    """The first reason Azure gives for refusing this VM, or None: it would be created."""
    for rule in RULES:
        found = rule(body, size, caps)
        if found:
            return found
    return None


def _storage(body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    storage = body.get("properties", {}).get("storageProfile", {})
    return storage.get("osDisk", {}), list(storage.get("dataDisks", []))


def _type(disk: dict[str, Any]) -> str:
    return str(disk.get("managedDisk", {}).get("storageAccountType", ""))


def _image(body: dict[str, Any]) -> tuple[str, bool, str, int] | None:
    ref = body.get("properties", {}).get("storageProfile", {}).get("imageReference", {})
    return IMAGES.get(f"{ref.get('publisher', '')}:{ref.get('offer', '')}:{ref.get('sku', '')}".lower())


def premium_storage(body: dict[str, Any], size: str, caps: dict[str, str]) -> Rejection | None:
    """Sizes without Premium Storage (the size page's Feature support) take no premium disk."""
    os_disk, data = _storage(body)
    types = [_type(d) for d in data] + ([] if os_disk.get("diffDiskSettings") else [_type(os_disk)])
    wanted = next((t for t in types if t in PREMIUM), None)
    if wanted and caps.get("PremiumIO", "False").lower() != "true":
        return 400, "InvalidParameter", (f"Requested operation cannot be performed because storage account type "
                                         f"'{wanted}' is not supported for VM size '{size}'.")
    return None


def data_disk_count(body: dict[str, Any], size: str, caps: dict[str, str]) -> Rejection | None:
    limit = int(caps.get("MaxDataDiskCount", "0"))
    if len(_storage(body)[1]) > limit:
        return 409, "OperationNotAllowed", (f"The maximum number of data disks allowed to be attached to a VM of "
                                            f"this size is {limit}.")
    return None


def caching(body: dict[str, Any], size: str, caps: dict[str, str]) -> Rejection | None:
    """Premium SSD v2 and Ultra Disks take no host caching; no disk of 4 TiB or more does."""
    os_disk, data = _storage(body)
    for disk in [*data, os_disk]:
        mode = disk.get("caching", "None")
        if mode == "None":
            continue
        if _type(disk) in PROVISIONED:
            return 400, "InvalidParameter", (f"Storage Account type {_type(disk)} is not supported with caching "
                                             f"type {mode}. Please use caching type None.")
        if int(disk.get("diskSizeGB") or 0) > MAX_CACHED_GB:
            return 400, "InvalidParameter", ("Only Disk CachingType 'None' is supported for disk with size greater "
                                             "than 4095GB.")
    return None


def zone(body: dict[str, Any], size: str, caps: dict[str, str]) -> Rejection | None:
    """Ultra Disks and Premium SSD v2 attach only to zonal VMs (disks-enable-ultra-ssd, disks-deploy-premium-v2)."""
    if body.get("zones"):
        return None
    for disk in _storage(body)[1]:
        if _type(disk) == "UltraSSD_LRS":
            return 400, "InvalidParameter", "UltraSSD can be used only with Virtual Machine in an Availability Zone."
        if _type(disk) == "PremiumV2_LRS":
            return 400, "InvalidParameter", ("A PremiumV2_LRS disk can be attached only to a Virtual Machine in an "
                                             "Availability Zone.")
    return None


def ephemeral(body: dict[str, Any], size: str, caps: dict[str, str]) -> Rejection | None:
    """ephemeral-os-disks: caching ReadOnly, a placement the size has, and an OS disk that fits it."""
    os_disk = _storage(body)[0]
    diff = os_disk.get("diffDiskSettings")
    if not diff:
        return None
    placement = diff.get("placement", "CacheDisk")
    if os_disk.get("caching") != "ReadOnly":
        return 400, "InvalidParameter", "Ephemeral OS disk requires caching ReadOnly."
    if placement not in caps.get("SupportedEphemeralOSDiskPlacements", "").split(","):
        return 400, "NotSupported", (f"The Diff Disk Placement of type '{placement}' is not supported for VM size "
                                     f"{size}. Please request with different DiffDiskPlacement or use a different VM "
                                     "Sku which supports the current DiffDiskPlacement in the request.")
    room = _room(placement, caps)
    image = _image(body)
    wanted = int(os_disk.get("diskSizeGB") or (image[3] if image else 0))
    if room is not None and wanted > room:
        return 400, "NotSupported", (f"OS disk of Ephemeral VM with size greater than {room} GB is not allowed for "
                                     f"VM size {size} when the DiffDiskPlacement is {placement}. Please refer to "
                                     "https://aka.ms/Ephemeral for more details.")
    return None


def _room(placement: str, caps: dict[str, str]) -> int | None:
    if placement == "CacheDisk" and caps.get("CachedDiskBytes"):
        return int(int(caps["CachedDiskBytes"]) / 2**30)
    if placement == "ResourceDisk":
        return int(int(caps.get("MaxResourceVolumeMB", "0")) / 1024)
    if placement == "NvmeDisk":
        mib = int(caps.get("NvmeDiskSizeInMiB") or caps.get("MaxResourceVolumeMB") or 0)
        return int(mib / 1024)
    return None


def generation(body: dict[str, Any], size: str, caps: dict[str, str]) -> Rejection | None:
    image = _image(body)
    sizes_boot = caps.get("HyperVGenerations", "V1,V2").split(",")
    if image and image[0] not in sizes_boot:
        gen = image[0][1:]
        return 400, "BadRequest", (f"The selected VM size '{size}' cannot boot Hypervisor Generation '{gen}'. If "
                                   "this was a Create operation please check that the Hypervisor Generation of the "
                                   "Image matches the Hypervisor Generation of the selected VM Size.")
    return None


def architecture(body: dict[str, Any], size: str, caps: dict[str, str]) -> Rejection | None:
    image = _image(body)
    arch = caps.get("CpuArchitectureType", "x64")
    if image and image[2].lower() != arch.lower():
        return 400, "BadRequest", (f"The selected VM size '{size}' ({arch}) cannot boot an image of architecture "
                                   f"'{image[2]}'.")
    return None


def controller(body: dict[str, Any], size: str, caps: dict[str, str]) -> Rejection | None:
    """The disk controller: the one asked for (``storageProfile.diskControllerType``) must be one the size
    offers (the SKU's DiskControllerTypes) and the image is tagged for; the property itself only on a
    Generation 2 VM. Without it Azure picks the size's own: SCSI where offered, else NVMe
    (nvme-overview, enable-nvme-interface, enable-nvme-remote-faqs; the API's DiskControllerType: "only
    supported for virtual machines whose operating system disk and VM sku supports Generation 2").
    The texts of the first two refusals are ours, written from the documentation (no user report of
    Azure's own wording was found)."""
    image = _image(body)
    offered = caps.get("DiskControllerTypes", "SCSI").split(",")
    asked = body.get("properties", {}).get("storageProfile", {}).get("diskControllerType")
    if asked and asked not in offered:
        return 400, "InvalidParameter", (f"The disk controller type '{asked}' is not supported for the VM size "
                                         f"'{size}'. Supported disk controller types: {', '.join(offered)}.")
    if asked and ((image and image[0] != "V2") or "V2" not in caps.get("HyperVGenerations", "V1,V2").split(",")):
        return 400, "InvalidParameter", ("The property 'diskControllerType' is only supported for Generation 2 "
                                         "virtual machines.")
    chosen = asked or ("SCSI" if "SCSI" in offered else "NVMe")
    if image and chosen == "NVMe" and not image[1]:
        return 400, "InvalidParameter", (f"The VM size '{size}' cannot boot with OS image or disk. Please check that "
                                         "disk controller types supported by the OS image or disk is one of the "
                                         f"supported disk controller types for the VM size '{size}'.")
    return None


def disk_controller(body: dict[str, Any], caps: dict[str, str]) -> str:
    """The controller a created VM's disks are behind: the one the body asked for, else the size's default."""
    offered = caps.get("DiskControllerTypes", "SCSI").split(",")
    asked = body.get("properties", {}).get("storageProfile", {}).get("diskControllerType")
    return str(asked or ("SCSI" if "SCSI" in offered else "NVMe"))


RULES: list[Callable[[dict[str, Any], str, dict[str, str]], Rejection | None]] = [
    premium_storage, data_disk_count, caching, zone, ephemeral, generation, architecture, controller]
