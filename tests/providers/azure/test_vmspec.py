"""VM request bodies for every storage option of the seed profiles."""

from __future__ import annotations

import base64

import paramiko
import yaml

from diskbench.executors.hostkeys import fingerprint
from diskbench.profile import load_profile, parse_profile
from diskbench.providers.azure.vmspec import KeyPair, cloud_init, vm_body

LOGIN, HOST = KeyPair.generate("login"), KeyPair.generate("host")


def _body(machine_yaml: str) -> dict:  # type: ignore[type-arg]
    profile = parse_profile("name: p\nworkloads:\n  - {name: a, rw: read}\nmachines:\n  - " + machine_yaml)
    return vm_body(profile.machines[0], tags={"diskbench": "true"}, nic_id="/nic/1", login=LOGIN, host_key=HOST)


def test_host_key_fingerprint_matches_what_ssh_will_see() -> None:
    import io

    key = paramiko.Ed25519Key.from_private_key(io.StringIO(HOST.private_openssh))
    assert fingerprint(key) == HOST.fingerprint


def test_cloud_init_hands_over_the_host_key_and_installs_tools() -> None:
    text = cloud_init(HOST)
    assert text.startswith("#cloud-config\n")
    doc = yaml.safe_load(text)
    assert doc["ssh_keys"]["ed25519_private"] == HOST.private_openssh
    assert doc["ssh_deletekeys"] is True and doc["packages"] == ["fio", "mdadm", "nvme-cli", "xfsprogs"]


def test_os_disk_with_cache_and_without() -> None:
    rw = _body("{name: m, region: westeurope, size: Standard_E8ds_v4, target: temp,"
               " os_disk: {type: Premium_LRS, size_gb: 128, caching: ReadWrite}}")["properties"]
    assert rw["storageProfile"]["osDisk"] == {"createOption": "FromImage", "caching": "ReadWrite",
                                              "deleteOption": "Delete", "diskSizeGB": 128,
                                              "managedDisk": {"storageAccountType": "Premium_LRS"}}
    none = _body("{name: m, region: westeurope, size: Standard_E8ds_v4, target: temp,"
                 " os_disk: {caching: None}}")["properties"]["storageProfile"]["osDisk"]
    assert none["caching"] == "None"


def test_ephemeral_os_disk_placement() -> None:
    os_disk = _body("{name: m, region: westeurope, size: Standard_E8ds_v4, target: temp,"
                    " os_disk: {ephemeral: CacheDisk, caching: ReadOnly, size_gb: 64}}")["properties"][
        "storageProfile"]["osDisk"]
    assert os_disk["diffDiskSettings"] == {"option": "Local", "placement": "CacheDisk"}
    assert os_disk["caching"] == "ReadOnly"


def test_data_disks_caching_striping_and_provisioned_performance() -> None:
    body = _body("{name: m, region: westeurope, size: Standard_D8ds_v4, zone: '1', target: {luns: [0, 1, 2]},"
                 " data_disks: [{count: 3, type: Premium_LRS, size_gb: 1024, caching: None},"
                 " {type: Premium_LRS, size_gb: 1024, caching: ReadOnly},"
                 " {type: UltraSSD_LRS, size_gb: 512, iops: 20000, mbps: 500}]}")
    disks = body["properties"]["storageProfile"]["dataDisks"]
    assert [(d["lun"], d["caching"], d["managedDisk"]["storageAccountType"]) for d in disks] == [
        (0, "None", "Premium_LRS"), (1, "None", "Premium_LRS"), (2, "None", "Premium_LRS"),
        (3, "ReadOnly", "Premium_LRS"), (4, "None", "UltraSSD_LRS")]
    assert disks[4]["diskIOPSReadWrite"] == 20000 and disks[4]["diskMBpsReadWrite"] == 500
    assert all(d["deleteOption"] == "Delete" for d in disks)
    assert body["zones"] == ["1"] and body["properties"]["additionalCapabilities"] == {"ultraSSDEnabled": True}


def test_login_is_by_key_only_and_nic_goes_with_the_vm() -> None:
    props = _body("{name: m, region: westeurope, size: Standard_E8ds_v4, target: temp}")["properties"]
    linux = props["osProfile"]["linuxConfiguration"]
    assert linux["disablePasswordAuthentication"] is True
    assert linux["ssh"]["publicKeys"][0]["keyData"] == LOGIN.public_openssh
    assert props["networkProfile"]["networkInterfaces"][0]["properties"] == {"deleteOption": "Delete"}
    assert base64.b64decode(props["osProfile"]["customData"]).decode().startswith("#cloud-config")
    assert props["storageProfile"]["imageReference"] == {"publisher": "Canonical", "offer": "ubuntu-24_04-lts",
                                                         "sku": "server", "version": "latest"}


def test_every_seed_machine_has_a_body() -> None:
    for m in load_profile("e8-family").profile.machines:
        body = vm_body(m, tags={}, nic_id="n", login=LOGIN, host_key=HOST)
        assert body["properties"]["hardwareProfile"]["vmSize"] == m.size


# --- the disk controller: NVMe on NVMe-only sizes, SCSI on other Generation 2 VMs ------------------------

def _controller(machine_yaml: str) -> str | None:
    storage = _body(machine_yaml)["properties"]["storageProfile"]
    return storage.get("diskControllerType")  # type: ignore[no-any-return]


def test_nvme_only_sizes_ask_for_the_nvme_controller() -> None:
    """v6 and Lsv4 sizes attach their disks over NVMe only (sizes.json: DiskControllerTypes NVMe): the body
    says so, with the default image (Ubuntu 24.04, Generation 2, tagged for NVMe)."""
    for size in ("Standard_D2ds_v6", "Standard_D4s_v6", "Standard_E2ds_v6", "Standard_L8s_v4"):
        assert _controller(f"{{name: m, region: westeurope, size: {size}, target: {{dir: /tmp}}}}") == "NVMe", size


def test_other_generation_2_vms_ask_for_scsi_and_generation_1_vms_for_nothing() -> None:
    """A SCSI size keeps SCSI, said outright on a Generation 2 VM; the property exists for Generation 2 VMs
    only, so a Generation 1 image leaves it out (Azure's default there is SCSI)."""
    assert _controller("{name: m, region: westeurope, size: Standard_D8ds_v5, target: temp}") == "SCSI"
    assert _controller("{name: m, region: westeurope, size: Standard_D8ds_v4, target: temp,"
                       " image: 'Canonical:0001-com-ubuntu-server-jammy:22_04-lts'}") is None
    assert _controller("{name: m, region: westeurope, size: Standard_D8ds_v4, target: temp,"
                       " image: 'Someone:custom:image'}") is None  # unknown image, a size that boots Gen1 too
    assert _controller("{name: m, region: westeurope, size: Standard_D8ds_v4, target: temp,"
                       " image: 'Debian:debian-12:12-gen2'}") == "SCSI"


def test_the_fake_resource_manager_takes_each_choice_and_refuses_the_wrong_ones() -> None:
    """The fake's own rules (tests/fake_arm_rules.py, from Azure's pages, not from vmspec) accept every body
    vmspec writes, and refuse a controller the size does not offer or one asked on a Generation 1 VM."""
    from ...fake_arm_rules import controller, disk_controller
    from .size_pages import sku

    cases = {"Standard_D2ds_v6": ("{name: m, region: westeurope, size: Standard_D2ds_v6, target: temp}", "NVMe"),
             "Standard_D2ds_v5": ("{name: m, region: westeurope, size: Standard_D2ds_v5, target: temp}", "SCSI"),
             "Standard_D2ds_v4": ("{name: m, region: westeurope, size: Standard_D2ds_v4, target: temp, image: "
                                  "'Canonical:0001-com-ubuntu-server-jammy:22_04-lts'}", "SCSI")}
    for size, (machine, expect) in cases.items():
        caps = {c["name"]: c["value"] for c in sku(size)["capabilities"]}
        body = _body(machine)
        assert controller(body, size, caps) is None, size
        assert disk_controller(body, caps) == expect, size
        wrong = {"NVMe": "SCSI", "SCSI": "NVMe"}[expect]
        body["properties"]["storageProfile"]["diskControllerType"] = wrong
        refused = controller(body, size, caps)
        assert refused is not None and refused[1] == "InvalidParameter", (size, refused)
