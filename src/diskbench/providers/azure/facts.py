"""What an Azure VM says about itself: size, region and image from the instance metadata service."""

from __future__ import annotations

import json
from typing import Any

from ...executors.base import Executor

AZURE_VENDOR = "Microsoft Corporation"
IMDS = "http://169.254.169.254/metadata/instance/compute?api-version=2021-02-01"


def azure_facts(ex: Executor) -> dict[str, Any]:
    """VM size, region and image from the instance metadata service, asked on the VM itself.

    Only on machines whose DMI vendor is Microsoft: elsewhere the address means nothing.
    """
    vendor = ex.run(["cat", "/sys/class/dmi/id/sys_vendor"]).stdout.strip()
    if vendor != AZURE_VENDOR:
        return {}
    out = ex.run(["curl", "-s", "-m", "3", "-H", "Metadata: true", IMDS], timeout=10)
    try:
        compute = json.loads(out.stdout)
    except ValueError:
        return {"azure": {"imds": "unreachable"}}
    image = compute.get("storageProfile", {}).get("imageReference", {})
    return {"azure": {
        "vm_size": compute.get("vmSize"), "region": compute.get("location"),
        "zone": compute.get("zone") or None, "vm_id": compute.get("vmId"),
        "image": ":".join(str(image.get(k, "")) for k in ("publisher", "offer", "sku", "version")),
    }}
