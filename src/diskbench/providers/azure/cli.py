"""Commands and helpers for Azure machines: sizes, costs, the provider of a run, cleanup."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from rich.table import Table

from .capabilities import region_sizes, save_region
from .cli import App, cli, pass_app
from .errors import DiskbenchError
from .store import Store


@cli.command()
@click.option("--region", default="westeurope", show_default=True,
              help="Region (availability is only known when logged in).")
@click.option("--family", help="Only sizes whose name starts with Standard_<FAMILY>, e.g. E or L.")
@click.option("--refresh", is_flag=True, help="Read the region's sizes from the SKU API (login needed) and cache them.")
@click.option("--subscription", help="Subscription for --refresh.")
@pass_app
def sizes(app: App, region: str, family: str | None, refresh: bool, subscription: str | None) -> None:
    """VM sizes and their storage capabilities (temp disk, cached and uncached limits, NVMe)."""
    if refresh:
        from .azure import skus
        from .azure.session import connect

        live = [info for info, _ in skus.region_sizes(connect(subscription), region).values()]
        app.ui.line(f"cached {len(live)} size(s) of {region} in {save_region(region, live)}")
    known, source = region_sizes(region)
    table = Table(title=f"VM sizes for {region} ({source})", title_justify="left")
    for head in ("size", "vCPU", "GiB", "temp GiB", "cached+temp IOPS", "cached MB/s", "uncached IOPS",
                 "uncached MB/s", "premium", "ephemeral OS", "NVMe", "data disks"):
        table.add_column(head, justify="left" if head in ("size", "premium", "ephemeral OS") else "right")
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



def costs(app: App, p: Any, refresh_prices: bool) -> None:
    """VM-minutes and estimated cost per machine, under the plan table."""
    from .pricing import estimate, load_prices, refresh

    if refresh_prices:
        by_region: dict[str, set[str]] = {}
        for m in p.profile.profile.machines:
            by_region.setdefault(m.region, set()).add(m.size)
        for region, names in by_region.items():
            got = refresh(region, sorted(names))
            app.ui.line(f"prices: {len(got)} of {len(names)} size(s) refreshed for {region}")
    prices = load_prices()
    costs = estimate(p, prices)
    table = Table(title="machines and estimated cost", title_justify="left",
                  caption=f"prices: {prices['source']}", caption_justify="left")
    for head in ("machine", "size", "VM-minutes", "estimate USD", "note"):
        table.add_column(head, justify="right" if head in ("VM-minutes", "estimate USD") else "left")
    total = 0.0
    for c in costs:
        total += c.usd or 0.0
        table.add_row(c.machine, c.size, f"{c.vm_minutes:.0f}", "-" if c.usd is None else f"{c.usd:.2f}", c.note)
    table.add_row("total", "", f"{sum(c.vm_minutes for c in costs):.0f}", f"{total:.2f}", "")
    app.ui.print(table)


def provider_factory(app: App, store: Store, subscription: str | None, source: str | None) -> Callable[[str], Any]:
    """Log in (or fail with how to) before anything else; the provider itself is made per run."""
    from .azure.groups import Journal
    from .azure.netspec import ssh_source
    from .azure.provider import AzureProvider
    from .azure.session import connect, detect_public_address

    session = connect(subscription)
    cidr = ssh_source(source) if source else detect_public_address()
    journal = Journal(store.path.parent / "azure-journal.jsonl")
    return lambda run_id: AzureProvider(session, journal, run_id, store.path.parent / "keys",
                                        ssh_source=cidr, line=app.ui.line)


@cli.command()
@click.option("--older-than", "older_than", metavar="DURATION",
              help="Also delete diskbench groups created longer ago than this (e.g. 6h), expired or not.")
@click.option("--run", "run_ref", metavar="RUN_ID", help="Delete what this run created (`last` works).")
@click.option("--dry-run", is_flag=True, help="List what would be deleted, delete nothing.")
@click.option("--subscription", help="Subscription (default: AZURE_SUBSCRIPTION_ID or the Azure CLI's).")
@pass_app
def cleanup(app: App, older_than: str | None, run_ref: str | None, dry_run: bool, subscription: str | None) -> None:
    """Delete diskbench's Azure resource groups that are past their expiry or in the journal."""
    from datetime import timedelta

    from .azure.groups import Journal, delete_group, find_leftovers
    from .azure.session import connect
    from .units import parse_duration

    store = app.store()
    run_id = store.get_run(run_ref)["id"] if run_ref else None
    age = timedelta(seconds=parse_duration(older_than)) if older_than else None
    session = connect(subscription)
    journal = Journal(store.path.parent / "azure-journal.jsonl")
    leftovers = find_leftovers(session, journal, older_than=age, run_id=run_id)
    if not leftovers:
        app.ui.print("nothing to clean up")
        return
    for group in leftovers:
        if dry_run:
            app.ui.print(f"would delete {group.name} ({group.reason})")
            continue
        app.ui.line(f"deleting {group.name} ({group.reason})")
        delete_group(session, journal, group.name)
        app.ui.print(f"deleted {group.name}")
