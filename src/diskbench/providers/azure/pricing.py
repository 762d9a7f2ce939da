"""What a plan costs: VM-minutes and an estimate from a price table.

A table for the seed sizes and disks ships with diskbench (approximate list prices), so plans
show a cost offline; ``refresh`` asks the public Azure Retail Prices API for the sizes of a plan
and caches the answer.
"""

from __future__ import annotations

import json
import os
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import platformdirs

from ...errors import DiskbenchError
from ...plan import Plan
from ..base import MachineCost
from .schema import Machine

BUNDLED = Path(__file__).resolve().parent / "data" / "prices.json"
RETAIL_API = "https://prices.azure.com/api/retail/prices"
PROVISION_OVERHEAD_MIN = 6.0  # creating, booting, cloud-init and deleting a VM, roughly
HOURS_PER_MONTH = 730.0


def cache_file() -> Path:
    return Path(platformdirs.user_cache_dir("diskbench")) / "azure-prices.json"


def load_prices() -> dict[str, Any]:
    prices: dict[str, Any] = json.loads(BUNDLED.read_text())
    try:
        cached = json.loads(cache_file().read_text())
    except (OSError, ValueError):
        return prices
    prices["vm_hour"].update(cached.get("vm_hour", {}))
    prices["source"] = f"{cached.get('source', 'cache')} (cached), else {prices['source']}"
    return prices


def _disk_month(table: dict[str, Any], disk_type: str, size_gb: int) -> float | None:
    tiers = table.get(disk_type)
    if not tiers:
        return None
    fitting = sorted((int(k), v) for k, v in tiers.items() if int(k) >= size_gb)
    return float(fitting[0][1]) if fitting else None


def estimate(plan: Plan, prices: dict[str, Any] | None = None) -> list[MachineCost]:
    prices = prices or load_prices()
    minutes: dict[str, float] = {}
    specs: dict[str, Machine] = {}
    for job in [c for unit in plan.jobs for c in (unit.clients or [unit])]:  # a group's clients too
        if not isinstance(job.entry, Machine):
            continue
        minutes[job.machine] = minutes.get(job.machine, PROVISION_OVERHEAD_MIN) + job.expected_s / 60
        specs[job.machine] = job.entry
    out = []
    for name, spec in specs.items():
        hours = minutes[name] / 60
        vm = prices["vm_hour"].get(spec.size)
        disks, missing = 0.0, []
        for d in spec.data_disks:
            month = _disk_month(prices["disk_month"], d.type, d.size_gb)
            if month is None:
                missing.append(d.type)
            else:
                disks += d.count * month / HOURS_PER_MONTH
        if not spec.os_disk.ephemeral:
            month = _disk_month(prices["disk_month"], spec.os_disk.type, spec.os_disk.size_gb or 30)
            disks += (month or 0.0) / HOURS_PER_MONTH
        usd = None if vm is None else hours * (vm + disks)
        note = "no price for this size" if vm is None else (f"no price for {', '.join(missing)}" if missing else "")
        out.append(MachineCost(name, spec.size, minutes[name], usd, note))
    shared = plan.profile.profile.shared
    if shared is not None and shared.anf is not None and minutes:
        from .anf import hourly_usd, pool_tib

        spent = max(minutes.values())  # the volume lives as long as the run's longest machine
        out.append(MachineCost("anf", f"{shared.anf.service_level} {pool_tib(shared.anf)} TiB pool", spent,
                               hourly_usd(shared.anf) * spent / 60, "Azure NetApp Files, approximate"))
    return out


def refresh(region: str, sizes: list[str], *, url: str | None = None, timeout: float = 20.0) -> dict[str, float]:
    """Current Linux pay-as-you-go hourly prices of ``sizes`` in ``region``; cached for offline plans."""
    url = url or os.environ.get("DISKBENCH_PRICES_URL", RETAIL_API)
    found: dict[str, float] = {}
    for size in sizes:
        query = (f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' and armSkuName eq '{size}' "
                 "and priceType eq 'Consumption'")
        next_url: str | None = f"{url}?{urllib.parse.urlencode({'$filter': query})}"
        while next_url:
            try:
                with urllib.request.urlopen(next_url, timeout=timeout) as response:  # noqa: S310 - fixed API
                    page = json.loads(response.read())
            except (OSError, ValueError) as exc:
                raise DiskbenchError(f"cannot read prices from {url}: {exc}",
                                     hint="plan works offline with the bundled or cached prices") from None
            for item in page.get("Items", []):
                text = f"{item.get('productName', '')} {item.get('skuName', '')} {item.get('meterName', '')}"
                if any(word in text for word in ("Windows", "Spot", "Low Priority")):
                    continue
                found[size] = float(item["retailPrice"])
            next_url = page.get("NextPageLink")
    path = cache_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        cached = json.loads(path.read_text())
    except (OSError, ValueError):
        cached = {"vm_hour": {}}
    cached["vm_hour"].update(found)
    cached["source"] = f"Azure Retail Prices API, {region}"
    path.write_text(json.dumps(cached, indent=1))
    return found
