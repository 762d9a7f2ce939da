"""Windows machines on Azure: the request bodies against the fake Resource Manager, with the real SDK.

No Windows VM boots here (there is none to boot): these tests check what diskbench asks Azure
for (image, OpenSSH set-up, keys, data disks, caching, the NSG) and that the host it hands to
the SSH path pins the host key it generated.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from diskbench.errors import ProfileError
from diskbench.expand import build_plan
from diskbench.profile import LoadedProfile, load_profile, parse_profile
from diskbench.providers.azure.groups import Journal
from diskbench.providers.azure.provider import AzureRun
from diskbench.providers.azure.session import AzureSession

from ...fake_arm import FakeArm
from .test_azure import arm, session  # noqa: F401 - fixtures

WINDOWS = """\
name: w
defaults: {size: 1G, runtime: 10s}
workloads:
  - {name: rr, rw: randread, bs: 4k, iodepth: 8}
machines:
  - name: win1
    region: westeurope
    size: Standard_D8ds_v4
    os: windows
    data_disks:
      - {count: 2, type: Premium_LRS, size_gb: 1024, caching: None}
      - {type: Premium_LRS, size_gb: 1024, caching: ReadOnly}
    targets: {stripe: {luns: [0, 1]}, cached: {lun: 2}}
"""


def _decode(command: str) -> str:
    encoded = re.search(r"-EncodedCommand (\S+)", command)
    assert encoded, command
    return base64.b64decode(encoded.group(1)).decode("utf-16-le")


def _fingerprint(public: str) -> str:
    digest = hashlib.sha256(base64.b64decode(public.split()[1])).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def test_windows_machines_default_to_diskspd_and_refuse_fio() -> None:
    plan = build_plan(load_profile("d8ds-premium-windows"))
    engines = {(j.machine, j.engine) for j in plan.units}
    assert engines == {("d8ds-v4-windows", "diskspd"), ("d8ds-v4-linux-twin", "fio")}
    assert {j.platform for j in plan.units if j.machine == "d8ds-v4-windows"} == {"windows"}
    plain = build_plan(load_profile("premium-cache-windows"))
    assert {j.engine for j in plain.units} == {"diskspd"} and len(plain.units) == 20
    with pytest.raises(ProfileError, match="runs fio, which does not run on windows"):
        text = WINDOWS.replace("iodepth: 8}", "iodepth: 8, engine: fio}")
        build_plan(LoadedProfile(profile=parse_profile(text), path="w.yaml", text=text))


def test_windows_vm_and_openssh_extension_bodies(arm: FakeArm, session: AzureSession,  # noqa: F811
                                                 tmp_path: Path) -> None:
    profile = parse_profile(WINDOWS)
    run = AzureRun(session, Journal(tmp_path / "journal.jsonl"), "win-run", tmp_path / "keys",
                   ssh_source="203.0.113.7/32", line=lambda _m: None)
    run.begin(profile.machines)
    host = run.create(profile.machines[0])
    puts = {r.path.rsplit("/", 2)[-2] if "/extensions/" not in r.path else "extensions": r.body
            for r in arm.requests if r.method == "PUT"}
    vm = puts["virtualMachines"]["properties"]
    image = vm["storageProfile"]["imageReference"]
    assert (image["publisher"], image["offer"], image["sku"]) == (
        "MicrosoftWindowsServer", "WindowsServer", "2022-datacenter-azure-edition")
    os_profile = vm["osProfile"]
    assert "linuxConfiguration" not in os_profile and "customData" not in os_profile
    assert os_profile["windowsConfiguration"]["provisionVMAgent"] is True
    assert len(os_profile["adminPassword"]) >= 12 and len(os_profile["computerName"]) <= 15
    disks = vm["storageProfile"]["dataDisks"]
    assert [(d["lun"], d["caching"], d["managedDisk"]["storageAccountType"]) for d in disks] == [
        (0, "None", "Premium_LRS"), (1, "None", "Premium_LRS"), (2, "ReadOnly", "Premium_LRS")]
    rule = puts["networkSecurityGroups"]["properties"]["securityRules"][0]["properties"]
    assert (rule["sourceAddressPrefix"], rule["destinationPortRange"]) == ("203.0.113.7/32", "22")

    ext = puts["extensions"]["properties"]
    assert (ext["publisher"], ext["type"]) == ("Microsoft.Compute", "CustomScriptExtension")
    assert ext["settings"] == {}  # everything secret is in protectedSettings
    script = _decode(ext["protectedSettings"]["commandToExecute"])
    login = (tmp_path / "keys" / "win-run" / "id_ed25519").read_text()
    assert "PRIVATE KEY" in login
    assert "administrators_authorized_keys" in script and "icacls $auth /inheritance:r" in script
    assert "OpenSSH.Server~~~~0.0.1.0" in script and "-LocalPort 22" in script
    public_host = re.search(r"\$key\.pub\", '([^']+)", script)
    assert public_host and host.host_key == _fingerprint(public_host.group(1))  # pinned, not trusted on first use
    assert "BEGIN OPENSSH PRIVATE KEY" in script
    assert (host.platform, host.user, host.sudo) == ("windows", "azureuser", False)
    run.teardown()
    assert arm.groups == {} and arm.resources == {}


def test_the_fake_refuses_what_azure_refuses_for_windows(arm: FakeArm, session: AzureSession,  # noqa: F811
                                                         tmp_path: Path) -> None:
    profile = parse_profile(WINDOWS.replace("name: win1", "name: win1-much-too-long-for-netbios"))
    run = AzureRun(session, Journal(tmp_path / "journal.jsonl"), "win-run2", tmp_path / "keys",
                   ssh_source="203.0.113.7/32", line=lambda _m: None)
    run.begin(profile.machines)
    host = run.create(profile.machines[0])  # diskbench cuts the computer name to 15 characters
    assert host.name == "win1-much-too-long-for-netbios"
    vm: dict[str, Any] = next(r.body for r in arm.requests if r.method == "PUT" and "virtualMachines/" in r.path
                              and "/extensions/" not in r.path)
    assert vm["properties"]["osProfile"]["computerName"] == "win1-much-too-l"
    run.teardown()
