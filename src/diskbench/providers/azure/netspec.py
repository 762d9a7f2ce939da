"""The network of a run: one VNet and subnet, an NSG admitting SSH from one source, a public IP
and a NIC per VM. SSH is never opened to the whole internet unless the user says ``any``."""

from __future__ import annotations

from typing import Any

from ..network import ssh_source as ssh_source  # noqa: F401 - where it always was

VNET_PREFIX = "10.213.0.0/16"
SUBNET_PREFIX = "10.213.0.0/24"


def nsg_body(region: str, tags: dict[str, str], source: str) -> dict[str, Any]:
    return {"location": region, "tags": tags, "properties": {"securityRules": [{
        "name": "ssh-from-diskbench", "properties": {
            "priority": 100, "direction": "Inbound", "access": "Allow", "protocol": "Tcp",
            "sourceAddressPrefix": source, "sourcePortRange": "*",
            "destinationAddressPrefix": "*", "destinationPortRange": "22"}}]}}


def vnet_body(region: str, tags: dict[str, str], nsg_id: str) -> dict[str, Any]:
    return {"location": region, "tags": tags, "properties": {
        "addressSpace": {"addressPrefixes": [VNET_PREFIX]},
        "subnets": [{"name": "benchmark", "properties": {"addressPrefix": SUBNET_PREFIX,
                                                         "networkSecurityGroup": {"id": nsg_id}}}]}}


def public_ip_body(region: str, tags: dict[str, str], zone: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"location": region, "tags": tags, "sku": {"name": "Standard"},
                            "properties": {"publicIPAllocationMethod": "Static",
                                           "publicIPAddressVersion": "IPv4"}}
    if zone:
        body["zones"] = [zone]
    return body


def nic_body(region: str, tags: dict[str, str], subnet_id: str, public_ip_id: str) -> dict[str, Any]:
    return {"location": region, "tags": tags, "properties": {
        "enableAcceleratedNetworking": True,
        "ipConfigurations": [{"name": "ipconfig1", "properties": {
            "subnet": {"id": subnet_id}, "privateIPAllocationMethod": "Dynamic",
            "publicIPAddress": {"id": public_ip_id, "properties": {"deleteOption": "Delete"}}}}]}}
