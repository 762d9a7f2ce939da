"""Network request bodies: SSH only from the caller, Standard public IPs deleted with the NIC."""

from __future__ import annotations

import pytest

from diskbench.errors import DiskbenchError
from diskbench.providers.azure.netspec import nic_body, nsg_body, public_ip_body, ssh_source, vnet_body


def test_ssh_source() -> None:
    assert ssh_source("203.0.113.7") == "203.0.113.7/32"
    assert ssh_source("203.0.113.9/24") == "203.0.113.0/24"
    assert ssh_source("any") == "*"
    with pytest.raises(DiskbenchError, match="is not an address or CIDR"):
        ssh_source("everyone")


def test_bodies() -> None:
    rule = nsg_body("westeurope", {}, "203.0.113.7/32")["properties"]["securityRules"][0]["properties"]
    assert (rule["sourceAddressPrefix"], rule["destinationPortRange"], rule["access"]) == (
        "203.0.113.7/32", "22", "Allow")
    subnet = vnet_body("westeurope", {}, "/nsg")["properties"]["subnets"][0]["properties"]
    assert subnet["networkSecurityGroup"] == {"id": "/nsg"}
    pip = public_ip_body("westeurope", {"diskbench": "true"}, "2")
    assert pip["sku"] == {"name": "Standard"} and pip["zones"] == ["2"] and pip["tags"] == {"diskbench": "true"}
    ip = nic_body("westeurope", {}, "/subnet", "/pip")["properties"]["ipConfigurations"][0]["properties"]
    assert ip["publicIPAddress"] == {"id": "/pip", "properties": {"deleteOption": "Delete"}}
