"""Machines Azure refuses to create, each with why (what pre-flight must say, and the page it cites)
and the error code Azure answers with.

CASES are the machines diskbench's pre-flight was written against. HELD_OUT were written afterwards,
from the documentation alone, on other sizes and families: pre-flight was never tuned to them, so
they test whether its rules hold beyond the examples they were built from.
"""

from __future__ import annotations

from typing import NamedTuple


class Impossible(NamedTuple):
    machine: str  # the machine's YAML mapping, without its name and region
    reason: str  # a fragment of pre-flight's message
    page: str  # a fragment of the page it cites
    code: str  # what Azure answers the create with


JAMMY_GEN1 = "Canonical:0001-com-ubuntu-server-jammy:22_04-lts"
CENTOS_GEN2 = "OpenLogic:CentOS:7_9-gen2"

CASES: dict[str, Impossible] = {
    "eph-over-cache": Impossible(
        "size: Standard_D2ds_v4, os_disk: {ephemeral: CacheDisk, caching: ReadOnly, size_gb: 64}",
        "does not fit the CacheDisk (50 GiB)", "ephemeral-os-disks#size-requirements", "NotSupported"),
    "eph-over-temp": Impossible(
        "size: Standard_D2ds_v5, os_disk: {ephemeral: ResourceDisk, caching: ReadOnly, size_gb: 100}",
        "does not fit the ResourceDisk (75 GiB)", "ephemeral-os-disks#size-requirements", "NotSupported"),
    "eph-no-placement": Impossible(
        "size: Standard_D8s_v5, os_disk: {ephemeral: ResourceDisk, caching: ReadOnly}",
        "cannot place an ephemeral OS disk on ResourceDisk", "dsv5-series", "NotSupported"),
    "cache-4tib": Impossible(
        "size: Standard_E8ds_v4, data_disks: [{type: Premium_LRS, size_gb: 4096, caching: ReadOnly}]",
        "Azure caches disks under 4 TiB only", "premium-storage-performance#disk-caching", "InvalidParameter"),
    "premium-on-d8-v5": Impossible(
        "size: Standard_D8_v5, data_disks: [{type: Premium_LRS, size_gb: 128}]",
        "does not support Premium storage", "dv5-series", "InvalidParameter"),
    "ultra-no-zone": Impossible(
        "size: Standard_E8ds_v5, data_disks: [{type: UltraSSD_LRS, size_gb: 256, iops: 5000, mbps: 200}]",
        "only to a VM in an availability zone", "disks-enable-ultra-ssd", "InvalidParameter"),
    "v2-with-cache": Impossible(
        "size: Standard_D8s_v5, zone: '1', data_disks: [{type: PremiumV2_LRS, size_gb: 256, caching: ReadOnly}]",
        "take no host caching", "disks-deploy-premium-v2", "InvalidParameter"),
    "too-many-disks": Impossible(
        "size: Standard_D2s_v5, data_disks: [{type: StandardSSD_LRS, size_gb: 64, count: 5}]",
        "5 data disks exceed the 4", "dsv5-series", "OperationNotAllowed"),
    "gen1-on-v6": Impossible(
        f"size: Standard_D8ds_v6, image: '{JAMMY_GEN1}'",
        "boots Hyper-V generation V2 only", "generation-2", "BadRequest"),
    "scsi-image-on-nvme-size": Impossible(
        f"size: Standard_D4s_v6, image: '{CENTOS_GEN2}'",
        "attaches disks over NVMe only", "enable-nvme-interface", "InvalidParameter"),
    "x64-on-arm": Impossible(
        "size: Standard_D4ps_v5", "is Arm64; image Canonical:ubuntu-24_04-lts:server", "dpsv5-series", "BadRequest"),
}

HELD_OUT: dict[str, Impossible] = {
    "e2as-cache": Impossible(
        "size: Standard_E2as_v4, os_disk: {ephemeral: CacheDisk, caching: ReadOnly, size_gb: 60}",
        "does not fit the CacheDisk (50 GiB)", "ephemeral-os-disks", "NotSupported"),
    "l8s-v3-temp": Impossible(
        "size: Standard_L8s_v3, os_disk: {ephemeral: ResourceDisk, caching: ReadOnly, size_gb: 100}",
        "does not fit the ResourceDisk (80 GiB)", "ephemeral-os-disks", "NotSupported"),
    "e8as-v6-nvme-placement": Impossible(
        "size: Standard_E8as_v6, os_disk: {ephemeral: NvmeDisk, caching: ReadOnly}",
        "cannot place an ephemeral OS disk on NvmeDisk", "easv6-series", "NotSupported"),
    "e16s-v5-8tib-cached": Impossible(
        "size: Standard_E16s_v5, data_disks: [{type: StandardSSD_LRS, size_gb: 8192, caching: ReadWrite}]",
        "under 4 TiB only", "premium-storage-performance", "InvalidParameter"),
    "e8-v5-premium-os": Impossible(
        "size: Standard_E8_v5, os_disk: {type: Premium_LRS, caching: ReadWrite}",
        "does not support Premium storage", "ev5-series", "InvalidParameter"),
    "d16as-v6-v2-no-zone": Impossible(
        "size: Standard_D16as_v6, data_disks: [{type: PremiumV2_LRS, size_gb: 512}]",
        "availability zone", "disks-deploy-premium-v2", "InvalidParameter"),
    "l16s-v4-ultra-cached": Impossible(
        "size: Standard_L16s_v4, zone: '2', data_disks: [{type: UltraSSD_LRS, size_gb: 128, iops: 3000, mbps: 100, "
        "caching: ReadOnly}]", "take no host caching", "disks-enable-ultra-ssd", "InvalidParameter"),
    "e2ads-v5-five-disks": Impossible(
        "size: Standard_E2ads_v5, data_disks: [{type: Premium_LRS, size_gb: 32, count: 3}, "
        "{type: Premium_LRS, size_gb: 64, count: 2}]", "5 data disks exceed the 4", "eadsv5-series",
        "OperationNotAllowed"),
    "l8s-v4-centos": Impossible(
        f"size: Standard_L8s_v4, image: '{CENTOS_GEN2}'", "attaches disks over NVMe only", "enable-nvme-interface",
        "InvalidParameter"),
    "e2pds-v6-gen1": Impossible(
        f"size: Standard_E2pds_v6, image: '{JAMMY_GEN1}'", "generation V2 only", "generation-2", "BadRequest"),
    "e4ps-v6-x64": Impossible(
        "size: Standard_E4ps_v6", "is Arm64", "epsv6-series", "BadRequest"),
}


def profile(cases: dict[str, Impossible], region: str = "westeurope") -> str:
    """A profile with every machine of ``cases``, each measuring a directory so no target adds problems."""
    lines = ["name: impossible", "workloads:", "  - {name: a, rw: randread}", "machines:"]
    for name, case in cases.items():
        lines.append(f"  - {{name: {name}, region: {region}, target: {{dir: /var/tmp}}, {case.machine}}}")
    return "\n".join(lines) + "\n"
