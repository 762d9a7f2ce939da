"""Cost estimates offline, and prices refreshed from a (local) Retail Prices API with paging."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from diskbench.plan import build_plan
from diskbench.profile import load_profile
from diskbench.providers.azure.pricing import estimate, load_prices, refresh

from ...conftest import diskbench


def test_estimate_covers_every_machine() -> None:
    costs = {c.machine: c for c in estimate(build_plan(load_profile("e8-family")))}
    assert len(costs) == 7 and all(c.usd and c.usd > 0 for c in costs.values())
    assert all(c.vm_minutes > 6 for c in costs.values())
    premium = {c.machine: c for c in estimate(build_plan(load_profile("d8ds-premium")))}
    assert premium["d8ds-v4-premium"].usd > costs["e8ds-v4-temp"].usd  # four 1 TiB disks and longer jobs


@pytest.fixture
def prices_api() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            seen.append(self.path)
            query = parse_qs(urlparse(self.path).query)
            page = query.get("page", ["1"])[0]
            items = [{"productName": "Virtual Machines Edsv4 Series Windows", "skuName": "E8ds v4",
                      "retailPrice": 9.9}]
            if page == "1":
                body = {"Items": items, "NextPageLink": f"http://127.0.0.1:{port}/api?page=2"}
            else:
                body = {"Items": [{"productName": "Virtual Machines Edsv4 Series", "skuName": "E8ds v4",
                                   "meterName": "E8ds v4", "retailPrice": 0.7}], "NextPageLink": None}
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


def test_refresh_reads_every_page_skips_windows_and_caches(prices_api: tuple[str, list[str]], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    url, seen = prices_api
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert refresh("westeurope", ["Standard_E8ds_v4"], url=url) == {"Standard_E8ds_v4": 0.7}
    assert len(seen) == 2 and "armSkuName+eq+%27Standard_E8ds_v4%27" in seen[0]
    assert load_prices()["vm_hour"]["Standard_E8ds_v4"] == 0.7
    out = diskbench("plan", "--profile", "e8-family", db=tmp_path / "db.sqlite",
                    env={"XDG_CACHE_HOME": str(tmp_path), "DISKBENCH_PRICES_URL": url})
    assert out.returncode == 0 and "Azure Retail Prices API, westeurope (cached)" in out.stdout.replace("\n", " ")
