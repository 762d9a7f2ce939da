"""Azure NetApp Files for scale-out runs: the real azure-mgmt-netapp SDK against the fake ARM.

The account, capacity pool and volume are created in the run's group on a delegated subnet of
the run's VNet, and deleted volume first (the fake, like ANF, refuses a pool that holds one).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from diskbench.errors import DiskbenchError, ProfileError
from diskbench.profile import parse_profile
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
    assert line.startswith("anf: Premium pool 4 TiB, volume 4096 GiB, up to 256 MiB/s; ~$1.65/h")


def test_a_netapp_volume_needs_azure_machines_as_clients() -> None:
    text = ("name: anf\nworkloads: [{name: r, rw: randread}]\nhosts: [{name: h1, address: 192.0.2.1}]\n"
            "shared:\n  anf: {service_level: Premium, size_gib: 1024}\n")
    with pytest.raises(ProfileError, match="shared.anf needs azure machines as clients, not static"):
        plan_of(text)
    (unit, *_) = plan_of(PROFILE).jobs  # on Azure machines: the volume's export, to be made, is the target
    assert unit.target.model_dump()["nfs"] == "anf:/volume" and unit.clients[0].provider == "azure"
