"""Connecting (clouds.yaml, OS_* variables, every way it fails) and pre-flight, with the real openstacksdk."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from diskbench.errors import DiskbenchError
from diskbench.providers.openstack.hostkeys import host_keys
from diskbench.providers.openstack.preflight import preflight
from diskbench.providers.openstack.session import connect
from diskbench.providers.openstack.spec import FlavorInfo, VolumeSpec
from tests.fake_openstack import FakeOpenStack, cloud_init_console, host_key_line

from .conftest import spec


def test_importing_the_package_does_not_load_the_sdk() -> None:
    code = "import sys, diskbench.providers.openstack; print(sorted({'openstack', 'keystoneauth1'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("cloud", ["fake", "fake-app"])
def test_clouds_yaml_with_password_or_application_credential(fake: FakeOpenStack, os_config: Path,
                                                              cloud: str) -> None:
    conn = connect(cloud)
    assert conn.compute.find_flavor("i1-180", ignore_missing=False).vcpus == 32
    method = fake.auth_requests()[0].body["auth"]["identity"]["methods"]
    assert method == (["application_credential"] if cloud == "fake-app" else ["password"])


def test_os_environment_variables(fake: FakeOpenStack, os_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(os_config.parent / "absent.yaml"))
    for key, value in fake.os_environ().items():
        monkeypatch.setenv(key, value)
    conn = connect(None)
    assert conn.network.find_network("Ext-Net", ignore_missing=False).name == "Ext-Net"
    assert fake.auth_requests()[0].body["auth"]["identity"]["password"]["user"]["name"] == "demo"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connect_failures_are_one_line(fake: FakeOpenStack, os_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def error(cloud: str | None) -> str:
        with pytest.raises(DiskbenchError) as info:
            connect(cloud)
        text = str(info.value)
        assert "\n" not in text and "Traceback" not in text
        return text

    assert "cloud 'nosuch'" in error("nosuch") and "clouds.yaml" in error("nosuch")
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(os_config.parent / "absent.yaml"))
    assert "no OpenStack credentials" in error(None) and "openrc" in error(None)
    for key, value in {**fake.os_environ(), "OS_PASSWORD": "wrong"}.items():
        monkeypatch.setenv(key, value)
    assert "Keystone refused the credentials" in error(None)
    port = _closed_port()
    monkeypatch.setenv("OS_AUTH_URL", f"http://127.0.0.1:{port}/identity/v3")
    assert f"cannot reach http://127.0.0.1:{port}/identity/v3 (connection refused)" in error(None)


def test_preflight_lists_every_problem_at_once(fake: FakeOpenStack, conn: object) -> None:
    fake.compute_limits["maxTotalCores"] = 40
    fake.volume_limits["maxTotalVolumeGigabytes"] = 300
    before = len(fake.requests)
    bad = spec(name="bad", flavor="i9-999", image="Windows 95", network="Int-Net", key_name="nokey",
               volumes=(VolumeSpec(size_gb=10, type="platinum"),))
    problems = [str(p) for p in preflight(conn, [spec(), spec(name="db02"), bad])]  # type: ignore[arg-type]
    expected = ["bad: flavor 'i9-999' does not exist in this cloud (use one of b2-7, i1-180)",
                "bad: image 'Windows 95' does not exist", "bad: network 'Int-Net' does not exist",
                "bad: keypair 'nokey' does not exist", "bad: volume type 'platinum' does not exist",
                "quota: cores: 64 needed, 40 of 40 free", "quota: volume gigabytes: 410 GB needed, 300 GB of 300 GB"]
    for text in expected:
        assert any(p.startswith(text) for p in problems), (text, problems)
    assert len(problems) == len(expected), problems
    assert not [r for r in fake.requests[before:] if r.method != "GET"]  # nothing created


def test_preflight_reads_the_local_nvme_of_i1_180(fake: FakeOpenStack, conn: object) -> None:
    seen: dict[str, FlavorInfo] = {}
    assert preflight(conn, spec(), seen) == []  # type: ignore[arg-type]
    i1 = seen["i1-180"]
    assert (i1.vcpus, i1.ram_mb, i1.local_nvme) == (32, 184320, 4)
    assert i1.nvme_source == "pci_passthrough:alias=nvme-1800g:4"
    fake.images["3f6c1d2e-8b4a-4f7e-9c1d-2e3f4a5b6c7d"]["hw_disk_bus"] = "nvme"
    preflight(conn, spec(volumes=()), seen)  # type: ignore[arg-type]
    assert "not local NVMe" in seen["i1-180"].notes[0]


def test_preflight_wants_a_login_user(fake: FakeOpenStack, conn: object) -> None:
    fake.images["9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"].update(name="Appliance", os_distro=None, os_admin_user=None)
    problems = [str(p) for p in preflight(conn, spec(image="Appliance", volumes=()))]  # type: ignore[arg-type]
    assert problems == ["db01: cannot tell the login user of image 'Appliance' (set user: to the image's default "
                        "user (e.g. ubuntu, debian))"]
    assert preflight(conn, spec(image="Appliance", volumes=(), user="admin")) == []  # type: ignore[arg-type]


def test_host_keys_from_cloud_inits_console(tmp_path: Path) -> None:
    keys = [host_key_line("root@db01")]
    rsa = tmp_path / "rsa"
    subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(rsa)], check=True)
    keys.append(rsa.with_suffix(".pub").read_text().strip())
    console = cloud_init_console(keys[::-1], "db01")
    found = host_keys(console)
    assert found is not None and [k.type for k in found] == ["ssh-ed25519", "ssh-rsa"]  # ed25519 first
    for key, line in zip(found, keys, strict=True):
        (tmp_path / "k.pub").write_text(line + "\n")
        keygen = subprocess.run(["ssh-keygen", "-lf", str(tmp_path / "k.pub")], capture_output=True, text=True,
                                check=True).stdout.split()[1]
        assert key.fingerprint == keygen  # exactly what ssh-keygen -lf shows
    assert host_keys(console[: console.index("-----END SSH HOST KEY KEYS")]) is None  # not complete yet
    assert host_keys("[    0.000000] Linux version 6.8.0\n") is None
    forged = console.replace(found[0].base64, host_key_line().split()[1])
    with pytest.raises(DiskbenchError, match="not among the fingerprints cloud-init printed"):
        host_keys(forged, "db01")
