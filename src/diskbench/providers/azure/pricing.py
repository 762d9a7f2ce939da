"""What a plan costs: VM-minutes and an estimate from per-region price tables.

diskbench bundles Azure Retail Prices API snapshots (``data/prices.json``: pay-as-you-go Linux and
Windows VM hours for every size in the size data, and managed disk prices) for the regions a
snapshot was found for, so plans show a cost offline. ``refresh`` asks the public API for the
sizes and disks of a plan's region and caches the answer over the bundle. A machine in a region
without prices, or with a size or disk the table lacks, says so instead of costing nothing.
"""

from __future__ import annotations

import json
import math
import os
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import platformdirs

from ...errors import DiskbenchError
from ...plan import Plan
from ..base import MachineCost
from .schema import DataDisk, Machine

BUNDLED = Path(__file__).resolve().parent / "data" / "prices.json"
RETAIL_API = "https://prices.azure.com/api/retail/prices"
PROVISION_OVERHEAD_MIN = 6.0  # creating, booting, cloud-init and deleting a VM, roughly
HOURS_PER_MONTH = 730.0
DEFAULT_OS_GIB = {"linux": 30, "windows": 127}  # the Marketplace images' OS disks
PREMIUM_V2_FREE = (3000, 125)  # IOPS and MB/s every Premium SSD v2 has without charge
TIERED_PRODUCTS = {"Premium SSD Managed Disks": "Premium_LRS", "Standard SSD Managed Disks": "StandardSSD_LRS",
                   "Standard HDD Managed Disks": "Standard_LRS"}
PROVISIONED_PRODUCTS = {"Azure Premium SSD v2": ("Premium LRS", "premium_v2_hour"),
                        "Ultra Disks": ("Ultra LRS", "ultra_hour")}
METERS = {"Provisioned Capacity": "gib_hour", "Provisioned IOPS": "iops_hour",
          "Provisioned Throughput (MBps)": "mbps_hour"}


def cache_file() -> Path:
    return Path(platformdirs.user_cache_dir("diskbench")) / "azure-prices.json"


def load_prices() -> dict[str, Any]:
    """The bundled tables with anything ``refresh`` cached laid over them, region by region."""
    prices: dict[str, Any] = json.loads(BUNDLED.read_text())
    try:
        cached = json.loads(cache_file().read_text())
        fresh = dict(cached["regions"])
    except (OSError, ValueError, KeyError, TypeError):
        return prices
    for region, table in fresh.items():
        base = prices["regions"].setdefault(region, {})
        for key, value in table.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                base[key] = {**base[key], **value}
            else:
                base[key] = value
    names, read = ", ".join(sorted(fresh)), str(cached.get("read", "?"))[:10]
    prices["source"] = f"Azure Retail Prices API, {names} (cached {read}), else {prices['source']}"
    return prices


def vm_hourly(table: dict[str, Any], size: str, os_name: str) -> float | None:
    key = "vm_hour_windows" if os_name == "windows" else "vm_hour"
    found = table.get(key, {}).get(size)
    return None if found is None else float(found)


def disk_hourly(table: dict[str, Any], disk_type: str, size_gb: int, iops: int | None = None,
                mbps: float | None = None) -> float | None:
    """What one disk costs per hour in a region's table; None when the table has no price for it."""
    if disk_type == "PremiumV2_LRS":
        rates = table.get("premium_v2_hour") or {}
        free_iops, free_mbps = PREMIUM_V2_FREE
        extra = (max(0, (iops or free_iops) - free_iops), max(0.0, (mbps or free_mbps) - free_mbps))
        return _provisioned(rates, size_gb, *extra)
    if disk_type == "UltraSSD_LRS":
        if iops is None or mbps is None:
            return None
        return _provisioned(table.get("ultra_hour") or {}, _ultra_billed_gib(size_gb), iops, mbps)
    tiers = (table.get("disk_month") or {}).get(disk_type) or {}
    fitting = sorted((int(k), float(v)) for k, v in tiers.items() if int(k) >= size_gb)
    return fitting[0][1] / HOURS_PER_MONTH if fitting else None


def _provisioned(rates: dict[str, Any], gib: float, iops: float, mbps: float) -> float | None:
    if not all(k in rates for k in ("gib_hour", "iops_hour", "mbps_hour")):
        return None
    return float(gib * rates["gib_hour"] + iops * rates["iops_hour"] + mbps * rates["mbps_hour"])


def _ultra_billed_gib(size_gb: int) -> int:
    """Ultra Disk capacity is billed at the next size of 4, 8 ... 512 GiB, then whole TiB."""
    if size_gb <= 512:
        return max(4, int(2 ** math.ceil(math.log2(size_gb))))
    return math.ceil(size_gb / 1024) * 1024


def machine_hourly(spec: Machine, table: dict[str, Any]) -> tuple[float | None, list[str]]:
    """The machine's VM and disks per hour, and what the table has no price for."""
    missing: list[str] = []
    vm = vm_hourly(table, spec.size, spec.os)
    if vm is None:
        missing.append(f"{spec.size} ({spec.os})")
    disks = 0.0
    for d in spec.data_disks:
        price = _data_disk(table, d)
        if price is None:
            missing.append(d.type)
        else:
            disks += d.count * price
    if not spec.os_disk.ephemeral:  # an ephemeral OS disk lives on the VM's own storage: no disk charge
        size = spec.os_disk.size_gb or DEFAULT_OS_GIB.get(spec.os, 30)
        price = disk_hourly(table, spec.os_disk.type, size)
        if price is None:
            missing.append(f"OS disk {spec.os_disk.type}")
        else:
            disks += price
    return (None if vm is None else vm + disks), missing


def _data_disk(table: dict[str, Any], d: DataDisk) -> float | None:
    return disk_hourly(table, d.type, d.size_gb, d.iops, d.mbps)


def _machines(plan: Plan) -> tuple[dict[str, float], dict[str, Machine]]:
    minutes: dict[str, float] = {}
    specs: dict[str, Machine] = {}
    for job in [c for unit in plan.units for c in (unit.clients or [unit])]:  # a group's clients too
        if not isinstance(job.entry, Machine):
            continue
        minutes[job.machine] = minutes.get(job.machine, PROVISION_OVERHEAD_MIN) + job.expected_s / 60
        specs[job.machine] = job.entry
    for name in minutes:  # a machine that mounts the shared volume itself waits for the client group's turn
        minutes[name] += plan.wait_s(name) / 60
    return minutes, specs


def estimate(plan: Plan, prices: dict[str, Any] | None = None) -> list[MachineCost]:
    prices = prices or load_prices()
    minutes, specs = _machines(plan)
    out = []
    for name, spec in specs.items():
        table = prices["regions"].get(spec.region)
        if table is None:
            out.append(MachineCost(name, spec.size, minutes[name], None,
                                   f"no prices for {spec.region}: `plan --refresh-prices` reads them"))
            continue
        hourly, missing = machine_hourly(spec, table)
        usd = None if hourly is None or missing else minutes[name] / 60 * hourly
        note = f"no price for {', '.join(missing)} in {spec.region}" if missing else ""
        out.append(MachineCost(name, spec.size, minutes[name], usd, note))
    return out + _anf(plan, minutes)


def _anf(plan: Plan, minutes: dict[str, float]) -> list[MachineCost]:
    shared = plan.profile.profile.shared
    volume = shared.volume if shared is not None else None
    if volume is None or not minutes:
        return []
    from .anf import AnfVolume, hourly_usd

    anf = volume.spec
    if not isinstance(anf, AnfVolume):
        return []
    spent = max(minutes.values())  # the volume lives as long as the run's longest machine
    return [MachineCost("anf", f"{anf.service_level} {anf.pool_tib} TiB pool", spent, hourly_usd(anf) * spent / 60,
                        "Azure NetApp Files, approximate")]


def refresh(region: str, sizes: list[str], *, url: str | None = None, timeout: float = 20.0) -> dict[str, float]:
    """Current pay-as-you-go prices of ``sizes`` (Linux and Windows) and of managed disks in ``region``,
    cached for offline plans; returns the Linux hourly price of each size found."""
    url = url or os.environ.get("DISKBENCH_PRICES_URL", RETAIL_API)
    table: dict[str, Any] = {"vm_hour": {}, "vm_hour_windows": {}}
    for size in sizes:
        query = (f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' and armSkuName eq '{size}' "
                 "and priceType eq 'Consumption'")
        for item in _items(url, query, timeout):
            _vm_item(table, size, item)
    for product in (*TIERED_PRODUCTS, *PROVISIONED_PRODUCTS):
        query = (f"serviceName eq 'Storage' and armRegionName eq '{region}' and productName eq '{product}' "
                 "and priceType eq 'Consumption'")
        for item in _items(url, query, timeout):
            _disk_item(table, item)
    _save(region, table)
    return dict(table["vm_hour"])


def _items(url: str, query: str, timeout: float) -> list[dict[str, Any]]:
    """Every item of a Retail Prices API query, following NextPageLink."""
    items: list[dict[str, Any]] = []
    next_url: str | None = f"{url}?{urllib.parse.urlencode({'$filter': query})}"
    while next_url:
        try:
            with urllib.request.urlopen(next_url, timeout=timeout) as response:  # noqa: S310 - fixed API
                page = json.loads(response.read())
        except (OSError, ValueError) as exc:
            raise DiskbenchError(f"cannot read prices from {url}: {exc}",
                                 hint="plan works offline with the bundled or cached prices") from None
        items += page.get("Items", [])
        next_url = page.get("NextPageLink")
    return items


def _vm_item(table: dict[str, Any], size: str, item: dict[str, Any]) -> None:
    text = f"{item.get('productName', '')} {item.get('skuName', '')} {item.get('meterName', '')}"
    if any(word in text for word in ("Spot", "Low Priority", "Cloud Services")) or \
            item.get("unitOfMeasure", "1 Hour") != "1 Hour":
        return
    key = "vm_hour_windows" if "Windows" in str(item.get("productName", "")) else "vm_hour"
    table[key][size] = float(item["retailPrice"])


def _disk_item(table: dict[str, Any], item: dict[str, Any]) -> None:
    product, meter = str(item.get("productName", "")), str(item.get("meterName", ""))
    if product in TIERED_PRODUCTS and meter.endswith(" LRS Disk") and item.get("unitOfMeasure") == "1/Month":
        tiers = table.setdefault("disk_month", {}).setdefault(TIERED_PRODUCTS[product], {})
        size = _tier_size(TIERED_PRODUCTS[product], meter.split()[0])
        if size:
            tiers[str(size)] = float(item["retailPrice"])
    elif product in PROVISIONED_PRODUCTS and item.get("skuName") == PROVISIONED_PRODUCTS[product][0]:
        rate = METERS.get(meter.removeprefix(PROVISIONED_PRODUCTS[product][0] + " "))
        if rate:
            table.setdefault(PROVISIONED_PRODUCTS[product][1], {})[rate] = float(item["retailPrice"])


def _tier_size(storage_type: str, tier: str) -> int | None:
    """The GiB of a tier (P30 -> 1024) from the bundled disk table."""
    from .limits.disks import DISK_DATA, disk_kind

    rows = json.loads(DISK_DATA.read_text())["types"][disk_kind(storage_type)].get("tiers", [])
    return next((int(r["size_gib"]) for r in rows if r["tier"] == tier), None)


def _save(region: str, table: dict[str, Any]) -> None:
    path = cache_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        cached = json.loads(path.read_text())
        regions = dict(cached["regions"])
    except (OSError, ValueError, KeyError, TypeError):
        regions = {}
    merged = regions.get(region, {})
    for key, value in table.items():
        if value:
            merged[key] = {**merged.get(key, {}), **value}
    regions[region] = {**merged, "source": f"Azure Retail Prices API, {region}"}
    doc = {"read": datetime.now(timezone.utc).isoformat(timespec="seconds"), "regions": regions}
    path.write_text(json.dumps(doc, indent=1))
