"""diskbench's size data against the tests' own transcription of Azure's size pages (size_pages.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diskbench.providers.azure.sizes import DATA, bundled_sizes, family_page, lookup

from ...conftest import diskbench
from .size_pages import CACHE_GIB, FEATURES, NVME, PAGES, all_sizes, page_of

FAMILIES = json.loads(DATA.read_text())["families"]


@pytest.mark.parametrize("name", all_sizes())
def test_size_matches_its_page(name: str) -> None:
    key, _, _ = page_of(name)
    page = PAGES[key][2][name]
    s = lookup(name)
    assert s is not None, f"{name} is missing from the size data"
    got = (s.vcpus, s.memory_gb, round(s.temp_disk_gb), s.max_data_disks, s.uncached_iops, s.uncached_mbps,
           s.burst_iops, s.burst_mbps, s.network_mbps)
    assert got == tuple(page), f"{name}: data {got} != page {tuple(page)}"
    premium, generations, nvme_only, ephemeral, arm = FEATURES[key]
    assert s.premium_io is premium
    assert s.generations == generations.split(",")
    assert s.controllers == (["NVMe"] if nvme_only else ["SCSI"])
    assert s.architecture == ("Arm64" if arm else "x64")
    assert bool(s.ephemeral_placements) is ephemeral
    count, each = NVME.get(name, (0, 0.0))
    assert s.nvme_disks == count and s.nvme_gb == pytest.approx(each, abs=1.0)
    if name in CACHE_GIB:
        assert s.cache_gb == CACHE_GIB[name]


@pytest.mark.parametrize("key", sorted(PAGES))
def test_every_family_names_its_page_and_date(key: str) -> None:
    folder, date, sizes = PAGES[key]
    family = next(iter(sizes)) and lookup(next(iter(sizes))).family  # type: ignore[union-attr]
    url, version = family_page(family)
    assert url == f"https://learn.microsoft.com/azure/virtual-machines/sizes/{folder}/{key}-series"
    assert f"ms.date {date}" in version and "commit" in version
    assert FAMILIES[family]["read"] == "2026-11-25"


def test_the_sizes_the_issue_named_are_there() -> None:
    names = set(bundled_sizes())
    for wanted in ("Standard_D32s_v4", "Standard_D8_v5", "Standard_E8_v5", "Standard_E8as_v5", "Standard_E8ads_v5",
                   "Standard_D8ads_v5", "Standard_E8s_v6", "Standard_E8ds_v6", "Standard_D8as_v6",
                   "Standard_D8ads_v6", "Standard_E8as_v6", "Standard_E8ads_v6", "Standard_D8ps_v6",
                   "Standard_E8ps_v6", "Standard_L8as_v4", "Standard_L8aos_v4"):
        assert wanted in names, wanted
    assert len(FAMILIES) >= len(PAGES) and len(names) > 400


def test_sizes_command_shows_caps_price_and_page(tmp_path: Path) -> None:
    out = diskbench("sizes", "--size", "D32s_v4,Standard_L8s_v4", "--format", "json", db=tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    rows = {r["size"]: r for r in json.loads(out.stdout)["sizes"]}
    d32 = rows["Standard_D32s_v4"]
    assert (d32["uncached_iops"], d32["burst_mbps"], d32["network_mbps"]) == (51200, 1600, 16000)
    assert d32["usd_per_hour_linux"] and d32["page"].endswith("/general-purpose/dsv4-series")
    l8 = rows["Standard_L8s_v4"]
    assert l8["nvme_disks"] == 4 and l8["disk_controllers"] == ["NVMe"] and l8["usd_per_hour_linux"]
    table = diskbench("sizes", "--family", "Ddsv5", db=tmp_path / "db.sqlite", env={"COLUMNS": "220"})
    assert table.returncode == 0 and "Standard_D48ds_v5" in table.stdout and "Standard_D48s_v5" not in table.stdout
    assert " 1800 " in table.stdout and "ddsv5-series (ms.date 07/29/2024" in table.stdout.replace("\n", " ")


def test_unknown_size_or_family_is_one_line(tmp_path: Path) -> None:
    for args in (("--size", "D33s_v5"), ("--family", "Q")):
        out = diskbench("sizes", *args, db=tmp_path / "db.sqlite")
        assert out.returncode != 0 and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_a_refreshed_region_is_read_once_per_version_of_its_file(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's VMs look their size up while they are created in parallel: the cached SKU answer of the
    region (`sizes --refresh`) is parsed once, not by each of them, and read again once it changes."""
    import os

    from diskbench.providers.azure.sizes import bundled_skus, lookup, save_region

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = save_region("westeurope", list(bundled_skus().values()))
    first = lookup("Standard_E8ds_v4", "westeurope")
    assert first is not None and lookup("Standard_E8ds_v4", "westeurope") is first
    entries = [s for s in bundled_skus().values() if s["name"] != "Standard_E8ds_v4"]
    save_region("westeurope", entries)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # a later version
    assert lookup("Standard_E8ds_v4", "westeurope") is None
