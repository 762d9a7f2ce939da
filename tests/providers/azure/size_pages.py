"""Two sizes of every family, typed in by hand from Azure's size pages: the tests' own oracle.

Nothing here is read from or computed by diskbench. Each family names its page in
MicrosoftDocs/azure-compute-docs (articles/virtual-machines/sizes/...) and the page's ms.date as read
on 2026-11-25; each size is (vCPUs, memory GiB, temp GiB over all temp disks, max data disks,
uncached IOPS, uncached MB/s, burst IOPS, burst MB/s, network Mbps). FEATURES is each page's
"Feature support" section; NVME holds the local NVMe disks (count, size of one as the page writes it);
CACHE_GIB the cache sizes of the legacy MicrosoftDocs/azure-docs v4 pages.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Size(NamedTuple):
    vcpus: int
    memory: float
    temp_gib: int
    data_disks: int
    iops: int
    mbps: int
    burst_iops: int
    burst_mbps: int
    net_mbps: int


GP, MO, SO = "general-purpose", "memory-optimized", "storage-optimized"

# family page: (folder, ms.date, {size: Size})
PAGES: dict[str, tuple[str, str, dict[str, Size]]] = {
    "ddsv4": (GP, "03/10/2026", {"Standard_D2ds_v4": Size(2, 8, 75, 4, 3200, 48, 4000, 200, 5000),
                                 "Standard_D32ds_v4": Size(32, 128, 1200, 32, 51200, 768, 64000, 1600, 16000)}),
    "dsv4": (GP, "07/29/2024", {"Standard_D2s_v4": Size(2, 8, 0, 4, 3200, 48, 4000, 200, 5000),
                                "Standard_D32s_v4": Size(32, 128, 0, 32, 51200, 768, 64000, 1600, 16000)}),
    "dv4": (GP, "03/10/2026", {"Standard_D2_v4": Size(2, 8, 0, 4, 3200, 48, 4000, 200, 5000),
                               "Standard_D64_v4": Size(64, 256, 0, 32, 80000, 1200, 80000, 2000, 30000)}),
    "ddv4": (GP, "07/29/2024", {"Standard_D2d_v4": Size(2, 8, 75, 4, 3200, 48, 4000, 200, 5000),
                                "Standard_D16d_v4": Size(16, 64, 600, 32, 25600, 384, 32000, 800, 12500)}),
    "dasv4": (GP, "03/10/2026", {"Standard_D2as_v4": Size(2, 8, 16, 4, 3200, 48, 4000, 200, 2000),
                                 "Standard_D48as_v4": Size(48, 192, 384, 32, 76800, 1148, 80000, 2000, 24000)}),
    "dav4": (GP, "07/29/2024", {"Standard_D4a_v4": Size(4, 16, 100, 8, 6400, 96, 8000, 200, 4000),
                                "Standard_D96a_v4": Size(96, 384, 2400, 32, 80000, 1200, 80000, 2000, 40000)}),
    "dv5": (GP, "03/10/2026", {"Standard_D2_v5": Size(2, 8, 0, 4, 3750, 85, 10000, 1200, 12500),
                               "Standard_D96_v5": Size(96, 384, 0, 32, 80000, 2600, 80000, 4000, 35000)}),
    "dsv5": (GP, "02/27/2026", {"Standard_D2s_v5": Size(2, 8, 0, 4, 3750, 85, 10000, 1200, 12500),
                                "Standard_D32s_v5": Size(32, 128, 0, 32, 51200, 865, 80000, 2000, 16000)}),
    "ddv5": (GP, "07/29/2024", {"Standard_D8d_v5": Size(8, 32, 300, 16, 12800, 290, 20000, 1200, 12500),
                                "Standard_D96d_v5": Size(96, 384, 3600, 32, 80000, 2600, 80000, 4000, 35000)}),
    "ddsv5": (GP, "07/29/2024", {"Standard_D2ds_v5": Size(2, 8, 75, 4, 3750, 85, 10000, 1200, 12500),
                                 "Standard_D48ds_v5": Size(48, 192, 1800, 32, 76800, 1315, 80000, 3000, 24000)}),
    "dasv5": (GP, "03/10/2026", {"Standard_D2as_v5": Size(2, 8, 0, 4, 3750, 82, 10000, 600, 12500),
                                 "Standard_D96as_v5": Size(96, 384, 0, 32, 80000, 1600, 80000, 2000, 40000)}),
    "dadsv5": (GP, "03/10/2026", {"Standard_D2ads_v5": Size(2, 8, 75, 4, 3750, 82, 10000, 600, 12500),
                                  "Standard_D32ads_v5": Size(32, 128, 1200, 32, 51200, 768, 80000, 1000, 16000)}),
    "dlsv5": (GP, "03/10/2026", {"Standard_D2ls_v5": Size(2, 4, 0, 4, 3750, 85, 10000, 1200, 12500),
                                 "Standard_D64ls_v5": Size(64, 128, 0, 32, 80000, 1735, 80000, 3000, 30000)}),
    "dldsv5": (GP, "03/10/2026", {"Standard_D2lds_v5": Size(2, 4, 75, 4, 3750, 85, 10000, 1200, 12500),
                                  "Standard_D96lds_v5": Size(96, 192, 3600, 32, 80000, 2600, 80000, 4000, 35000)}),
    "dpsv5": (GP, "03/10/2026", {"Standard_D2ps_v5": Size(2, 8, 0, 4, 3750, 85, 10000, 1200, 12500),
                                 "Standard_D64ps_v5": Size(64, 208, 0, 32, 80000, 1735, 80000, 3000, 40000)}),
    "dpdsv5": (GP, "03/10/2026", {"Standard_D2pds_v5": Size(2, 8, 75, 4, 3750, 85, 10000, 1200, 12500),
                                  "Standard_D16pds_v5": Size(16, 64, 600, 32, 25600, 600, 40000, 1200, 12500)}),
    "dplsv5": (GP, "03/10/2026", {"Standard_D2pls_v5": Size(2, 4, 0, 4, 3750, 85, 10000, 1200, 12500),
                                  "Standard_D48pls_v5": Size(48, 96, 0, 32, 76800, 1315, 80000, 3000, 24000)}),
    "dpldsv5": (GP, "07/29/2024", {"Standard_D2plds_v5": Size(2, 4, 75, 4, 3750, 85, 10000, 1200, 12500),
                                   "Standard_D64plds_v5": Size(64, 128, 2400, 32, 80000, 1735, 80000, 3000, 40000)}),
    "dsv6": (GP, "07/29/2024", {"Standard_D2s_v6": Size(2, 8, 0, 8, 3750, 106, 40000, 1250, 12500),
                                "Standard_D192s_v6": Size(192, 768, 0, 64, 260000, 12000, 260000, 12000, 82000)}),
    "ddsv6": (GP, "07/29/2024", {"Standard_D2ds_v6": Size(2, 8, 110, 8, 3750, 106, 40000, 1250, 12500),
                                 "Standard_D64ds_v6": Size(64, 256, 3520, 64, 102400, 3392, 102400, 3392, 30000)}),
    "dlsv6": (GP, "01/28/2026", {"Standard_D2ls_v6": Size(2, 4, 0, 8, 3750, 106, 40000, 1250, 12500),
                                 "Standard_D128ls_v6": Size(128, 256, 0, 64, 204800, 6782, 204800, 6782, 54000)}),
    "dldsv6": (GP, "01/28/2026", {"Standard_D4lds_v6": Size(4, 8, 220, 12, 6400, 212, 40000, 1250, 12500),
                                  "Standard_D48lds_v6": Size(48, 96, 2640, 64, 76800, 2544, 80000, 2544, 24000)}),
    "dasv6": (GP, "03/10/2026", {"Standard_D2as_v6": Size(2, 8, 0, 4, 4000, 90, 20000, 1250, 12500),
                                 "Standard_D64as_v6": Size(64, 256, 0, 32, 115200, 2880, 120000, 3400, 36000)}),
    "dadsv6": (GP, "07/29/2024", {"Standard_D2ads_v6": Size(2, 8, 110, 4, 4000, 90, 20000, 1250, 12500),
                                  "Standard_D96ads_v6": Size(96, 384, 5280, 32, 175000, 4320, 175000, 5090, 40000)}),
    "dalsv6": (GP, "07/29/2024", {"Standard_D2als_v6": Size(2, 4, 0, 4, 4000, 90, 20000, 1250, 12500),
                                  "Standard_D32als_v6": Size(32, 64, 0, 32, 57600, 1440, 80000, 1700, 20000)}),
    "daldsv6": (GP, "07/29/2024", {"Standard_D8alds_v6": Size(8, 16, 440, 16, 15200, 360, 20000, 1250, 12500),
                                   "Standard_D16alds_v6": Size(16, 32, 880, 32, 30400, 720, 40000, 1250, 16000)}),
    "dpsv6": (GP, "03/10/2026", {"Standard_D2ps_v6": Size(2, 8, 0, 8, 3750, 106, 10000, 1250, 12500),
                                 "Standard_D96ps_v6": Size(96, 384, 0, 64, 153600, 5000, 153600, 5000, 60000)}),
    "dpdsv6": (GP, "01/05/2026", {"Standard_D2pds_v6": Size(2, 8, 110, 8, 3750, 106, 10000, 1250, 12500),
                                  "Standard_D32pds_v6": Size(32, 128, 1760, 64, 51200, 1696, 80000, 2000, 20000)}),
    "ev4": (MO, "03/10/2026", {"Standard_E2_v4": Size(2, 16, 0, 4, 3200, 48, 4000, 200, 5000),
                               "Standard_E20_v4": Size(20, 160, 0, 32, 32000, 480, 40000, 1000, 10000)}),
    "esv4": (MO, "03/10/2026", {"Standard_E8s_v4": Size(8, 64, 0, 16, 12800, 192, 16000, 400, 12500),
                                "Standard_E80is_v4": Size(80, 504, 0, 64, 80000, 1500, 80000, 2000, 30000)}),
    "edv4": (MO, "08/01/2024", {"Standard_E2d_v4": Size(2, 16, 75, 4, 3200, 48, 4000, 200, 5000),
                                "Standard_E20d_v4": Size(20, 160, 750, 32, 32000, 480, 40000, 1000, 16000)}),
    "edsv4": (MO, "08/01/2024", {"Standard_E8ds_v4": Size(8, 64, 300, 16, 12800, 192, 16000, 400, 12500),
                                 "Standard_E80ids_v4": Size(80, 504, 2400, 64, 80000, 1500, 80000, 2000, 30000)}),
    "eav4": (MO, "08/01/2024", {"Standard_E2a_v4": Size(2, 16, 16, 4, 3200, 48, 4000, 200, 2000),
                                "Standard_E96a_v4": Size(96, 672, 672, 32, 80000, 1200, 80000, 2000, 32000)}),
    "easv4": (MO, "08/01/2024", {"Standard_E8as_v4": Size(8, 64, 128, 16, 12800, 192, 16000, 400, 8000),
                                 "Standard_E20as_v4": Size(20, 160, 320, 32, 32000, 480, 40000, 1000, 12000)}),
    "ev5": (MO, "08/01/2024", {"Standard_E2_v5": Size(2, 16, 0, 4, 3750, 85, 10000, 1200, 12500),
                               "Standard_E104i_v5": Size(104, 672, 0, 64, 120000, 4000, 120000, 4000, 100000)}),
    "esv5": (MO, "03/10/2026", {"Standard_E20s_v5": Size(20, 160, 0, 32, 32000, 750, 64000, 1600, 12500),
                                "Standard_E104is_v5": Size(104, 672, 0, 64, 120000, 4000, 120000, 4000, 100000)}),
    "edv5": (MO, "08/01/2024", {"Standard_E2d_v5": Size(2, 16, 75, 4, 3750, 85, 10000, 1200, 12500),
                                "Standard_E104id_v5": Size(104, 672, 3800, 64, 120000, 4000, 120000, 4000, 100000)}),
    "edsv5": (MO, "08/01/2024", {"Standard_E8ds_v5": Size(8, 64, 300, 16, 12800, 290, 20000, 1200, 12500),
                                 "Standard_E64ds_v5": Size(64, 512, 2400, 32, 80000, 1735, 80000, 3000, 30000)}),
    "easv5": (MO, "03/10/2026", {"Standard_E2as_v5": Size(2, 16, 0, 4, 3750, 82, 10000, 600, 12500),
                                 "Standard_E112ias_v5": Size(112, 672, 0, 64, 120000, 2000, 120000, 2000, 50000)}),
    "eadsv5": (MO, "08/01/2024", {"Standard_E8ads_v5": Size(8, 64, 300, 16, 12800, 200, 20000, 600, 12500),
                                  "Standard_E112iads_v5": Size(112, 672, 3800, 64, 120000, 2000, 120000, 2000,
                                                               50000)}),
    "epsv5": (MO, "08/01/2024", {"Standard_E4ps_v5": Size(4, 32, 0, 8, 6400, 145, 10000, 1200, 12500),
                                 "Standard_E32ps_v5": Size(32, 208, 0, 32, 51200, 865, 80000, 2000, 16000)}),
    "epdsv5": (MO, "08/02/2024", {"Standard_E2pds_v5": Size(2, 16, 75, 4, 3750, 85, 10000, 1200, 12500),
                                  "Standard_E20pds_v5": Size(20, 160, 750, 32, 32000, 750, 64000, 1600, 12500)}),
    "esv6": (MO, "03/10/2026", {"Standard_E2s_v6": Size(2, 16, 0, 8, 3750, 106, 40000, 1250, 12500),
                                "Standard_E20s_v6": Size(20, 160, 0, 48, 32000, 1060, 64000, 1600, 12500)}),
    "edsv6": (MO, "08/01/2024", {"Standard_E8ds_v6": Size(8, 64, 440, 24, 12800, 424, 40000, 1250, 12500),
                                 "Standard_E20ds_v6": Size(20, 160, 1100, 48, 32000, 1060, 64000, 1600, 12500)}),
    "easv6": (MO, "03/10/2026", {"Standard_E2as_v6": Size(2, 16, 0, 4, 4000, 90, 20000, 1250, 12500),
                                 "Standard_E20as_v6": Size(20, 160, 0, 32, 38000, 900, 64000, 1600, 16000)}),
    "eadsv6": (MO, "08/01/2024", {"Standard_E2ads_v6": Size(2, 16, 110, 4, 4000, 90, 20000, 1250, 12500),
                                  "Standard_E20ads_v6": Size(20, 160, 1100, 32, 38000, 900, 64000, 1600, 16000)}),
    "epsv6": (MO, "01/05/2026", {"Standard_E2ps_v6": Size(2, 16, 0, 8, 3750, 106, 10000, 1250, 12500),
                                 "Standard_E96ps_v6": Size(96, 672, 0, 64, 153600, 5000, 153600, 5000, 60000)}),
    "epdsv6": (MO, "01/05/2026", {"Standard_E8pds_v6": Size(8, 64, 440, 24, 12800, 424, 20000, 1250, 15000),
                                  "Standard_E96pds_v6": Size(96, 672, 5280, 64, 153600, 5000, 153600, 5000, 60000)}),
    "lsv2": (SO, "07/31/2024", {"Standard_L8s_v2": Size(8, 64, 80, 16, 8000, 160, 8000, 1280, 3200),
                                "Standard_L80s_v2": Size(80, 640, 800, 32, 80000, 1400, 80000, 2000, 16000)}),
    "lsv3": (SO, "07/31/2024", {"Standard_L8s_v3": Size(8, 64, 80, 16, 12800, 290, 20000, 1200, 12500),
                                "Standard_L80s_v3": Size(80, 640, 800, 32, 80000, 2160, 80000, 3000, 32000)}),
    "lasv3": (SO, "07/31/2024", {"Standard_L8as_v3": Size(8, 64, 80, 16, 12800, 200, 20000, 1280, 12500),
                                 "Standard_L48as_v3": Size(48, 384, 480, 32, 76800, 1152, 80000, 2000, 24000)}),
    "lsv4": (SO, "03/18/2025", {"Standard_L2s_v4": Size(2, 16, 0, 8, 3750, 106, 40000, 1250, 12500),
                                "Standard_L80s_v4": Size(80, 640, 0, 64, 128000, 4240, 128000, 4240, 36000)}),
    "lasv4": (SO, "03/18/2025", {"Standard_L2as_v4": Size(2, 16, 0, 4, 4000, 90, 20000, 1250, 12500),
                                 "Standard_L80as_v4": Size(80, 640, 0, 32, 144000, 3600, 147500, 4245, 40000)}),
    "laosv4": (SO, "03/18/2025", {"Standard_L2aos_v4": Size(2, 16, 0, 4, 4400, 150, 20000, 1250, 7500),
                                  "Standard_L12aos_v4": Size(12, 96, 0, 32, 26400, 900, 30000, 1250, 18750)}),
}

# more sizes, for the impossible machines (impossible_machines.py), from the same pages
for _key, _more in {
    "easv4": {"Standard_E2as_v4": Size(2, 16, 32, 4, 3200, 48, 4000, 200, 2000)},
    "easv6": {"Standard_E8as_v6": Size(8, 64, 0, 16, 15200, 360, 20000, 1250, 12500)},
    "esv5": {"Standard_E16s_v5": Size(16, 128, 0, 32, 25600, 600, 40000, 1200, 12500)},
    "ev5": {"Standard_E8_v5": Size(8, 64, 0, 16, 12800, 290, 20000, 1200, 12500)},
    "dasv6": {"Standard_D16as_v6": Size(16, 64, 0, 32, 30400, 720, 40000, 1250, 16000)},
    "lsv4": {"Standard_L16s_v4": Size(16, 128, 0, 48, 25600, 848, 40000, 1250, 12500),
             "Standard_L8s_v4": Size(8, 64, 0, 24, 12800, 424, 40000, 1250, 12500)},
    "eadsv5": {"Standard_E2ads_v5": Size(2, 16, 75, 4, 3750, 82, 10000, 600, 12500)},
    "epdsv6": {"Standard_E2pds_v6": Size(2, 16, 110, 8, 3750, 106, 10000, 1250, 12500)},
    "epsv6": {"Standard_E4ps_v6": Size(4, 32, 0, 12, 6400, 212, 20000, 1250, 12500)},
    "dsv5": {"Standard_D8s_v5": Size(8, 32, 0, 16, 12800, 290, 20000, 1200, 12500)},
    "dv5": {"Standard_D8_v5": Size(8, 32, 0, 16, 12800, 290, 20000, 1200, 12500)},
    "ddsv6": {"Standard_D8ds_v6": Size(8, 32, 440, 24, 12800, 424, 40000, 1250, 12500)},
    "dsv6": {"Standard_D4s_v6": Size(4, 16, 0, 12, 6400, 212, 40000, 1250, 12500)},
    "dpsv5": {"Standard_D4ps_v5": Size(4, 16, 0, 8, 6400, 145, 20000, 1200, 12500)},
}.items():
    PAGES[_key][2].update(_more)

# local NVMe disks: (count, size of one in GiB) as the pages give them (L v2/v3: 1.92 TB; v4: GB)
NVME: dict[str, tuple[int, float]] = {
    "Standard_L8s_v2": (1, 1.92e12 / 2**30), "Standard_L80s_v2": (10, 1.92e12 / 2**30),
    "Standard_L8s_v3": (1, 1.92e12 / 2**30), "Standard_L80s_v3": (10, 1.92e12 / 2**30),
    "Standard_L8as_v3": (1, 1.92e12 / 2**30), "Standard_L48as_v3": (6, 1.92e12 / 2**30),
    "Standard_L2s_v4": (1, 480e9 / 2**30), "Standard_L80s_v4": (10, 1920e9 / 2**30),
    "Standard_L8s_v4": (4, 480e9 / 2**30), "Standard_L16s_v4": (4, 960e9 / 2**30),
    "Standard_L2as_v4": (1, 480e9 / 2**30), "Standard_L80as_v4": (10, 1920e9 / 2**30),
    "Standard_L2aos_v4": (3, 480e9 / 2**30), "Standard_L12aos_v4": (9, 960e9 / 2**30),
}

# the legacy v4 pages' "(cache size in GiB)"
CACHE_GIB = {"Standard_E2as_v4": 50, "Standard_D2ds_v4": 50, "Standard_D32ds_v4": 800, "Standard_E8ds_v4": 200,
             "Standard_E8s_v4": 200,
             "Standard_D2as_v4": 50, "Standard_E8as_v4": 200, "Standard_E20as_v4": 500}

# Feature support: premium storage, Hyper-V generations, NVMe only, ephemeral OS disk, Arm64
FEATURES: dict[str, tuple[bool, str, bool, bool, bool]] = {
    "ddsv4": (True, "V1,V2", False, True, False), "dsv4": (True, "V1,V2", False, False, False),
    "dv4": (False, "V1,V2", False, False, False), "ddv4": (False, "V1,V2", False, True, False),
    "dasv4": (True, "V1,V2", False, True, False), "dav4": (False, "V1,V2", False, True, False),
    "dv5": (False, "V1,V2", False, False, False), "dsv5": (True, "V1,V2", False, False, False),
    "ddv5": (False, "V1,V2", False, True, False), "ddsv5": (True, "V1,V2", False, True, False),
    "dasv5": (True, "V1,V2", False, False, False), "dadsv5": (True, "V1,V2", False, True, False),
    "dlsv5": (True, "V1,V2", False, False, False), "dldsv5": (True, "V1,V2", False, True, False),
    "dpsv5": (True, "V2", False, False, True), "dpdsv5": (True, "V2", False, True, True),
    "dplsv5": (True, "V2", False, False, True), "dpldsv5": (True, "V2", False, True, True),
    "dsv6": (True, "V2", True, False, False), "ddsv6": (True, "V2", True, True, False),
    "dlsv6": (True, "V2", True, False, False), "dldsv6": (True, "V2", True, True, False),
    "dasv6": (True, "V2", True, False, False), "dadsv6": (True, "V2", True, True, False),
    "dalsv6": (True, "V2", True, False, False), "daldsv6": (True, "V2", True, True, False),
    "dpsv6": (True, "V2", True, False, True), "dpdsv6": (True, "V2", True, True, True),
    "ev4": (False, "V1,V2", False, False, False), "esv4": (True, "V1,V2", False, False, False),
    "edv4": (False, "V1,V2", False, False, False), "edsv4": (True, "V1,V2", False, True, False),
    "eav4": (False, "V1,V2", False, True, False), "easv4": (True, "V1,V2", False, True, False),
    "ev5": (False, "V1,V2", False, False, False), "esv5": (True, "V1,V2", False, False, False),
    "edv5": (False, "V1,V2", False, True, False), "edsv5": (True, "V1,V2", False, True, False),
    "easv5": (True, "V1,V2", False, False, False), "eadsv5": (True, "V1,V2", False, True, False),
    "epsv5": (True, "V2", False, False, True), "epdsv5": (True, "V2", False, True, True),
    "esv6": (True, "V2", True, False, False), "edsv6": (True, "V2", True, False, False),
    "easv6": (True, "V2", True, False, False), "eadsv6": (True, "V2", True, True, False),
    "epsv6": (True, "V2", True, False, True), "epdsv6": (True, "V2", True, True, True),
    "lsv2": (True, "V1,V2", False, True, False), "lsv3": (True, "V1,V2", False, True, False),
    "lasv3": (True, "V1,V2", False, True, False), "lsv4": (True, "V2", True, True, False),
    "lasv4": (True, "V2", True, True, False), "laosv4": (True, "V2", True, True, False),
}
NVME_TEMP = {"ddsv6", "dldsv6", "dadsv6", "daldsv6", "dpdsv6", "edsv6", "eadsv6", "epdsv6"}


def page_of(size: str) -> tuple[str, str, str]:
    """The family key, page path and ms.date a size was transcribed from."""
    for key, (folder, date, sizes) in PAGES.items():
        if size in sizes:
            return key, f"articles/virtual-machines/sizes/{folder}/{key}-series.md", date
    raise KeyError(size)


def sku(name: str, region: str = "westeurope") -> dict[str, Any]:
    """A Resource SKUs API entry for one transcribed size, as the fake Resource Manager serves it."""
    key, _, _ = page_of(name)
    s = PAGES[key][2][name]
    premium, generations, nvme_only, ephemeral, arm = FEATURES[key]
    count, each = NVME.get(name, (0, 0.0))
    placements = [p for p, has in (("CacheDisk", name in CACHE_GIB),
                                   ("ResourceDisk", s.temp_gib > 0 and key not in NVME_TEMP),
                                   ("NvmeDisk", key in NVME_TEMP or (nvme_only and count > 0))) if has]
    caps = {"vCPUs": s.vcpus, "MemoryGB": s.memory, "MaxDataDiskCount": s.data_disks,
            "MaxResourceVolumeMB": s.temp_gib * 1024, "PremiumIO": premium, "HyperVGenerations": generations,
            "DiskControllerTypes": "NVMe" if nvme_only else "SCSI", "CpuArchitectureType": "Arm64" if arm else "x64",
            "UncachedDiskIOPS": s.iops, "UncachedDiskBytesPerSecond": s.mbps * 10**6,
            "EphemeralOSDiskSupported": ephemeral and bool(placements),
            "SupportedEphemeralOSDiskPlacements": ",".join(placements) if ephemeral else ""}
    if name in CACHE_GIB:
        caps["CachedDiskBytes"] = CACHE_GIB[name] * 2**30
    if count:
        caps["NvmeDiskSizeInMiB"] = int(count * each * 1024)
    return {"name": name, "family": f"standard{key.upper()}Family", "resourceType": "virtualMachines",
            "locations": [region], "capabilities": [{"name": k, "value": str(v)} for k, v in caps.items()],
            "restrictions": []}


def all_sizes() -> list[str]:
    return [name for _, _, sizes in PAGES.values() for name in sizes]
