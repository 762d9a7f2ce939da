"""Pre-flight against the live subscription: the Resource SKUs and usage (quota) APIs.

The offline checks (``preflight.check_machine``) run on the live capabilities, merged over the
bundled size pages (the API's figures win; the ``Docs*`` ones only the pages publish stay); on top,
a size must be offered in the region (and zone) without restrictions for this subscription, and the
vCPUs of each family must fit the family's and the region's remaining quota.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..base import Problem
from .preflight import check_machine
from .schema import Machine
from .session import AzureSession
from .sizes import SizeInfo, merged_sku


def _as_dict(sku: Any) -> dict[str, Any]:
    return {"name": sku.name, "family": sku.family or "",
            "capabilities": {c.name: c.value for c in (sku.capabilities or [])}}


def live_skus(session: AzureSession, region: str) -> list[tuple[dict[str, Any], list[Any]]]:
    """Every VM size offered in ``region`` as the SKU API describes it, merged over the bundled size
    pages, with its restrictions for this subscription."""
    out = []
    for sku in session.compute.resource_skus.list(filter=f"location eq '{region}'"):
        if sku.resource_type == "virtualMachines":
            out.append((merged_sku(_as_dict(sku)), list(sku.restrictions or [])))
    return out


def region_sizes(session: AzureSession, region: str) -> dict[str, tuple[SizeInfo, list[Any]]]:
    """Every VM size offered in ``region``: its capabilities and restrictions."""
    return {sku["name"].lower(): (SizeInfo.from_sku(sku), restrictions)
            for sku, restrictions in live_skus(session, region)}


def _restricted(restrictions: list[Any], zone: str | None) -> str | None:
    for r in restrictions:
        if r.reason_code != "NotAvailableForSubscription":
            continue
        zones = [z for info in [r.restriction_info] if info for z in (info.zones or [])]
        if r.type == "Location" or (r.type == "Zone" and zone and zone in zones):
            return f"{r.type.lower()} restriction ({r.reason_code})"
    return None


def online_problems(session: AzureSession, machines: list[Machine],
                    seen: dict[str, SizeInfo] | None = None) -> list[Problem]:
    """Problems against the subscription; ``seen`` collects the live capabilities of each size used."""
    problems: list[Problem] = []
    by_region: dict[str, list[Machine]] = defaultdict(list)
    for m in machines:
        by_region[m.region].append(m)
    for region, group in by_region.items():
        sizes = region_sizes(session, region)
        need: dict[str, int] = defaultdict(int)
        for m in group:
            found = sizes.get(m.size.lower())
            if found is None:
                problems.append(Problem(m.name, f"{m.size} is not offered in {region}",
                                        "pick another region or size (`diskbench sizes --region ...`)"))
                continue
            info, restrictions = found
            if seen is not None:
                seen[info.name] = info
            why = _restricted(restrictions, m.zone)
            if why:
                problems.append(Problem(m.name, f"{m.size} is not available to this subscription in {region}"
                                        f"{' zone ' + m.zone if m.zone else ''}: {why}",
                                        "try another zone or region, or ask Azure support to enable it"))
            problems += check_machine(m, info)
            need[info.family] += info.vcpus
            need["cores"] += info.vcpus
        usage = {u.name.value: u for u in session.compute.usage.list(region)}
        for family, vcpus in need.items():
            u = usage.get(family)
            if u is not None and u.current_value + vcpus > u.limit:
                label = "regional vCPUs" if family == "cores" else f"{family} vCPUs"
                problems.append(Problem(region, f"{label}: {vcpus} needed, {u.limit - u.current_value} of "
                                        f"{u.limit} free", "request more quota in the portal (Usage + quotas) "
                                        "or run fewer machines at once"))
    return problems
