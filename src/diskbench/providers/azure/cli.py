"""The Azure provider's command line: ``diskbench sizes``, and the ``run``/``cleanup`` options."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ...cli.app import App
    from .sizes import SizeInfo

SUBSCRIPTION_HELP = "Azure subscription (default: AZURE_SUBSCRIPTION_ID or the Azure CLI's)."
# column: (right-aligned, drop priority: the highest is dropped first on a narrow terminal)
SIZE_PAGES = "https://learn.microsoft.com/azure/virtual-machines/sizes/"
COLUMNS = {"size": (False, 0), "vCPU": (True, 3), "GiB": (True, 4), "temp GiB": (True, 0),
           "cached IOPS": (True, 0), "cached MB/s": (True, 1), "uncached IOPS": (True, 0),
           "uncached MB/s": (True, 1), "burst IOPS": (True, 2), "burst MB/s": (True, 2), "NVMe": (True, 0),
           "net Mbps": (True, 5), "data disks": (True, 6), "premium": (False, 7), "ephemeral OS": (False, 8),
           "$/h": (True, 0)}


def run_options() -> list[Callable[[click.Command], click.Command]]:
    return [
        click.option("--subscription", help=SUBSCRIPTION_HELP),
        click.option("--ssh-source", metavar="CIDR|any",
                     help="Who may reach the VMs' SSH port (default: your detected public address)."),
    ]


@click.command()
@click.option("--region", default="westeurope", show_default=True,
              help="Region (availability is only known when logged in; prices are the region's).")
@click.option("--family", help="Sizes of a series (Ddsv5, Lsv4) or whose name starts with Standard_<FAMILY> (E, L).")
@click.option("--size", "names", multiple=True, metavar="NAME",
              help="Only these sizes (repeatable, comma-separated; the Standard_ prefix is optional).")
@click.option("--refresh", is_flag=True, help="Read the region's sizes from the SKU API (login needed) and cache them.")
@click.option("--subscription", help="Subscription for --refresh.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True,
              help="Output format.")
@click.pass_obj
def sizes(app: App, region: str, family: str | None, names: tuple[str, ...], refresh: bool, subscription: str | None,
          fmt: str) -> None:
    """Azure VM sizes: storage caps (temp, cached, uncached, burst, NVMe), network, and the hourly price."""
    from ...reports.documents import dumps, to_csv
    from .pricing import load_prices
    from .sizes import region_sizes, save_region

    if refresh:
        from . import skus
        from .errors import arm
        from .session import connect

        with arm(f"reading the sizes of {region}"):
            live = [sku for sku, _ in skus.live_skus(connect(subscription), region)]
        app.ui.line(f"cached {len(live)} size(s) of {region} in {save_region(region, live)}")
    known, source = region_sizes(region)
    chosen = _chosen(list(known.values()), family, names)
    prices = load_prices()["regions"].get(region, {})
    rows = [_row(s, prices) for s in chosen]
    if fmt != "table":
        app.ui.write(dumps({"schema": "diskbench.sizes/1", "region": region, "source": source, "sizes": rows})
                     if fmt == "json" else to_csv(rows, list(rows[0])))
        return
    app.ui.print(_table(rows, region, source, prices))


def _chosen(known: list[SizeInfo], family: str | None, names: tuple[str, ...]) -> list[SizeInfo]:
    """The sizes asked for, in the data's order; an unknown name or family is an error that says what to do."""
    from ...errors import DiskbenchError

    chosen = known
    if family:
        series = f"standard{family.lower()}family"
        chosen = [s for s in chosen if s.family.lower() == series] or \
            [s for s in chosen if s.name.lower().startswith(f"standard_{family.lower()}")]
        if not chosen:
            raise DiskbenchError(f"no size of family {family!r} in diskbench's size data",
                                 hint="give a series such as Ddsv5 or Lsv4, or a letter such as E")
    wanted = [n.strip().lower().removeprefix("standard_") for arg in names for n in arg.split(",") if n.strip()]
    if wanted:
        by_name = {s.name.lower().removeprefix("standard_"): s for s in chosen}
        missing = [n for n in wanted if n not in by_name]
        if missing:
            raise DiskbenchError(f"no size {', '.join(missing)} in diskbench's size data",
                                 hint="check the name with `diskbench sizes --family <series>`, or log in and "
                                      "run `diskbench sizes --refresh`")
        chosen = [by_name[n] for n in dict.fromkeys(wanted)]
    return chosen


def _row(s: SizeInfo, prices: dict[str, Any]) -> dict[str, Any]:
    """A size's capabilities as published, MB/s as Azure writes them (10^6 bytes), with its page."""
    from .pricing import vm_hourly
    from .sizes import family_page

    page, version = family_page(s.family)
    return {"size": s.name, "family": s.family, "vcpus": s.vcpus, "memory_gib": s.memory_gb,
            "temp_disk_gib": s.temp_disk_gb or None, "temp_disk_nvme": s.temp_nvme,
            "cached_iops": s.cached_iops, "cached_mbps": s.cached_mbps, "cache_gib": s.cache_gb,
            "uncached_iops": s.uncached_iops, "uncached_mbps": s.uncached_mbps,
            "burst_iops": s.burst_iops, "burst_mbps": s.burst_mbps,
            "ultra_premium_v2_iops": s.ultra_v2_iops, "ultra_premium_v2_mbps": s.ultra_v2_mbps,
            "nvme_disks": s.nvme_disks, "nvme_gib_each": s.nvme_gb or None, "network_mbps": s.network_mbps,
            "max_nics": s.max_nics, "max_data_disks": s.max_data_disks, "premium_io": s.premium_io,
            "host_caching": s.host_caching, "ephemeral_os_placements": list(s.ephemeral_placements),
            "hyperv_generations": list(s.generations), "disk_controllers": list(s.controllers),
            "architecture": s.architecture or None, "usd_per_hour_linux": vm_hourly(prices, s.name, "linux"),
            "usd_per_hour_windows": vm_hourly(prices, s.name, "windows"), "page": page, "page_version": version}


def _table(rows: list[dict[str, Any]], region: str, source: str, prices: dict[str, Any]) -> Any:
    from ...reports.textable import Col, TextTable

    pages = dict.fromkeys(r["page"].removeprefix(SIZE_PAGES) for r in rows)
    shown = next(iter(pages)) + f" ({rows[0]['page_version']})" if len(pages) == 1 else \
        f"{len(pages)} series pages (`--format json` names each size's page)"
    caption = ["cached IOPS: the limit the cached disks and the temp disk share; burst: 30 min at full credits",
               f"caps: Azure's size pages, {SIZE_PAGES}: {shown}",
               f"prices: Linux pay-as-you-go, {prices.get('source', f'none bundled for {region}')}"]
    columns = [Col(h, right=right, drop=drop, shrink=h == "ephemeral OS") for h, (right, drop) in COLUMNS.items()]
    table = TextTable(columns, title=f"VM sizes for {region} ({source})", caption=caption)
    for r in rows:
        nvme = f"{r['nvme_disks']}x{r['nvme_gib_each']:.0f} GiB" if r["nvme_disks"] else "-"
        temp = f"{r['temp_disk_gib']:g}" if r["temp_disk_gib"] else "-"
        price = r["usd_per_hour_linux"]
        table.add_row(r["size"], str(r["vcpus"]), f"{r['memory_gib']:g}", temp, _n(r["cached_iops"]),
                      _n(r["cached_mbps"]), _n(r["uncached_iops"]), _n(r["uncached_mbps"]), _n(r["burst_iops"]),
                      _n(r["burst_mbps"]), nvme, _n(r["network_mbps"]), str(r["max_data_disks"]),
                      "yes" if r["premium_io"] else "no", ", ".join(r["ephemeral_os_placements"]) or "-",
                      "-" if price is None else f"{price:.3f}")
    return table


def _n(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def commands() -> list[Any]:
    return [sizes]
