"""The Azure provider's command line: ``diskbench sizes``, and the ``run``/``cleanup`` options."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ...cli.app import App

SUBSCRIPTION_HELP = "Azure subscription (default: AZURE_SUBSCRIPTION_ID or the Azure CLI's)."


def run_options() -> list[Callable[[click.Command], click.Command]]:
    return [
        click.option("--subscription", help=SUBSCRIPTION_HELP),
        click.option("--ssh-source", metavar="CIDR|any",
                     help="Who may reach the VMs' SSH port (default: your detected public address)."),
    ]


@click.command()
@click.option("--region", default="westeurope", show_default=True,
              help="Region (availability is only known when logged in).")
@click.option("--family", help="Only sizes whose name starts with Standard_<FAMILY>, e.g. E or L.")
@click.option("--refresh", is_flag=True, help="Read the region's sizes from the SKU API (login needed) and cache them.")
@click.option("--subscription", help="Subscription for --refresh.")
@click.pass_obj
def sizes(app: App, region: str, family: str | None, refresh: bool, subscription: str | None) -> None:
    """Azure VM sizes and their storage capabilities (temp disk, cached and uncached limits, NVMe)."""
    from ...errors import DiskbenchError
    from ...reports.textable import Col, TextTable
    from .sizes import region_sizes, save_region

    if refresh:
        from . import skus
        from .errors import arm
        from .session import connect

        with arm(f"reading the sizes of {region}"):
            live = [info for info, _ in skus.region_sizes(connect(subscription), region).values()]
        app.ui.line(f"cached {len(live)} size(s) of {region} in {save_region(region, live)}")
    known, source = region_sizes(region)
    # the numbers are never cut: on a narrow terminal the less used columns give way, and say so
    drop = {"vCPU": 2, "GiB": 3, "premium": 4, "ephemeral OS": 6, "data disks": 5, "cached MB/s": 1,
            "uncached MB/s": 1}
    table = TextTable([Col(h, right=h not in ("size", "premium", "ephemeral OS"), drop=drop.get(h, 0),
                           shrink=h == "ephemeral OS")
                       for h in ("size", "vCPU", "GiB", "temp GiB", "cached+temp IOPS", "cached MB/s",
                                 "uncached IOPS", "uncached MB/s", "premium", "ephemeral OS", "NVMe", "data disks")],
                      title=f"VM sizes for {region} ({source})",
                      caption=["cached+temp: the limit the cached disks and the temp disk share"])
    shown = 0
    for s in known.values():
        if family and not s.name.lower().startswith(f"standard_{family.lower()}"):
            continue
        shown += 1
        table.add_row(s.name, str(s.vcpus), f"{s.memory_gb:g}", f"{s.temp_disk_gb:g}" if s.temp_disk_gb else "-",
                      _n(s.cached_iops), _n(s.cached_mbps), _n(s.uncached_iops), _n(s.uncached_mbps),
                      "yes" if s.premium_io else "no", ", ".join(s.ephemeral_placements) or "-",
                      f"{s.nvme_disks}x{s.nvme_gb:.0f} GiB" if s.nvme_disks else "-", str(s.max_data_disks))
    if not shown:
        raise DiskbenchError(f"no size of family {family!r} in diskbench's size data")
    app.ui.print(table)


def _n(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def commands() -> list[Any]:
    return [sizes]
