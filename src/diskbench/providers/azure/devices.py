"""Where an Azure VM's disks appear (the udev links Azure's Linux images ship)."""

from __future__ import annotations

from ...platforms.base import DeviceMap

DEVICE_MAP = DeviceMap(
    lun_paths=("/dev/disk/azure/scsi1/lun{n}", "/dev/disk/azure/data/by-lun/{n}"),
    temp_paths=("/dev/disk/azure/resource-part1",),
    temp_mounts=("/mnt",),
    nvme_exclude_models=("accelerator",),  # the NVMe front of remote disks on v6 sizes, not a local disk
    lun_locations=(": LUN {n}",),  # Windows: "Integrated : Adapter 3 : Port 0 : Target 0 : LUN 2"
    temp_drives=("D:",),  # Windows images mount the temp disk as D:
    lun_hint="is the disk attached? see `ls -l /dev/disk/azure/scsi1` (Windows: Get-Disk)",
    temp_hint="this VM size may have none",
)
