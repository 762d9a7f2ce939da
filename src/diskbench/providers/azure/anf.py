"""Azure NetApp Files for a scale-out run: the profile's ``shared: anf:`` block, and the account,
capacity pool and volume made for the run and deleted with it.

The volume lives in the run's resource group, on a subnet of the run's VNet delegated to
``Microsoft.NetApp/volumes`` (ANF requires one), exported to the VNet's benchmark subnet only.
A capacity pool is bought in whole TiB; its service level fixes the throughput per TiB, which
the profile's schema checks against what the profile asks for. Everything is deleted volume
first, then pool, then account (ANF refuses to delete a pool that holds a volume), before the group goes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from ...profile.shared import VolumeSpec
from .netspec import SUBNET_PREFIX

if TYPE_CHECKING:
    from .session import AzureSession

MIB_PER_TIB = {"Standard": 16.0, "Premium": 64.0, "Ultra": 128.0}  # NetApp service levels, per provisioned TiB


class AnfVolume(VolumeSpec):
    """An Azure NetApp Files volume diskbench creates for the run (and deletes with it)."""

    service_level: Literal["Standard", "Premium", "Ultra"] = "Premium"
    size_gib: int = Field(4096, ge=50, le=102400, description="volume quota in GiB (pool >= 1 TiB)")
    throughput_mibps: float | None = Field(
        None, gt=0, description="manual QoS throughput; default: the service level's (auto QoS)")
    protocol: Literal["NFSv3", "NFSv4.1"] = "NFSv3"

    @property
    def pool_tib(self) -> int:
        """The capacity pool: whole TiB, at least 1, large enough for the volume."""
        return max(1, math.ceil(self.size_gib / 1024))

    @property
    def ceiling_mibps(self) -> float:
        """The most the service level gives: the pool's TiB (manual QoS) or the volume's (auto QoS)."""
        tib = self.pool_tib if self.throughput_mibps is not None else self.size_gib / 1024
        return tib * MIB_PER_TIB[self.service_level]

    @model_validator(mode="after")
    def _throughput(self) -> AnfVolume:
        if self.throughput_mibps is not None and self.throughput_mibps > self.ceiling_mibps:
            raise ValueError(f"{self.throughput_mibps:g} MiB/s is more than a {self.pool_tib} TiB "
                             f"{self.service_level} pool gives ({self.ceiling_mibps:g} MiB/s); raise size_gib "
                             "or the service level")
        return self


ANF_SUBNET = "anf"
ANF_SUBNET_PREFIX = "10.213.1.0/24"
ANF_DELEGATION = "Microsoft.NetApp/volumes"
# Approximate pay-as-you-go list prices per provisioned GiB and hour (East US, 2025); ANF bills the pool.
USD_PER_GIB_HOUR = {"Standard": 0.000202, "Premium": 0.000403, "Ultra": 0.000538}
GIB = 1024**3


def hourly_usd(spec: AnfVolume) -> float:
    return spec.pool_tib * 1024 * USD_PER_GIB_HOUR[spec.service_level]


def cost_line(spec: AnfVolume) -> str:
    """One line: what the volume is and what it costs per hour (the pool is billed, not the volume)."""
    return (f"anf: {spec.service_level} pool {spec.pool_tib} TiB, volume {spec.size_gib} GiB, up to "
            f"{spec.throughput_mibps or spec.ceiling_mibps:g} MiB/s; ~${hourly_usd(spec):.2f}/h "
            "(approximate list price)")


def online_problems(session: AzureSession, spec: AnfVolume, region: str) -> list[str]:
    """The subscription's NetApp quota against the pool (what the quota API says, when it says)."""
    problems = []
    for item in session.netapp.net_app_resource_quota_limits.list(region):
        data = item.as_dict() if hasattr(item, "as_dict") else dict(item)
        name = str(data.get("name", "")).rsplit("/", 1)[-1]
        props = data.get("properties", data)
        limit, used = props.get("current", props.get("default")), props.get("usage") or 0
        if name == "totalTiBsPerSubscription" and limit is not None and used + spec.pool_tib > limit:
            problems.append(f"anf: {spec.pool_tib} TiB more would exceed the subscription's NetApp quota "
                            f"({used} of {limit} TiB used in {region}); ask for more with a support request")
    return problems


def bodies(spec: AnfVolume, region: str, tags: dict[str, str], subnet_id: str,
           token: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Account, pool and volume request bodies."""
    account = {"location": region, "tags": tags, "properties": {}}
    pool = {"location": region, "tags": tags, "properties": {
        "serviceLevel": spec.service_level, "size": spec.pool_tib * 1024 * GIB,
        "qosType": "Manual" if spec.throughput_mibps is not None else "Auto"}}
    v3 = spec.protocol == "NFSv3"
    volume: dict[str, Any] = {"location": region, "tags": tags, "properties": {
        "creationToken": token, "serviceLevel": spec.service_level, "usageThreshold": spec.size_gib * GIB,
        "subnetId": subnet_id, "protocolTypes": [spec.protocol],
        "exportPolicy": {"rules": [{"ruleIndex": 1, "allowedClients": SUBNET_PREFIX, "unixReadOnly": False,
                                    "unixReadWrite": True, "nfsv3": v3, "nfsv41": not v3,
                                    "hasRootAccess": True}]}}}
    if spec.throughput_mibps is not None:
        volume["properties"]["throughputMibps"] = spec.throughput_mibps
    return account, pool, volume


class AnfResources:
    """The run's account, pool and volume; ``delete`` removes what exists, innermost first."""

    def __init__(self, session: AzureSession, group: str, region: str, tags: dict[str, str], run_id: str,
                 line: Callable[[str], None]) -> None:
        self.session, self.group, self.region, self.tags, self.line = session, group, region, tags, line
        self.account, self.pool, self.volume = f"anf-{run_id[-8:]}", "pool1", "vol1"
        self.token = f"diskbench-{run_id[-8:]}"
        self.made: list[str] = []

    def create(self, spec: AnfVolume, vnet: str) -> str:
        """The volume's export, ``ADDRESS:/TOKEN``, once account, pool and volume exist."""
        net = self.session.network
        subnet = net.subnets.begin_create_or_update(self.group, vnet, ANF_SUBNET, {"properties": {
            "addressPrefix": ANF_SUBNET_PREFIX,
            "delegations": [{"name": "netapp", "properties": {"serviceName": ANF_DELEGATION}}]}}).result()
        account, pool, volume = bodies(spec, self.region, self.tags, subnet.id, self.token)
        anf = self.session.netapp
        self.line(cost_line(spec))
        self.line(f"anf: creating account {self.account}, {spec.service_level} pool of {spec.pool_tib} TiB")
        anf.accounts.begin_create_or_update(self.group, self.account, account).result()
        self.made.append("account")
        anf.pools.begin_create_or_update(self.group, self.account, self.pool, pool).result()
        self.made.append("pool")
        self.line(f"anf: creating volume {self.volume} ({spec.size_gib} GiB, {spec.protocol})")
        anf.volumes.begin_create_or_update(self.group, self.account, self.pool, self.volume, volume).result()
        self.made.append("volume")
        got = anf.volumes.get(self.group, self.account, self.pool, self.volume)
        targets = got.mount_targets or []
        if not targets or not targets[0].ip_address:
            from ...errors import ExecutionError

            raise ExecutionError(f"anf: volume {self.volume} has no mount target address")
        export = f"{targets[0].ip_address}:/{got.creation_token or self.token}"
        self.line(f"anf: volume ready at {export}")
        return export

    def delete(self) -> None:
        anf = self.session.netapp
        if "volume" in self.made:
            self.line(f"anf: deleting volume {self.volume}")
            anf.volumes.begin_delete(self.group, self.account, self.pool, self.volume).result()
            self.made.remove("volume")
        if "pool" in self.made:
            anf.pools.begin_delete(self.group, self.account, self.pool).result()
            self.made.remove("pool")
        if "account" in self.made:
            anf.accounts.begin_delete(self.group, self.account).result()
            self.made.remove("account")
