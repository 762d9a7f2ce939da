"""The ARM request bodies of a run's VMs: keys, cloud-init, OS and data disks, delete options.

A fresh key pair per run logs in; the VM's SSH host key is generated here too and handed over
through cloud-init, so its fingerprint is known before the first connection.
"""

from __future__ import annotations

import base64
from typing import Any

import yaml

from ...executors.keys import KeyPair as KeyPair
from .preflight import image_facts
from .schema import Machine
from .sizes import SizeInfo, lookup

ADMIN_USER = "azureuser"
PACKAGES = ["fio", "mdadm", "nvme-cli", "xfsprogs"]


def cloud_init(host_key: KeyPair) -> str:
    """#cloud-config: our host key instead of a generated one, and the tools diskbench needs."""
    doc = {
        "ssh_deletekeys": True,
        "ssh_genkeytypes": [],
        "ssh_keys": {"ed25519_private": host_key.private_openssh,
                     "ed25519_public": host_key.public_openssh.split(" ")[0] + " "
                     + host_key.public_openssh.split(" ")[1]},
        "package_update": True,
        "packages": PACKAGES,
    }
    return "#cloud-config\n" + yaml.safe_dump(doc, sort_keys=False)


def image_reference(image: str) -> dict[str, str]:
    publisher, offer, sku, version = (image.split(":") + ["latest"])[:4]
    return {"publisher": publisher, "offer": offer, "sku": sku, "version": version}


def os_disk(m: Machine) -> dict[str, Any]:
    d = m.os_disk
    disk: dict[str, Any] = {"createOption": "FromImage", "caching": d.caching, "deleteOption": "Delete"}
    if d.ephemeral:
        # An ephemeral OS disk lives on the VM's cache, temp or NVMe disk; no managed disk type.
        disk["diffDiskSettings"] = {"option": "Local", "placement": d.ephemeral}
        disk["managedDisk"] = {"storageAccountType": "Standard_LRS"}
    else:
        disk["managedDisk"] = {"storageAccountType": d.type}
    if d.size_gb:
        disk["diskSizeGB"] = d.size_gb
    return disk


def data_disks(m: Machine) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for spec in m.data_disks:
        for _ in range(spec.count):
            disk: dict[str, Any] = {"lun": len(out), "createOption": "Empty", "diskSizeGB": spec.size_gb,
                                    "caching": spec.caching, "deleteOption": "Delete",
                                    "managedDisk": {"storageAccountType": spec.type}}
            if spec.iops:
                disk["diskIOPSReadWrite"] = spec.iops
            if spec.mbps:
                disk["diskMBpsReadWrite"] = spec.mbps
            out.append(disk)
    return out


def disk_controller(m: Machine, size: SizeInfo | None = None) -> str | None:
    """The ``diskControllerType`` of the VM's storage profile: NVMe on an NVMe-only size, SCSI on a
    Generation 2 VM of any other size, None (the property left out) where Azure takes none.

    v6 sizes (Dsv6, Ddsv6, Esv6, Edsv6, Lsv4, ...) attach their disks over NVMe only (sizes.json:
    ``DiskControllerTypes: NVMe``), and the body says so instead of leaving it to Azure's default.
    Sources, read 2026-11-27: Azure's API reference for ``DiskControllerType`` (learn.microsoft.com,
    dotnet/api/azure.resourcemanager.compute.models.diskcontrollertype): the property "is only
    supported for virtual machines whose operating system disk and VM sku supports Generation 2";
    articles/virtual-machines/nvme-overview.md (ms.date 07/31/2024): "We currently do not support NVMe
    disks on Generation 1 VMs"; enable-nvme-remote-faqs: without a DiskControllerType the platform
    picks the size's default, and a size that offers SCSI and NVMe uses SCSI unless NVMe is asked
    for. So a Generation 1 VM (or one whose image images.json does not know, on a size that boots
    Generation 1 too) keeps Azure's default, which is SCSI there.
    """
    size = size if size is not None else lookup(m.size, m.region)
    if size is None or not size.controllers:
        return None
    if size.controllers == ["NVMe"]:
        return "NVMe"
    image = image_facts(m.image)
    gen2 = (image is not None and image.generation == "V2") or size.generations == ["V2"]
    return "SCSI" if "SCSI" in size.controllers and gen2 else None


def vm_body(m: Machine, *, tags: dict[str, str], nic_id: str, login: KeyPair, host_key: KeyPair,
            size: SizeInfo | None = None) -> dict[str, Any]:
    """The VM's request body; ``size``: the size as the run's pre-flight read it from the SKU API (else
    it is looked up in the size data)."""
    body: dict[str, Any] = {
        "location": m.region,
        "tags": tags,
        "properties": {
            "hardwareProfile": {"vmSize": m.size},
            "storageProfile": {"imageReference": image_reference(m.image), "osDisk": os_disk(m),
                               "dataDisks": data_disks(m)},
            "osProfile": {
                "computerName": m.name[:63],
                "adminUsername": ADMIN_USER,
                "customData": base64.b64encode(cloud_init(host_key).encode()).decode(),
                "linuxConfiguration": {"disablePasswordAuthentication": True, "ssh": {"publicKeys": [
                    {"path": f"/home/{ADMIN_USER}/.ssh/authorized_keys", "keyData": login.public_openssh}]}},
            },
            "networkProfile": {"networkInterfaces": [{"id": nic_id, "properties": {"deleteOption": "Delete"}}]},
        },
    }
    if m.os == "windows":  # no cloud-init: OpenSSH and the keys come with an extension (winspec.py)
        from .winspec import windows_os_profile

        body["properties"]["osProfile"] = windows_os_profile(m, ADMIN_USER)
    controller = disk_controller(m, size)
    if controller:
        body["properties"]["storageProfile"]["diskControllerType"] = controller
    if m.zone:
        body["zones"] = [m.zone]
    if any(d.type == "UltraSSD_LRS" for d in m.data_disks):
        body["properties"]["additionalCapabilities"] = {"ultraSSDEnabled": True}
    return body
