"""Cost estimates offline from the bundled per-region snapshots, and prices refreshed from a (local)
Retail Prices API with paging: VM hours (Linux and Windows) and managed disks."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from diskbench.expand import build_plan
from diskbench.profile import load_profile
from diskbench.providers.azure.pricing import BUNDLED, disk_hourly, estimate, load_prices, refresh
from diskbench.providers.azure.schema import Machine
from diskbench.providers.azure.sizes import bundled_sizes

from ...conftest import diskbench

PRICES = json.loads(BUNDLED.read_text())
PROFILES = sorted(p.stem for p in (Path(__file__).resolve().parents[3] / "profiles").glob("*.yaml"))


def test_estimate_covers_every_machine() -> None:
    costs = {c.machine: c for c in estimate(build_plan(load_profile("e8-family")))}
    assert len(costs) == 7 and all(c.usd and c.usd > 0 for c in costs.values())
    assert all(c.vm_minutes > 6 for c in costs.values())
    premium = {c.machine: c for c in estimate(build_plan(load_profile("d8ds-premium")))}
    assert premium["d8ds-v4-premium"].usd > costs["e8ds-v4-temp"].usd  # type: ignore[operator]


@pytest.mark.parametrize("region", ["westeurope", "northeurope", "francecentral", "swedencentral"])
def test_every_size_in_the_size_data_has_a_price(region: str) -> None:
    table = PRICES["regions"][region]
    assert sorted(set(bundled_sizes()) - set(table["vm_hour"])) == []
    assert "2026-08-22" in table["source"] and "azure-pricing-radar" in table["source"]
    for storage, tiers in (("Premium_LRS", 14), ("StandardSSD_LRS", 14), ("Standard_LRS", 11)):
        assert len(table["disk_month"][storage]) == tiers


def test_snapshot_figures_read_from_the_api_items() -> None:
    """A few items of the westeurope snapshot (data/latest/vm-eu-west.json, storage-eu-west.json at commit
    cf741f25 of andy-diericks/azure-pricing-radar), read there by hand."""
    we = PRICES["regions"]["westeurope"]
    assert we["vm_hour"]["Standard_D8ds_v4"] == 0.544  # 'D8ds v4', Virtual Machines Ddsv4 Series
    assert we["vm_hour_windows"]["Standard_D8ds_v4"] == 0.912  # ... Ddsv4 Series Windows
    assert we["vm_hour"]["Standard_L8s_v2"] == 0.744 and we["vm_hour"]["Standard_D2s_v6"] == 0.121
    assert we["disk_month"]["Premium_LRS"]["128"] == 21.68 and we["disk_month"]["Premium_LRS"]["1024"] == 148.68
    assert we["premium_v2_hour"] == {"gib_hour": 0.00013, "iops_hour": 8e-06, "mbps_hour": 6.5e-05}


def test_eastus_figures_read_from_the_flexera_export() -> None:
    """A few 'US East' items of flexera-public/policy_templates data/azure/azure_vm_pricing.json (commit fd17209c),
    read there by hand; a size whose Linux item there carries the Windows price stays unpriced for Linux."""
    eus = PRICES["regions"]["eastus"]
    assert eus["vm_hour"]["Standard_D16ds_v4"] == 0.904 and eus["vm_hour_windows"]["Standard_D16ds_v4"] == 1.64
    assert eus["vm_hour"]["Standard_D32as_v5"] == 1.376 and eus["vm_hour_windows"]["Standard_D32as_v5"] == 2.848
    assert "Standard_D16as_v5" not in eus["vm_hour"] and eus["vm_hour_windows"]["Standard_D16as_v5"] == 1.424
    assert set(eus["vm_hour_windows"]) == set(PRICES["regions"]["westeurope"]["vm_hour_windows"])  # no Arm Windows


def test_disk_prices_follow_the_billing_rules() -> None:
    we = PRICES["regions"]["westeurope"]
    assert disk_hourly(we, "Premium_LRS", 100) == pytest.approx(21.68 / 730)  # billed as P10 (128 GiB)
    assert disk_hourly(we, "Standard_LRS", 16) == pytest.approx(1.536 / 730)  # the smallest HDD tier is S4
    base = disk_hourly(we, "PremiumV2_LRS", 100)  # 3,000 IOPS and 125 MB/s come free
    assert base == pytest.approx(100 * 0.00013)
    assert disk_hourly(we, "PremiumV2_LRS", 100, 5000, 200) == pytest.approx(base + 2000 * 8e-06 + 75 * 6.5e-05)
    ultra = we["ultra_hour"]
    assert disk_hourly(we, "UltraSSD_LRS", 200, 4000, 100) == pytest.approx(
        256 * ultra["gib_hour"] + 4000 * ultra["iops_hour"] + 100 * ultra["mbps_hour"])
    assert disk_hourly(we, "UltraSSD_LRS", 200) is None  # an Ultra Disk costs what is provisioned


@pytest.mark.parametrize("name", PROFILES)
def test_every_bundled_profile_is_costed_or_says_what_is_missing(name: str) -> None:
    plan = build_plan(load_profile(name))
    costs = estimate(plan)
    regions = {m.region for m in plan.profile.profile.machine_entries if isinstance(m, Machine)}
    if regions <= set(PRICES["regions"]):
        assert [c.note for c in costs if c.usd is None] == []
    else:  # no snapshot was found for these regions: said, not priced at zero
        assert all(c.usd is None and "plan --refresh-prices" in c.note for c in costs if c.machine != "anf")


ITEMS: dict[str, list[dict[str, Any]]] = {
    "Standard_D32s_v5": [
        {"productName": "Virtual Machines Dsv5 Series Windows", "skuName": "D32s v5", "meterName": "D32s v5",
         "unitOfMeasure": "1 Hour", "retailPrice": 3.0},
        {"productName": "Virtual Machines Dsv5 Series", "skuName": "D32s v5 Spot", "meterName": "D32s v5 Spot",
         "unitOfMeasure": "1 Hour", "retailPrice": 0.3},
        {"productName": "Virtual Machines Dsv5 Series", "skuName": "D32s v5", "meterName": "D32s v5",
         "unitOfMeasure": "1 Hour", "retailPrice": 1.5}],
    "Premium SSD Managed Disks": [
        {"productName": "Premium SSD Managed Disks", "skuName": "P6 LRS", "meterName": "P6 LRS Disk",
         "unitOfMeasure": "1/Month", "retailPrice": 10.0},
        {"productName": "Premium SSD Managed Disks", "skuName": "P6 LRS", "meterName": "P6 LRS Disk Mount",
         "unitOfMeasure": "1/Month", "retailPrice": 0.5}],
}


@pytest.fixture
def prices_api() -> Iterator[tuple[str, list[str]]]:
    """A Retail Prices API answering each $filter with its items, one item per page."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            seen.append(self.path)
            query = parse_qs(urlparse(self.path).query)
            text = query.get("$filter", [""])[0]
            items = next((v for k, v in ITEMS.items() if f"'{k}'" in text), [])
            skip = int(query.get("skip", ["0"])[0])
            body: dict[str, Any] = {"Items": items[skip:skip + 1], "NextPageLink": None}
            if skip + 1 < len(items):
                body["NextPageLink"] = f"http://127.0.0.1:{port}/api?{urlencode({'$filter': text, 'skip': skip + 1})}"
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{port}/api", seen
    finally:
        server.shutdown()
        server.server_close()


def test_refresh_reads_every_page_sorts_the_meters_and_caches(prices_api: tuple[str, list[str]], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    url, seen = prices_api
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert refresh("eastus", ["Standard_D32s_v5"], url=url) == {"Standard_D32s_v5": 1.5}
    assert len([s for s in seen if "Standard_D32s_v5" in s]) == 3  # all three pages of the VM query
    eastus = load_prices()["regions"]["eastus"]
    # Windows kept apart, Spot dropped; the fresh figures lie over the bundled ones (3.008 and 1.536)
    assert eastus["vm_hour_windows"]["Standard_D32s_v5"] == 3.0 and eastus["vm_hour"]["Standard_D32s_v5"] == 1.5
    assert eastus["disk_month"]["Premium_LRS"] == {"64": 10.0}  # the disk, not its mount meter
    assert load_prices()["regions"]["westeurope"]["vm_hour"]["Standard_D8ds_v4"] == 0.544  # the bundle stays
    out = diskbench("plan", "--profile", "anf-nfs-scaleout", db=tmp_path / "db.sqlite",
                    env={"XDG_CACHE_HOME": str(tmp_path), "DISKBENCH_PRICES_URL": url})
    assert out.returncode == 0, out.stderr
    text = out.stdout.replace("\n", " ")
    assert "Azure Retail Prices API, eastus (cached" in text and "at least" not in text
