"""The Azure side with the real SDK against the fake Resource Manager in tests/fake_arm.py."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from azure.identity import AzureCliCredential, ChainedTokenCredential, EnvironmentCredential

from diskbench.errors import DiskbenchError
from diskbench.profile import parse_profile
from diskbench.providers.azure.groups import Journal, create_group, delete_group, find_leftovers, group_name, tags
from diskbench.providers.azure.session import AzureSession, connect, require_login
from diskbench.providers.azure.sizes import DATA
from diskbench.providers.azure.skus import online_problems

from ...conftest import diskbench
from ...fake_arm import SUB, FakeArm


def _skus(region: str = "westeurope") -> list[dict[str, object]]:
    out = []
    for s in json.loads(DATA.read_text())["sizes"]:
        out.append({"name": s["name"], "family": s["family"], "resourceType": "virtualMachines",
                    "locations": [region], "tier": "Standard",
                    "capabilities": [{"name": k, "value": v} for k, v in s["capabilities"].items()],
                    "restrictions": []})
    return out


def serve_arm(family: str, localized: str, *, used: int, limit: int, cores: int) -> Iterator[FakeArm]:
    """A started fake ARM with this machine's SKUs and one family's vCPU quota; stopped after."""
    fake = FakeArm(skus=_skus(), usages=[
        {"name": {"value": "cores", "localizedValue": "Total Regional vCPUs"}, "currentValue": 0, "limit": cores,
         "unit": "Count"},
        {"name": {"value": family, "localizedValue": localized}, "currentValue": used, "limit": limit,
         "unit": "Count"}]).start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def arm() -> Iterator[FakeArm]:
    yield from serve_arm("standardEDSv4Family", "EDSv4", used=4, limit=20, cores=100)


@pytest.fixture
def session(arm: FakeArm) -> AzureSession:
    return connect(SUB, base_url=arm.url, token="test-token", polling_interval=0)


def test_no_credentials_is_one_clear_line() -> None:
    # Both sources fail locally, without any network: no environment variables, no az CLI.
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("AZURE_")}
    try:
        credential = ChainedTokenCredential(EnvironmentCredential(), AzureCliCredential())
        with pytest.raises(DiskbenchError) as info:
            require_login(credential)
    finally:
        os.environ.update(saved)
    assert str(info.value).startswith("no Azure credentials")
    assert "run `az login`" in str(info.value) and "\n" not in str(info.value)


def test_group_is_journaled_tagged_and_deleted(session: AzureSession, arm: FakeArm, tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.jsonl")
    name = create_group(session, journal, "20261122-010203-abcd", "westeurope")
    assert name == group_name("20261122-010203-abcd") and name.lower() in arm.groups
    put = next(r for r in arm.requests if r.method == "PUT")
    assert put.body["location"] == "westeurope"
    assert {"diskbench", "diskbench-run", "diskbench-created", "diskbench-expires", "diskbench-owner",
            "diskbench-version"} <= set(put.body["tags"])
    assert journal.open_groups()[name]["run"] == "20261122-010203-abcd"
    arm.delete_polls = 4
    delete_group(session, journal, name)
    polls = [r for r in arm.requests if "operationresults" in r.path]
    assert len(polls) == 5 and not arm.groups  # four in-progress answers, then done
    assert journal.open_groups() == {}


def test_leftovers_by_expiry_age_run_and_journal(session: AzureSession, arm: FakeArm, tmp_path: Path) -> None:
    now = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)
    old = tags("r-old", now=now - timedelta(hours=8))
    fresh = tags("r-fresh", now=now - timedelta(hours=1))
    for name, t in (("diskbench-r-old", old), ("diskbench-r-fresh", fresh), ("someone-elses", {"team": "x"})):
        arm.groups[name] = {"id": f"/subscriptions/{SUB}/resourceGroups/{name}", "name": name,
                            "location": "westeurope", "tags": t, "properties": {"provisioningState": "Succeeded"}}
    journal = Journal(tmp_path / "journal.jsonl")
    journal.write("creating-group", group="diskbench-r-untagged", run="r-untagged", subscription=SUB)
    journal.write("creating-group", group="diskbench-r-gone", run="r-gone", subscription=SUB)
    arm.groups["diskbench-r-untagged"] = {"id": "x", "name": "diskbench-r-untagged", "location": "westeurope",
                                          "tags": {}, "properties": {}}
    found = {g.name: g.reason for g in find_leftovers(session, journal, now=now)}
    assert found == {"diskbench-r-old": "expired", "diskbench-r-untagged": "in the journal"}
    assert "diskbench-r-gone" not in journal.open_groups()  # closed: it no longer exists
    found = {g.name for g in find_leftovers(session, journal, older_than=timedelta(minutes=30), now=now)}
    assert "diskbench-r-fresh" in found and "someone-elses" not in found
    assert [g.name for g in find_leftovers(session, journal, run_id="r-fresh", now=now)] == ["diskbench-r-fresh"]


def test_cleanup_command(arm: FakeArm, tmp_path: Path) -> None:
    expired = tags("r1", now=datetime.now(timezone.utc) - timedelta(days=1))
    arm.groups["diskbench-r1"] = {"id": "x", "name": "diskbench-r1", "location": "westeurope", "tags": expired,
                                  "properties": {"provisioningState": "Succeeded"}}
    env = {"DISKBENCH_ARM_URL": arm.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB}
    db = tmp_path / "db.sqlite"
    dry = diskbench("cleanup", "--dry-run", db=db, env=env)
    assert dry.returncode == 0 and "would delete diskbench-r1 (expired)" in dry.stdout and arm.groups
    real = diskbench("cleanup", db=db, env=env)
    assert real.returncode == 0 and "deleted diskbench-r1" in real.stdout and not arm.groups
    assert "nothing to clean up" in diskbench("cleanup", db=db, env=env).stdout


def test_online_preflight_reads_skus_and_quota_with_paging(session: AzureSession, arm: FakeArm) -> None:
    e8ds = next(s for s in arm.skus if s["name"] == "Standard_E8ds_v4")
    e8ds["restrictions"] = [{"type": "Location", "values": ["westeurope"], "reasonCode":
                                    "NotAvailableForSubscription", "restrictionInfo": {"locations": ["westeurope"]}}]
    profile = parse_profile(
        "name: p\nworkloads:\n  - {name: a, rw: read}\nmachines:\n"
        "  - {name: m1, region: westeurope, size: Standard_E8ds_v4, target: temp}\n"
        "  - {name: m2, region: westeurope, size: Standard_E8ds_v4, target: temp}\n"
        "  - {name: m3, region: westeurope, size: Standard_E99_v9, target: temp}\n")
    problems = [str(p) for p in online_problems(session, profile.machines)]
    assert any(p.startswith("m1: Standard_E8ds_v4 is not available to this subscription in westeurope")
               for p in problems), problems
    assert any(p.startswith("m3: Standard_E99_v9 is not offered in westeurope") for p in problems)
    assert not any("vCPUs" in p for p in problems)  # 16 of 16 free EDSv4 vCPUs: enough
    sku_pages = [r for r in arm.requests if r.path.endswith("/skus")]
    assert len(sku_pages) == (len(arm.skus) + arm.page_size - 1) // arm.page_size  # every page was read
    arm.usages[1]["currentValue"] = 10
    problems = [str(p) for p in online_problems(session, profile.machines)]
    assert any("standardEDSv4Family vCPUs: 16 needed, 10 of 20 free" in p for p in problems), problems


def _self_signed(tmp_path: Path) -> tuple[str, str]:
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(minutes=1))
            .not_valid_after(now + timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "arm.crt", tmp_path / "arm.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_file), str(key_file)


class _Credential:
    """A TokenCredential the stock ARM policy asks for a token, as it would ask Entra ID."""

    def __init__(self) -> None:
        self.asked = 0

    def get_token(self, *scopes: str, **kwargs: object) -> object:
        from azure.core.credentials import AccessToken

        self.asked += 1
        assert scopes == ("https://management.azure.com/.default",)
        return AccessToken("token-from-credential", int(datetime.now(timezone.utc).timestamp()) + 3600)


def test_over_tls_with_the_stock_authentication_policy(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    arm = FakeArm(tls=(cert, key), expect_token="token-from-credential").start()
    try:
        credential = _Credential()
        session = AzureSession(SUB, credential, {"base_url": arm.url, "connection_verify": cert,
                                                 "polling_interval": 0})
        journal = Journal(tmp_path / "journal.jsonl")
        name = create_group(session, journal, "tls-run", "westeurope")
        delete_group(session, journal, name)
        assert credential.asked >= 1 and arm.groups == {}
        assert arm.url.startswith("https://")
    finally:
        arm.stop()


def test_sizes_refresh_caches_the_sku_api(arm: FakeArm, tmp_path: Path) -> None:
    arm.skus.append({"name": "Standard_Z8s_v9", "family": "standardZSv9Family", "resourceType": "virtualMachines",
                     "locations": ["westeurope"], "capabilities": [
                         {"name": "vCPUs", "value": "8"}, {"name": "MaxDataDiskCount", "value": "8"},
                         {"name": "PremiumIO", "value": "True"}, {"name": "UncachedDiskIOPS", "value": "4242"}],
                     "restrictions": []})
    env = {"DISKBENCH_ARM_URL": arm.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB,
           "XDG_CACHE_HOME": str(tmp_path)}
    out = diskbench("sizes", "--region", "westeurope", "--refresh", "--family", "Z", db=tmp_path / "db.sqlite",
                    env=env)
    assert out.returncode == 0, out.stderr
    assert "Standard_Z8s_v9" in out.stdout and "4,242" in out.stdout and "SKU API, cached" in out.stdout
    offline = diskbench("sizes", "--region", "westeurope", "--family", "Z", db=tmp_path / "db.sqlite",
                        env={"XDG_CACHE_HOME": str(tmp_path)})
    assert "Standard_Z8s_v9" in offline.stdout  # later plans and `sizes` use the cache
