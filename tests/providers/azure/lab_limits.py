"""Azure's published limits as the lab's own table: the caps the guest lab enforces, read off Azure's pages.

This table is the lab's oracle. It is written by hand from Azure's VM size and disk pages (the
page, its ``ms.date`` and the commit of MicrosoftDocs that was read are beside every figure; every
figure was read on ``READ_ON``) and it never imports diskbench's own tables
(``diskbench.providers.azure.limits`` and its data files): the lab used to build its throttles from
those tables, and attribution read the same tables, so a wrong number there was enforced by the lab
and then confirmed by attribution. Now a wrong number in diskbench's tables makes the lab and
attribution disagree, and ``test_lab_limits.py`` compares the two tables for every size and disk a
bundled profile or a lab test uses.

Only what the lab emulates is here: a size's uncached limit, its cached-and-temp budget (the one
throttle group the lab puts over the host cache and the temp disk), whether it has a temp disk, its
local NVMe devices; a disk tier's IOPS, MB/s and credit burst. MB/s is 10^6 bytes/s, as the pages say.
"""

from __future__ import annotations

from dataclasses import dataclass

READ_ON = "2026-11-25"  # the day every page below was read for this table
LEARN = "https://learn.microsoft.com/azure/virtual-machines/"


@dataclass(frozen=True)
class Page:
    """Where a figure was read: the page's URL, the MicrosoftDocs file and commit that render it, its ms.date."""

    url: str
    source: str
    ms_date: str

    def __str__(self) -> str:
        return f"{self.url} ({self.source}, ms.date {self.ms_date}, read {READ_ON})"


@dataclass(frozen=True)
class VmSize:
    """A VM size as the lab emulates it. None: the page publishes no such limit (not: unlimited).

    ``cached_iops``/``cached_mbps``: the budget the lab shares between the host cache and the temp disk:
    the pages' "max cached and temp storage throughput" where they publish it, else the temp disk's own
    figure (``cached_column`` says which column it is).
    """

    name: str
    uncached_iops: int | None
    uncached_mbps: int | None
    cached_iops: int | None
    cached_mbps: int | None
    cached_column: str
    temp_gib: int  # 0: no temp disk
    nvme: int  # local NVMe devices
    page: Page
    temp_nvme: int = 0  # raw NVMe temp disks (v6: "Max Temp Storage Disks"), instead of a SCSI temp disk
    controller: str = "SCSI"  # the remote disks' controller when the VM body names none: NVMe on v6 sizes


@dataclass(frozen=True)
class DiskTier:
    """One managed disk tier: the smallest tier whose size holds the disk is what it performs as."""

    storage_type: str
    tier: str
    size_gib: int
    iops: int
    mbps: int
    burst_iops: int | None  # credit burst (30 minutes at the max rate with a full bucket); None: none
    burst_mbps: int | None
    page: Page


# --- VM sizes -------------------------------------------------------------------------------------

DDSV4 = Page(LEARN + "ddv4-ddsv4-series", "MicrosoftDocs/azure-docs articles/virtual-machines/ddv4-ddsv4-series.md "
             "@056402bf", "06/01/2020")
EDSV4 = Page(LEARN + "edv4-edsv4-series", "MicrosoftDocs/azure-docs articles/virtual-machines/edv4-edsv4-series.md "
             "@0d77314f", "02/04/2020")
EASV4 = Page(LEARN + "eav4-easv4-series", "MicrosoftDocs/azure-docs articles/virtual-machines/eav4-easv4-series.md "
             "@08c18d7e", "02/03/2020")
EV4 = Page(LEARN + "sizes/memory-optimized/ev4-series", "MicrosoftDocs/azure-compute-docs "
           "articles/virtual-machines/sizes/memory-optimized/ev4-series.md @8f7fc3d6", "03/10/2026")
LSV2 = Page(LEARN + "lsv2-series", "MicrosoftDocs/azure-docs articles/virtual-machines/lsv2-series.md @017654d1",
            "02/03/2020")
DDSV5 = Page(LEARN + "ddv5-ddsv5-series", "MicrosoftDocs/azure-docs articles/virtual-machines/ddv5-ddsv5-series.md "
             "@017654d1", "10/20/2021")
DDSV6 = Page(LEARN + "sizes/general-purpose/ddsv6-series", "MicrosoftDocs/azure-compute-docs "
             "articles/virtual-machines/sizes/general-purpose/ddsv6-series.md @0e232f5f", "07/29/2024")
DSV4 = Page(LEARN + "dv4-dsv4-series", "MicrosoftDocs/azure-docs articles/virtual-machines/dv4-dsv4-series.md "
            "@0682cb82", "06/08/2020")
DSV5 = Page(LEARN + "dv5-dsv5-series", "MicrosoftDocs/azure-docs articles/virtual-machines/dv5-dsv5-series.md "
            "@1a0fe16a", "10/20/2021")

CACHED_AND_TEMP = "max cached and temp storage throughput"
TEMP_ONLY = "max temp storage throughput"
LSV2_TEMP = "footnote 1: 4,000 IOPS and 80 MBps of temp disk per 8 vCPUs"

SIZES: dict[str, VmSize] = {s.name: s for s in (
    # D8ds_v4: 77000/485 (200 GiB cache) cached and temp, 12800/192 uncached, 300 GiB temp
    VmSize("Standard_D8ds_v4", 12_800, 192, 77_000, 485, CACHED_AND_TEMP, 300, 0, DDSV4),
    # D16ds_v4: 154000/968 (400 GiB cache) cached and temp, 25600/384 uncached, 600 GiB temp
    VmSize("Standard_D16ds_v4", 25_600, 384, 154_000, 968, CACHED_AND_TEMP, 600, 0, DDSV4),
    # D2ds_v4: 19000/120 (50 GiB cache) cached and temp, 3200/48 uncached, 75 GiB temp
    VmSize("Standard_D2ds_v4", 3_200, 48, 19_000, 120, CACHED_AND_TEMP, 75, 0, DDSV4),
    # E8ds_v4: the same figures as D8ds_v4 on the Edsv4 table
    VmSize("Standard_E8ds_v4", 12_800, 192, 77_000, 485, CACHED_AND_TEMP, 300, 0, EDSV4),
    # E8as_v4: 16000/128 (200) cached and temp, 12800/192 uncached, 128 GiB temp
    VmSize("Standard_E8as_v4", 12_800, 192, 16_000, 128, CACHED_AND_TEMP, 128, 0, EASV4),
    # E8_v4: no local storage; "Uncached Premium SSD" 12800/192 (the remote-storage tab)
    VmSize("Standard_E8_v4", 12_800, 192, None, None, "none published (no cache, no temp disk)", 0, 0, EV4),
    # Lsv2: NVMe 1x/2x/4x 1.92 TB; uncached 8000/160, 16000/320, 32000/640; no host cache; temp per footnote 1
    VmSize("Standard_L8s_v2", 8_000, 160, 4_000, 80, LSV2_TEMP, 80, 1, LSV2),
    VmSize("Standard_L16s_v2", 16_000, 320, 8_000, 160, LSV2_TEMP, 160, 2, LSV2),
    VmSize("Standard_L32s_v2", 32_000, 640, 16_000, 320, LSV2_TEMP, 320, 4, LSV2),
    # D2ds_v5: temp 9000/125, uncached 3750/85, 75 GiB temp (the v5 pages publish no cached limit)
    VmSize("Standard_D2ds_v5", 3_750, 85, 9_000, 125, TEMP_ONLY, 75, 0, DDSV5),
    # D2ds_v6: 1 temp disk of 110 GiB, temp RR 37500/180 (RW 15000/90), uncached 3750/106, 8 data disks. NVMe
    # only (nvme-overview.md, ms.date 07/31/2024: "For v6 ... you need to transition from SCSI to NVMe"), its
    # temp disk raw NVMe (nvme-linux.md, ms.date 07/31/2024: "NVMe VM with NVMe tempdisk": /dev/nvme1n1)
    VmSize("Standard_D2ds_v6", 3_750, 106, 37_500, 180, TEMP_ONLY, 110, 0, DDSV6, temp_nvme=1, controller="NVMe"),
    # D4ds_v6 (profiles/dsv6-nvme.yaml; the same page at the same commit): 1 temp disk of 220 GiB, temp RR
    # 75000/360 (RW 30000/180), uncached 6400/212, 12 data disks
    VmSize("Standard_D4ds_v6", 6_400, 212, 75_000, 360, TEMP_ONLY, 220, 0, DDSV6, temp_nvme=1, controller="NVMe"),
    # D32s_v4: remote storage only, uncached 51200/768 (seed 002's single nconnect client)
    VmSize("Standard_D32s_v4", 51_200, 768, None, None, "none published (no temp disk)", 0, 0, DSV4),
    # D32s_v5: remote storage only, uncached 51200/865
    VmSize("Standard_D32s_v5", 51_200, 865, None, None, "none published (no temp disk)", 0, 0, DSV5),
)}

# --- disk tiers -----------------------------------------------------------------------------------

PREMIUM = Page(LEARN + "disks-types#premium-ssd-size", "MicrosoftDocs/azure-docs "
               "includes/disk-storage-premium-ssd-sizes.md @1d25717f", "03/16/2023")
STANDARD_HDD = Page(LEARN + "disks-types#standard-hdds", "MicrosoftDocs/azure-docs "
                    "includes/disk-storage-standard-hdd-sizes.md @14cd543f", "03/18/2019")

_P = [  # tier, GiB, IOPS, MB/s; P1-P20 burst to 3,500 IOPS / 170 MB/s on credits (P30 and up: on demand only)
    ("P1", 4, 120, 25), ("P2", 8, 120, 25), ("P3", 16, 120, 25), ("P4", 32, 120, 25), ("P6", 64, 240, 50),
    ("P10", 128, 500, 100), ("P15", 256, 1_100, 125), ("P20", 512, 2_300, 150), ("P30", 1_024, 5_000, 200),
    ("P40", 2_048, 7_500, 250), ("P50", 4_096, 7_500, 250), ("P60", 8_192, 16_000, 500),
    ("P70", 16_384, 18_000, 750), ("P80", 32_767, 20_000, 900)]
_S = [  # tier, GiB, "up to" IOPS, "up to" MB/s; no burst on this page
    ("S4", 32, 500, 60), ("S6", 64, 500, 60), ("S10", 128, 500, 60), ("S15", 256, 500, 60), ("S20", 512, 500, 60),
    ("S30", 1_024, 500, 60), ("S40", 2_048, 500, 60), ("S50", 4_096, 500, 60), ("S60", 8_192, 1_300, 300),
    ("S70", 16_384, 2_000, 500), ("S80", 32_767, 2_000, 500)]
CREDIT_BURST = ("P1", "P2", "P3", "P4", "P6", "P10", "P15", "P20")

TIERS: dict[str, list[DiskTier]] = {
    "Premium_LRS": [DiskTier("Premium_LRS", t, gib, iops, mbps, 3_500 if t in CREDIT_BURST else None,
                             170 if t in CREDIT_BURST else None, PREMIUM) for t, gib, iops, mbps in _P],
    "Standard_LRS": [DiskTier("Standard_LRS", t, gib, iops, mbps, None, None, STANDARD_HDD)
                     for t, gib, iops, mbps in _S],
}


class NotInLabTable(KeyError):
    """A size or disk type the lab's table does not have: add it, with its page, before a lab test uses it."""


def vm_size(name: str) -> VmSize:
    """The lab's figures for a VM size (``Standard_`` prefix required, as ARM spells it)."""
    try:
        return SIZES[name]
    except KeyError:
        raise NotInLabTable(f"{name} is not in tests/providers/azure/lab_limits.py: add it with its page") from None


def disk_tier(storage_type: str, size_gib: int) -> DiskTier:
    """The tier a managed disk of ``size_gib`` performs as: the smallest one that holds it."""
    if storage_type not in TIERS:
        raise NotInLabTable(f"{storage_type} disks are not in tests/providers/azure/lab_limits.py")
    for tier in TIERS[storage_type]:
        if size_gib <= tier.size_gib:
            return tier
    raise NotInLabTable(f"no {storage_type} tier holds {size_gib} GiB")
