"""Azure NetApp Files for a scale-out run: the profile's ``shared: anf:`` block, and the account,
capacity pool and volume made for the run and deleted with it.

The volume lives in the run's resource group, on a subnet of the run's VNet delegated to
``Microsoft.NetApp/volumes`` (ANF requires one), exported to the VNet's benchmark subnet only.
A capacity pool is bought in whole TiB; its service level fixes the throughput per TiB. With
auto QoS a volume gets its quota times that rate; with manual QoS the pool's TiB times that rate
is shared out, each volume given its own ``throughputMibps``. The schema refuses what Azure
refuses, and ``plan`` sets the volume's limit beside what the clients' network can carry
(:func:`plan_advice`). Everything is deleted volume first, then pool, then account (ANF refuses to
delete a pool that holds a volume), before the group goes.

Azure's figures, from its pages (read 2026-11-25):
https://learn.microsoft.com/azure/azure-netapp-files/azure-netapp-files-service-levels (Standard 16,
Premium 64, Ultra 128 MiB/s per provisioned TiB; manual QoS: the volumes of a pool share at most
pool TiB x that rate), https://learn.microsoft.com/azure/azure-netapp-files/azure-netapp-files-resource-limits
(pool 1 TiB to 2,048 TiB; a regular volume at most 100 TiB; a manual QoS volume 1 to 4,500 MiB/s; 25 TiB
of capacity per subscription and region unless raised), and
https://learn.microsoft.com/azure/azure-netapp-files/azure-netapp-files-performance-considerations
(4,500 MiB/s is the most a regular volume was seen to give, whatever its auto QoS quota promises).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from ...advice import Advice
from ...profile.shared import VolumeSpec
from .netspec import SUBNET_PREFIX

if TYPE_CHECKING:
    from ...plan import Plan
    from .session import AzureSession

MIB_PER_TIB = {"Standard": 16.0, "Premium": 64.0, "Ultra": 128.0}  # NetApp service levels, per provisioned TiB
REGULAR_VOLUME_MAX_MIBPS = 4500.0  # the most a manual QoS volume is assigned, and a regular volume gives
MAX_POOL_TIB = 2048
MAX_REGULAR_GIB = 102400  # 100 TiB: a regular volume's largest quota
DEFAULT_QUOTA_TIB = 25  # NetApp capacity per subscription and region, unless a support request raised it


class AnfVolume(VolumeSpec):
    """An Azure NetApp Files volume diskbench creates for the run (and deletes with it)."""

    service_level: Literal["Standard", "Premium", "Ultra"] = "Premium"
    size_gib: int = Field(4096, ge=50, le=MAX_REGULAR_GIB, description="volume quota in GiB (a regular volume: at most "
                          "100 TiB)")
    qos: Literal["auto", "manual"] | None = Field(
        None, description="the pool's QoS type: auto (the volume gets size_gib x the service level's MiB/s per "
        "TiB) or manual (it gets throughput_mibps from the pool's share); default: manual when throughput_mibps "
        "is given, else auto")
    throughput_mibps: float | None = Field(
        None, ge=1, description="manual QoS: the volume's throughput limit, at most the pool's TiB x the "
        "service level's MiB/s per TiB and 4,500 (default: that much)")
    pool_size_tib: int | None = Field(
        None, ge=1, le=MAX_POOL_TIB, description="the capacity pool in TiB (default: the smallest that holds "
        "the volume); with manual QoS a larger pool gives more throughput to share")
    protocol: Literal["NFSv3", "NFSv4.1"] = "NFSv3"

    @property
    def manual(self) -> bool:
        return self.qos == "manual" or (self.qos is None and self.throughput_mibps is not None)

    @property
    def qos_type(self) -> str:
        """The pool's ``qosType`` as ARM spells it."""
        return "Manual" if self.manual else "Auto"

    @property
    def pool_tib(self) -> int:
        """The capacity pool: whole TiB, at least 1, large enough for the volume."""
        return self.pool_size_tib or max(1, math.ceil(self.size_gib / 1024))

    @property
    def pool_mibps(self) -> float:
        """What the pool gives: its TiB times the service level's rate (shared out under manual QoS)."""
        return self.pool_tib * MIB_PER_TIB[self.service_level]

    @property
    def limit_mibps(self) -> float:
        """The volume's throughput limit as Azure sets it: the assigned throughput (manual QoS; all the
        pool gives, up to 4,500 MiB/s, when none is given) or quota x rate (auto QoS)."""
        if self.manual:
            return self.throughput_mibps or min(self.pool_mibps, REGULAR_VOLUME_MAX_MIBPS)
        return self.size_gib / 1024 * MIB_PER_TIB[self.service_level]

    @property
    def effective_mibps(self) -> float:
        """The limit, and no more than a regular volume gives (auto QoS promises more above 35 TiB Ultra)."""
        return min(self.limit_mibps, REGULAR_VOLUME_MAX_MIBPS)

    def describe_limit(self) -> str:
        """How the limit comes about, e.g. ``manual QoS 4,500 MiB/s (of the 100 TiB Ultra pool's 12,800)``."""
        if self.manual:
            return (f"manual QoS {self.limit_mibps:,.0f} MiB/s (of the {self.pool_tib} TiB {self.service_level} "
                    f"pool's {self.pool_mibps:,.0f})")
        text = (f"auto QoS {self.limit_mibps:,.0f} MiB/s ({self.size_gib:,} GiB x "
                f"{MIB_PER_TIB[self.service_level]:g} MiB/s per TiB at {self.service_level})")
        if self.limit_mibps > REGULAR_VOLUME_MAX_MIBPS:
            text += f", {REGULAR_VOLUME_MAX_MIBPS:,.0f} MiB/s at most on a regular volume"
        return text

    @model_validator(mode="after")
    def _throughput(self) -> AnfVolume:
        if self.pool_size_tib is not None and self.pool_size_tib * 1024 < self.size_gib:
            raise ValueError(f"a {self.size_gib:g} GiB volume does not fit a {self.pool_size_tib} TiB pool; raise "
                             "pool_size_tib, or drop it for the smallest pool that holds the volume")
        if self.qos == "auto" and self.throughput_mibps is not None:
            raise ValueError(f"throughput_mibps is for qos: manual; auto QoS gives the volume its quota x the "
                             f"service level ({self.limit_mibps:,.0f} MiB/s here); drop throughput_mibps "
                             "(--set shared.anf.throughput_mibps=null) or set qos: manual")
        if not self.manual or self.throughput_mibps is None:
            return self
        if self.throughput_mibps > self.pool_mibps:
            tib = math.ceil(self.throughput_mibps / MIB_PER_TIB[self.service_level])
            raise ValueError(f"{self.throughput_mibps:g} MiB/s is more than a {self.pool_tib} TiB "
                             f"{self.service_level} pool gives ({self.pool_mibps:g} MiB/s); raise size_gib, "
                             f"pool_size_tib (to {tib} TiB or more) or the service level")
        if self.throughput_mibps > REGULAR_VOLUME_MAX_MIBPS:
            raise ValueError(f"{self.throughput_mibps:g} MiB/s is more than Azure assigns a regular volume with "
                             f"manual QoS ({REGULAR_VOLUME_MAX_MIBPS:,.0f} MiB/s)")
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
    return (f"anf: {spec.service_level} pool {spec.pool_tib} TiB, volume {spec.size_gib} GiB, "
            f"{spec.describe_limit()}; ~${hourly_usd(spec):.2f}/h (approximate list price)")


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


def client_mibps(size: str, region: str | None) -> float | None:
    """What a client of ``size`` can move over the network, in MiB/s: its published bandwidth (Mbps,
    diskbench's size data); None where none is published."""
    from .sizes import lookup

    info = lookup(size, region)
    return info.network_mbps * 1e6 / 8 / 2**20 if info is not None and info.network_mbps else None


def plan_advice(plan: Plan) -> list[Advice]:
    """What ``plan`` says of a profile's NetApp volume: its throughput limit beside what the clients'
    network can carry (a note), and a warning when the volume is the tighter of the two while it could
    give more: the throughput jobs would measure its QoS setting, not the service. A note, too, when
    the pool needs more NetApp quota than a subscription has by default."""
    from .schema import Machine

    profile = plan.profile.profile
    shared = profile.shared
    volume = shared.volume if shared is not None else None
    if volume is None or not isinstance(volume.spec, AnfVolume):
        return []
    spec = volume.spec
    names = shared.clients if shared is not None and shared.clients else None
    clients = [m for m in profile.machine_entries if isinstance(m, Machine) and (names is None or m.name in names)]
    caps = [client_mibps(m.size, m.region) for m in clients]
    known = [c for c in caps if c is not None]
    sizes = list(dict.fromkeys(m.size for m in clients))
    mbps = sorted({round(c * 2**20 * 8 / 1e6) for c in known})
    push = sum(known)
    who = f"the {len(clients)} clients" if len(clients) != 1 else "the client"
    said = (f"{who} can push {push:,.0f} MiB/s ({len(known)} x {' / '.join(sizes)} at "
            f"{' / '.join(f'{v:,}' for v in mbps)} Mbps, the sizes' published network bandwidth)" if known
            else f"no network bandwidth is published for {who}")
    if len(known) < len(clients) and known:
        said += f"; {len(clients) - len(known)} of them publish none"
    out = [Advice("anf", f"anf: volume limit {spec.describe_limit()}; {said}", reason="the volume's limit")]
    out += _own_mounts(profile.machine_entries, clients, spec)
    wanted = min(push, REGULAR_VOLUME_MAX_MIBPS) if known else REGULAR_VOLUME_MAX_MIBPS
    if spec.effective_mibps < wanted:
        rate = MIB_PER_TIB[spec.service_level]
        tib, gib = math.ceil(wanted / rate), math.ceil(wanted / rate * 1024)
        fix = f"qos: manual with throughput_mibps: {wanted:.0f} and pool_size_tib: {tib} or more"
        if gib <= MAX_REGULAR_GIB:
            fix += f", or an auto QoS volume of size_gib: {gib} or more at {spec.service_level}"
        out.append(Advice("anf", f"anf: the volume's limit, {spec.describe_limit()}, is below what {who} can push "
                          f"and a regular volume can give ({wanted:,.0f} MiB/s): the jobs that reach it measure its "
                          f"QoS setting, not the service ({fix})"))
    if spec.pool_tib > DEFAULT_QUOTA_TIB:
        where = f"in {clients[0].region}" if clients else "in the region"
        out.append(Advice("anf", f"anf: a {spec.pool_tib} TiB pool needs that much NetApp capacity quota {where}; a "
                          f"subscription has {DEFAULT_QUOTA_TIB} TiB unless a support request raised it (the run "
                          "checks the quota before it creates anything)", reason="the pool's quota"))
    return out


def _own_mounts(machines: list[Any], clients: list[Any], spec: AnfVolume) -> list[Advice]:
    """A note per machine outside the client group that mounts the volume itself (``nfs: shared``): what
    it can push on its own, beside the volume's limit, in its turn after the group's."""
    from .schema import Machine

    out = []
    for m in machines:
        targets = m.named_targets().values() if isinstance(m, Machine) and m not in clients else []
        if not any(getattr(t, "on_shared", False) for t in targets):
            continue
        mibps = client_mibps(m.size, m.region)
        if mibps:
            than = "less than" if mibps < spec.effective_mibps else "at least"
            can = (f"it can push {mibps:,.0f} MiB/s ({m.size} at {mibps * 2**20 * 8 / 1e6:,.0f} Mbps), {than} "
                   f"the volume's {spec.effective_mibps:,.0f} MiB/s")
        else:
            can = f"no network bandwidth is published for it ({m.size})"
        out.append(Advice("anf", f"anf: {m.name} mounts the volume itself, after the client group; {can}",
                          reason="the volume's limit"))
    return out


def bodies(spec: AnfVolume, region: str, tags: dict[str, str], subnet_id: str,
           token: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Account, pool and volume request bodies."""
    account = {"location": region, "tags": tags, "properties": {}}
    pool = {"location": region, "tags": tags, "properties": {
        "serviceLevel": spec.service_level, "size": spec.pool_tib * 1024 * GIB,
        "qosType": spec.qos_type}}
    v3 = spec.protocol == "NFSv3"
    volume: dict[str, Any] = {"location": region, "tags": tags, "properties": {
        "creationToken": token, "serviceLevel": spec.service_level, "usageThreshold": spec.size_gib * GIB,
        "subnetId": subnet_id, "protocolTypes": [spec.protocol],
        "exportPolicy": {"rules": [{"ruleIndex": 1, "allowedClients": SUBNET_PREFIX, "unixReadOnly": False,
                                    "unixReadWrite": True, "nfsv3": v3, "nfsv41": not v3,
                                    "hasRootAccess": True}]}}}
    if spec.manual:  # manual QoS: the volume's share of the pool; auto QoS derives it from the quota
        volume["properties"]["throughputMibps"] = spec.limit_mibps
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
