"""Azure NetApp Files for scale-out runs: the real azure-mgmt-netapp SDK against the fake ARM.

The account, capacity pool and volume are created in the run's group on a delegated subnet of
the run's VNet, and deleted volume first (the fake, like ANF, refuses a pool that holds one).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from diskbench import registry
from diskbench.errors import DiskbenchError, ProfileError
from diskbench.expand import build_plan
from diskbench.plan import Plan
from diskbench.planning import report
from diskbench.profile import load_profile, parse_profile
from diskbench.providers.azure import AzureProvider
from diskbench.providers.azure.anf import AnfVolume, cost_line
from diskbench.providers.azure.groups import Journal
from diskbench.providers.azure.provider import AzureRun
from diskbench.providers.azure.session import AzureSession, connect

from ...conftest import plan_of
from ...fake_arm import SUB, FakeArm
from .test_azure import serve_arm

RUN = "20261123-200000-abcd"


@pytest.fixture
def arm() -> Iterator[FakeArm]:
    yield from serve_arm("standardDSv5Family", "DSv5", used=0, limit=1000, cores=1000)


@pytest.fixture
def session(arm: FakeArm) -> AzureSession:
    return connect(SUB, base_url=arm.url, token="test-token", polling_interval=0)


def _run(session: AzureSession, tmp_path: Path) -> AzureRun:
    run = AzureRun(session, Journal(tmp_path / "journal.jsonl"), RUN, tmp_path / "keys", ssh_source="192.0.2.9/32",
                   line=lambda _m: None)
    profile = parse_profile(PROFILE)
    run.begin(list(profile.machine_entries))
    return run


PROFILE = """\
name: anf
workloads: [{name: r, rw: randread}]
machines:
  - {name: c1, region: westeurope, size: Standard_D32s_v5, os_disk: {type: Premium_LRS}, target: {dir: /tmp}}
shared:
  anf: {service_level: Premium, size_gib: 1500, throughput_mibps: 120}
"""


def test_account_pool_volume_on_a_delegated_subnet_then_deleted(session: AzureSession, arm: FakeArm,
                                                                tmp_path: Path) -> None:
    run = _run(session, tmp_path)
    shared = parse_profile(PROFILE).shared
    volume = shared.volume if shared is not None else None
    assert volume is not None and volume.key == "anf" and volume.provider == "azure"
    export = run.shared_volume(volume.spec)
    assert export == f"10.213.1.4:/diskbench-{RUN[-8:]}"
    puts = {r.path.rsplit("/", 2)[-2]: r.body for r in arm.requests if r.method == "PUT"}
    subnet = puts["subnets"]["properties"]
    assert subnet["delegations"][0]["properties"]["serviceName"] == "Microsoft.NetApp/volumes"
    pool = puts["capacityPools"]["properties"]
    assert pool == {"serviceLevel": "Premium", "size": 2 * 1024**4, "qosType": "Manual"}  # 1500 GiB -> 2 TiB
    volume = puts["volumes"]["properties"]
    assert volume["usageThreshold"] == 1500 * 1024**3 and volume["throughputMibps"] == 120
    assert volume["protocolTypes"] == ["NFSv3"] and volume["subnetId"].endswith("/subnets/anf")
    rule = volume["exportPolicy"]["rules"][0]
    assert rule["nfsv3"] and rule["unixReadWrite"] and rule["allowedClients"] == "10.213.0.0/24"
    assert any("asyncoperations" in r.path for r in arm.requests)  # long-running operations polled
    run.teardown()
    deletes = [r.path.rsplit("/", 2)[-2] for r in arm.requests if r.method == "DELETE"]
    assert deletes == ["volumes", "capacityPools", "netAppAccounts", "resourcegroups"]  # then the group
    assert not arm.groups and not arm.resources


def test_quota_is_checked_before_anything_is_made(session: AzureSession, arm: FakeArm, tmp_path: Path) -> None:
    arm.netapp_quota = [{"name": "westeurope/totalTiBsPerSubscription", "id": "x", "type": "t",
                         "properties": {"current": 25, "default": 25, "usage": 24}}]
    run = _run(session, tmp_path)
    with pytest.raises(DiskbenchError, match="NetApp quota"):
        run.shared_volume(AnfVolume(service_level="Ultra", size_gib=4096))
    assert not [r for r in arm.requests if "Microsoft.NetApp/netAppAccounts" in r.path]
    run.teardown()


def test_throughput_beyond_the_service_level_is_a_profile_error() -> None:
    with pytest.raises(ProfileError, match=r"shared.anf: 500 MiB/s is more than a 2 TiB Standard pool gives"):
        parse_profile(PROFILE.replace("Premium, size_gib: 1500, throughput_mibps: 120",
                                      "Standard, size_gib: 1500, throughput_mibps: 500"))
    line = cost_line(AnfVolume(service_level="Premium", size_gib=4096))
    assert line.startswith("anf: Premium pool 4 TiB, volume 4096 GiB, auto QoS 256 MiB/s (4,096 GiB x 64 MiB/s "
                           "per TiB at Premium); ~$1.65/h")


def test_a_netapp_volume_needs_azure_machines_as_clients() -> None:
    text = ("name: anf\nworkloads: [{name: r, rw: randread}]\nhosts: [{name: h1, address: 192.0.2.1}]\n"
            "shared:\n  anf: {service_level: Premium, size_gib: 1024}\n")
    with pytest.raises(ProfileError, match="shared.anf needs azure machines as clients, not static"):
        plan_of(text)
    (unit, *_) = plan_of(PROFILE).units  # on Azure machines: the volume's export, to be made, is the target
    assert unit.target.model_dump()["nfs"] == "anf:/volume" and unit.clients[0].provider == "azure"
    # a machine that mounts the volume itself (nfs: shared) reaches it on the run's network: an Azure one too
    other = ("  - {name: o1, provider: openstack, cloud: ovh, flavor: b2-7, image: Ubuntu 24.04, network: Ext-Net,\n"
             "     targets: {v: {nfs: shared}}}\nshared:\n  clients: [c1]\n")
    with pytest.raises(ProfileError, match="shared.anf needs azure machines as clients, not openstack"):
        plan_of(PROFILE.replace("shared:\n", other))


# Azure's published figures, the oracles below (read 2026-11-25):
# - https://learn.microsoft.com/azure/azure-netapp-files/azure-netapp-files-service-levels: Ultra gives
#   128 MiB/s per provisioned TiB; under manual QoS the volumes of a pool share at most pool TiB x that.
# - https://learn.microsoft.com/azure/azure-netapp-files/azure-netapp-files-resource-limits: a regular
#   volume holds at most 100 TiB; a manual QoS volume is assigned 1 to 4,500 MiB/s.
# - https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/dsv5-series: a D32s_v5's
#   network bandwidth is 16,000 Mbps.
ULTRA_10_TIB_AUTO = 1280.0  # 10 TiB x 128 MiB/s
ULTRA_100_TIB_POOL = 12800.0  # 100 TiB x 128 MiB/s, shared out under manual QoS
MANUAL_MAX = 4500.0
D32S_V5_MIBPS = 16000 * 1e6 / 8 / 2**20  # 1,907 MiB/s
# https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/dsv4-series: a D32s_v4's is 16,000 Mbps
D32S_V4_MIBPS = 16000 * 1e6 / 8 / 2**20
SEED_64K_READ = 4500.0  # seed 002: ~4,500 MiB/s of 64 KiB sequential reads (with caching)
SEED_MANUAL = AnfVolume(service_level="Ultra", size_gib=100 * 1024, qos="manual", throughput_mibps=4500)


def _advice(plan: Plan) -> tuple[list[str], list[str]]:
    """What the registered Azure provider says of a plan: (warnings, notes)."""
    provider = registry.providers.get("azure")
    assert isinstance(provider, AzureProvider)
    said = provider.plan_advice(plan)
    return [a.text for a in said if a.reason is None], [a.text for a in said if a.reason is not None]


def test_manual_qos_pool_and_volume_bodies(session: AzureSession, arm: FakeArm, tmp_path: Path) -> None:
    """The seed's volume: a 100 TiB Ultra pool with qosType Manual, the volume given 4,500 MiB/s of it."""
    run = _run(session, tmp_path)
    run.shared_volume(SEED_MANUAL)
    puts = {r.path.rsplit("/", 2)[-2]: r.body for r in arm.requests if r.method == "PUT"}
    assert puts["capacityPools"]["properties"] == {"serviceLevel": "Ultra", "size": 100 * 1024**4,
                                                   "qosType": "Manual"}
    volume = puts["volumes"]["properties"]
    assert volume["usageThreshold"] == 100 * 1024**4 and volume["throughputMibps"] == MANUAL_MAX
    assert volume["serviceLevel"] == "Ultra"
    run.teardown()
    assert not arm.resources


def test_auto_qos_states_no_throughput_and_manual_defaults_to_what_it_may_have(session: AzureSession, arm: FakeArm,
                                                                            tmp_path: Path) -> None:
    run = _run(session, tmp_path)
    run.shared_volume(AnfVolume(service_level="Ultra", size_gib=10 * 1024, qos="auto"))
    puts = {r.path.rsplit("/", 2)[-2]: r.body for r in arm.requests if r.method == "PUT"}
    assert puts["capacityPools"]["properties"]["qosType"] == "Auto"
    assert "throughputMibps" not in puts["volumes"]["properties"]
    run.teardown()
    # manual without a figure: all the pool gives (a 10 TiB Ultra pool: 1,280), at most 4,500 (a 100 TiB pool)
    assert AnfVolume(service_level="Ultra", size_gib=10 * 1024, qos="manual").limit_mibps == ULTRA_10_TIB_AUTO
    seed = AnfVolume(service_level="Ultra", size_gib=100 * 1024, qos="manual")
    assert (seed.pool_mibps, seed.limit_mibps) == (ULTRA_100_TIB_POOL, MANUAL_MAX)
    # a larger pool than the volume: its throughput to share, for a small volume
    small = AnfVolume(service_level="Ultra", size_gib=1024, pool_size_tib=36, throughput_mibps=4500)
    assert small.pool_tib == 36 and small.qos_type == "Manual"


@pytest.mark.parametrize(("block", "message"), [
    ("{service_level: Ultra, size_gib: 102400, qos: auto, throughput_mibps: 4500}",
     r"throughput_mibps is for qos: manual; auto QoS gives the volume its quota x the service level \(12,800"),
    ("{service_level: Ultra, size_gib: 102400, throughput_mibps: 5000}",
     r"5000 MiB/s is more than Azure assigns a regular volume with manual QoS \(4,500 MiB/s\)"),
    ("{service_level: Ultra, size_gib: 10240, throughput_mibps: 4500}",
     r"4500 MiB/s is more than a 10 TiB Ultra pool gives \(1280 MiB/s\); raise size_gib, pool_size_tib \(to 36 "
     r"TiB or more\)"),
    ("{service_level: Ultra, size_gib: 102400, pool_size_tib: 36}", r"a 102400 GiB volume does not fit a 36 TiB pool"),
    ("{service_level: Ultra, size_gib: 204800}", r"size_gib"),
])
def test_what_azure_refuses_is_a_profile_error(block: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        parse_profile(PROFILE.replace("{service_level: Premium, size_gib: 1500, throughput_mibps: 120}", block))


def test_the_seed_profile_plans_the_volume_above_the_seeds_figures_without_a_warning() -> None:
    plan = build_plan(load_profile("anf-nfs-scaleout"))
    shared = plan.profile.profile.shared
    spec = shared.volume.spec if shared is not None and shared.volume is not None else None
    assert isinstance(spec, AnfVolume)
    assert (spec.service_level, spec.size_gib, spec.qos_type) == ("Ultra", 100 * 1024, "Manual")
    assert spec.pool_mibps == ULTRA_100_TIB_POOL and spec.limit_mibps >= SEED_64K_READ
    warned, notes = _advice(plan)
    assert warned == []
    assert report(plan).warnings == []  # nor any other warning of plan's
    (limit,) = [n for n in notes if n.startswith("anf: volume limit")]
    assert "manual QoS 4,500 MiB/s (of the 100 TiB Ultra pool's 12,800)" in limit
    assert f"the 6 clients can push {6 * D32S_V5_MIBPS:,.0f} MiB/s" in limit  # 11,444
    assert any("100 TiB pool needs that much NetApp capacity quota" in n for n in notes)  # 25 TiB by default
    # the nconnect comparison's one client: what it can push on its own, after the group (a D32s_v4: 16,000 Mbps)
    (single,) = [n for n in notes if n.startswith("anf: nconnect-client")]
    assert single == (f"anf: nconnect-client mounts the volume itself, after the client group; it can push "
                      f"{D32S_V4_MIBPS:,.0f} MiB/s (Standard_D32s_v4 at 16,000 Mbps), less than the volume's "
                      f"{MANUAL_MAX:,.0f} MiB/s")


def test_a_10_tib_auto_qos_volume_warns_that_it_caps_the_seeds_numbers() -> None:
    overrides = ["shared.anf.size_gib=10240", "shared.anf.qos=auto", "shared.anf.throughput_mibps=null"]
    plan = build_plan(load_profile("anf-nfs-scaleout", overrides))
    warned, notes = _advice(plan)
    (warning,) = warned
    assert report(plan).warnings == [warning]  # what `plan` and `run` print, through Provider.plan_advice
    assert f"auto QoS {ULTRA_10_TIB_AUTO:,.0f} MiB/s" in warning and f"({MANUAL_MAX:,.0f} MiB/s)" in warning
    assert "pool_size_tib: 36 or more" in warning and "size_gib: 36000 or more" in warning
    assert any(f"volume limit auto QoS {ULTRA_10_TIB_AUTO:,.0f} MiB/s" in n for n in notes)
    with pytest.raises(ProfileError, match=r"--set shared.anf.throughput_mibps=null"):  # auto with a figure
        load_profile("anf-nfs-scaleout", overrides[:2])
