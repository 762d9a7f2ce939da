"""Where an Azure VM's disks appear: the udev links Azure's Linux images ship, and the NVMe models of v6 sizes.

SCSI sizes (v5 and older): the Azure Linux Agent's udev rules (WALinuxAgent ``66-azure-storage.rules``)
name the temp disk ``/dev/disk/azure/resource`` (the agent or cloud-init formats it and mounts its
first partition at /mnt) and the data disk at LUN n ``/dev/disk/azure/scsi1/lun<n>``.

NVMe sizes (v6, Ebsv5 with the NVMe controller, Lsv4): the OS and data disks are namespaces of one
remote controller, model "MSFT NVMe Accelerator v1.0": the OS disk is namespace 1 and the data disk at
LUN n is namespace n+2. Microsoft's azure-vm-utils (``80-azure-disk.rules``, Azure/azure-vm-utils
@41133928, doc/disk-identification.md) names it ``/dev/disk/azure/data/by-lun/<n>``; the page
articles/virtual-machines/linux/azure-virtual-machine-utilities.md (ms.date 09/03/2025, read
2026-11-27) lists the images that ship it (Ubuntu 22.04 and later, Debian 13, RHEL 9.8 and later, ...),
and articles/virtual-machines/nvme-linux.md (ms.date 07/31/2024) shows the layout (OS disk
/dev/nvme0n1, first data disk /dev/nvme0n2, temp disk /dev/nvme1n1; data/by-lun replaces scsi1).
The temp disks are separate controllers, one per disk, model "Microsoft NVMe Direct Disk v2" (v6;
"Microsoft NVMe Direct Disk", v1, are the local disks of Lsv2/Lsv3, which keep a SCSI temp disk),
and they come raw: "the new v6 VMs come with raw, unformatted NVMe disks. Customers should initialize
and format the disks" (learn.microsoft.com/azure/virtual-machines/enable-nvme-temp-faqs, read
2026-11-27); up to four of them (converting-scsi-to-nvme-storage.md, ms.date 05/26/2026).
diskbench finds them by model, as Microsoft's own azure-ephemeral-disk-setup does (``lsblk -o
NAME,MODEL``), and formats and mounts them itself (striped if several) unless something already
mounted them at /mnt, or hands one to the engine as it is (``temp: {raw: true}``).

Images without azure-vm-utils, so without ``data/by-lun`` (Debian 12, which has it only in
bookworm-backports; Ubuntu 20.04, while the Ubuntu archive has it from 22.04's jammy-updates:
packages.debian.org, packages.ubuntu.com), still find LUN n: the Linux preparer takes the namespace
whose nsid (``/sys/class/block/NAME/nsid``) is n+2 on the controller of model "MSFT NVMe Accelerator
v1.0" (``lun_namespace_models``), the rule azure-vm-utils' own ``80-azure-disk.rules`` applies
(``echo $$((%s{nsid}-2))``).
"""

from __future__ import annotations

from ...platforms.base import DeviceMap

REMOTE_NVME_MODEL = "MSFT NVMe Accelerator v1.0"  # OS disk (namespace 1) and data disks (namespace LUN+2)
TEMP_NVME_MODELS = ("Microsoft NVMe Direct Disk v2",)  # v6 temp disks, raw, one controller each
LUN_NAMESPACE_OFFSET = 2  # data disk at LUN n = namespace n + 2 of the remote controller

DEVICE_MAP = DeviceMap(
    lun_paths=("/dev/disk/azure/scsi1/lun{n}", "/dev/disk/azure/data/by-lun/{n}"),
    temp_paths=("/dev/disk/azure/resource-part1",),
    temp_mounts=("/mnt",),
    temp_nvme_models=TEMP_NVME_MODELS,
    lun_namespace_models=(REMOTE_NVME_MODEL,),  # images without azure-vm-utils (Debian 12, Ubuntu 20.04)
    lun_namespace_offset=LUN_NAMESPACE_OFFSET,
    nvme_exclude_models=("accelerator",),  # the NVMe front of remote disks on v6 sizes, not a local disk
    lun_locations=(": LUN {n}",),  # Windows: "Integrated : Adapter 3 : Port 0 : Target 0 : LUN 2"
    temp_drives=("D:",),  # Windows images mount the temp disk as D:
    lun_hint="is the disk attached? see `ls -l /dev/disk/azure/scsi1` (NVMe sizes such as v6: "
             "`ls -l /dev/disk/azure/data/by-lun`, made by azure-vm-utils' udev rules, or `lsblk -o NAME,MODEL`: "
             f"LUN n is namespace n+{LUN_NAMESPACE_OFFSET} of the '{REMOTE_NVME_MODEL}' controller, "
             "e.g. /dev/nvme0n2 for LUN 0) (Windows: Get-Disk)",
    temp_hint="this VM size may have none (v6 sizes: raw NVMe temp disks, model "
              f"'{TEMP_NVME_MODELS[0]}', see `lsblk -o NAME,MODEL`)",
)
