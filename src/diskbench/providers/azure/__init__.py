"""The Azure provider: VM sizes and prices, pre-flight, tagged resource groups, VMs, teardown.

Importing this package is cheap: the Azure SDK is imported only when a run, ``sizes
--refresh`` or ``cleanup`` talks to Azure.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..base import MachineCost, Problem, Provider, ProviderRun, RunContext

if TYPE_CHECKING:
    import click
    from pydantic import BaseModel

    from ...advice import Advice
    from ...attribution.limit import Limit
    from ...check import Check
    from ...executors.base import Executor
    from ...plan import Plan
    from ...platforms.base import DeviceMap
    from ...profile import MachineBase
    from ...profile.targets import TargetModel

JOURNAL = "azure-journal.jsonl"


class AzureProvider(Provider):
    name: ClassVar[str] = "azure"
    default_for_machines: ClassVar[bool] = True
    creates_machines: ClassVar[bool] = True

    def machine_schema(self) -> type[BaseModel]:
        from .schema import Machine

        return Machine

    def shared_volumes(self) -> dict[str, type[BaseModel]]:
        """``shared: anf:``: an Azure NetApp Files volume made for the run."""
        from .anf import AnfVolume

        return {"anf": AnfVolume}

    def plan_advice(self, plan: Plan) -> list[Advice]:
        """What ``plan`` says of this provider's part of a plan beyond the generic warnings: a NetApp
        volume's throughput limit beside what its clients can push, and a warning when the volume caps
        them; a VM size's cap that stops a job before the disk cap it means to measure. A warning has
        no reason; a note has one (``planning.advice`` sorts them as its own)."""
        from . import anf, hidden_caps

        return [*anf.plan_advice(plan), *hidden_caps.plan_advice(plan)]

    def platform(self, machine: MachineBase) -> str:
        return str(getattr(machine, "os", "linux"))

    def spec(self, machine: MachineBase) -> dict[str, Any]:
        spec = super().spec(machine)
        if spec.get("os") == "linux":
            del spec["os"]  # Linux machines keep the testbed keys they had before Windows existed
        return spec

    def device_map(self) -> DeviceMap:
        from .devices import DEVICE_MAP

        return DEVICE_MAP

    def doctor(self, online: bool) -> list[Check]:
        """Azure login: where credentials would come from (offline), or a real token (``online``)."""
        import json
        import os

        from ...check import Check

        config = Path(os.environ.get("AZURE_CONFIG_DIR", Path.home() / ".azure"))
        env = [k for k in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE")
               if os.environ.get(k)]
        try:
            subs = json.loads((config / "azureProfile.json").read_text(encoding="utf-8-sig")).get("subscriptions", [])
        except (OSError, ValueError):
            subs = []
        fix = "az login (or AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_CLIENT_SECRET); needed only for Azure machines"
        if not online:
            found = (f"environment ({', '.join(env)})" if env else
                     f"Azure CLI login, {len(subs)} subscription(s) in {config}" if subs else "")
            return [Check("azure", bool(found), found or "no login found (not checked online; --online does)",
                          "" if found else fix, optional=True)]
        from azure.identity import DefaultAzureCredential

        from .session import ARM_SCOPE

        try:
            DefaultAzureCredential().get_token(ARM_SCOPE)
        except Exception as exc:  # noqa: BLE001 - any failure to get a token is "not logged in"
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:120]
            return [Check("azure", False, f"no token: {first}", fix, optional=True)]
        return [Check("azure", True, "a token for Azure Resource Manager was issued (--online)", optional=True)]

    def offline_problems(self, machines: list[MachineBase]) -> list[Problem]:
        from .preflight import check_machines
        from .schema import Machine

        return check_machines([m for m in machines if isinstance(m, Machine)])

    def describe(self, machine: MachineBase) -> tuple[str, str]:
        from .schema import Machine

        assert isinstance(machine, Machine)
        os_disk = machine.os_disk
        parts = [f"OS ephemeral on {os_disk.ephemeral}" if os_disk.ephemeral
                 else f"OS {os_disk.type} cache={os_disk.caching}"]
        parts += [f"{d.count}x {d.type} {d.size_gb}G cache={d.caching}" for d in machine.data_disks]
        return machine.size, ", ".join(parts)

    def costs(self, plan: Plan, *, refresh: bool, line: Callable[[str], None]) -> tuple[list[MachineCost], str]:
        from .pricing import estimate, load_prices
        from .pricing import refresh as refresh_prices
        from .schema import Machine

        if refresh:
            by_region: dict[str, set[str]] = {}
            for m in plan.profile.profile.machine_entries:
                if isinstance(m, Machine):
                    by_region.setdefault(m.region, set()).add(m.size)
            for region, names in by_region.items():
                got = refresh_prices(region, sorted(names))
                line(f"prices: {len(got)} of {len(names)} size(s) refreshed for {region}")
        prices = load_prices()
        return estimate(plan, prices), f"prices: {prices['source']}"

    def host_facts(self, ex: Executor) -> dict[str, Any]:
        from .facts import azure_facts

        return azure_facts(ex)

    def limits(self, machine: MachineBase | None, target: TargetModel) -> list[Limit]:
        from .limits.bounds import limits_for
        from .schema import Machine

        return limits_for(machine, target) if isinstance(machine, Machine) else []

    def run_options(self) -> list[Callable[[click.Command], click.Command]]:
        from .cli import run_options

        return run_options()

    def commands(self) -> list[click.Command]:
        from .cli import commands

        return commands()

    def start(self, ctx: RunContext) -> ProviderRun:
        """Log in (or fail with how to) before the run is recorded; the run itself is per run id."""
        from ..network import detect_public_address, ssh_source
        from .groups import Journal
        from .provider import AzureRun
        from .session import connect

        session = connect(ctx.options.get("subscription"))
        source = ctx.options.get("ssh_source")
        cidr = ssh_source(source) if source else detect_public_address()
        journal = Journal(ctx.state_dir / JOURNAL)
        return AzureRun(session, journal, ctx.run_id, ctx.state_dir / "keys", ssh_source=cidr, line=ctx.line)

    def configured(self, options: dict[str, Any], *, state_dir: Path) -> str | None:
        """Without a subscription (--subscription, AZURE_SUBSCRIPTION_ID or an `az login`) there is nowhere
        to look; whether the credentials work shows when ``cleanup`` logs in."""
        from .session import default_subscription

        if default_subscription(options.get("subscription")):
            return None
        return ("not logged in: no subscription found; run `az login`, or set AZURE_SUBSCRIPTION_ID with "
                "AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET")

    def cleanup(self, options: dict[str, Any], *, state_dir: Path, run_id: str | None, older_than: float | None,
                dry_run: bool, line: Callable[[str], None]) -> list[str]:
        from datetime import timedelta

        from .errors import arm
        from .groups import Journal, delete_group, find_leftovers
        from .session import connect

        session = connect(options.get("subscription"))
        journal = Journal(state_dir / JOURNAL)
        age = timedelta(seconds=older_than) if older_than is not None else None
        done = []
        with arm("listing diskbench's resource groups"):
            leftovers = find_leftovers(session, journal, older_than=age, run_id=run_id)
        for group in leftovers:
            if dry_run:
                done.append(f"would delete {group.name} ({group.reason})")
                continue
            line(f"deleting {group.name} ({group.reason})")
            with arm(f"deleting {group.name}"):
                delete_group(session, journal, group.name)
            done.append(f"deleted {group.name}")
        return done
