"""The ARM request bodies of a run's VMs: keys, cloud-init, OS and data disks, delete options.

A fresh key pair per run logs in; the VM's SSH host key is generated here too and handed over
through cloud-init, so its fingerprint is known before the first connection.
"""

from __future__ import annotations

import base64
from typing import Any

import yaml

from ...executors.keys import KeyPair as KeyPair
from .schema import Machine

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


def vm_body(m: Machine, *, tags: dict[str, str], nic_id: str, login: KeyPair, host_key: KeyPair) -> dict[str, Any]:
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
    if m.zone:
        body["zones"] = [m.zone]
    if any(d.type == "UltraSSD_LRS" for d in m.data_disks):
        body["properties"]["additionalCapabilities"] = {"ultraSSDEnabled": True}
    return body
