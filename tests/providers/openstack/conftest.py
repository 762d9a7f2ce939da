"""The fake cloud and a clean OpenStack configuration for every test: nothing of the user's is read."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from diskbench.providers.openstack.session import Waits, connect
from diskbench.providers.openstack.spec import Spec, VolumeSpec
from tests.fake_openstack import FakeOpenStack

FAST = {"poll": 0.01, "active": 15.0, "console": 15.0, "volume": 15.0, "delete": 15.0, "conflict_retries": 5}


@pytest.fixture
def fake() -> Iterator[FakeOpenStack]:
    cloud = FakeOpenStack().start()
    try:
        yield cloud
    finally:
        cloud.stop()


@pytest.fixture
def os_config(fake: FakeOpenStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clouds.yaml in tmp_path naming the fake as ``fake`` (password) and ``fake-app`` (app credential)."""
    for key in list(os.environ):
        if key.startswith("OS_"):
            monkeypatch.delenv(key)
    path = tmp_path / "clouds.yaml"
    path.write_text(fake.clouds_yaml("fake") + fake.clouds_yaml("fake-app", application_credential=True)
                    .removeprefix("clouds:\n"))
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(path))
    monkeypatch.setenv("OS_CLIENT_SECURE_FILE", str(tmp_path / "no-secure.yaml"))
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.config/openstack of whoever runs the tests
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    return path


@pytest.fixture
def conn(os_config: Path):  # type: ignore[no-untyped-def]
    connection = connect("fake")
    try:
        yield connection
    finally:
        connection.close()


@pytest.fixture
def waits() -> Waits:
    return Waits(**FAST)  # type: ignore[arg-type]


def public_key() -> str:
    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode() + " run"


def spec(**changes: object) -> Spec:
    """The seed article's machine: an i1-180 on Ext-Net (here with two Cinder volumes as well)."""
    fields: dict[str, object] = {"name": "db01", "cloud": "fake", "flavor": "i1-180", "image": "Ubuntu 24.04",
                                 "network": "Ext-Net", "volumes": (VolumeSpec(size_gb=100, type="high-speed",
                                                                              count=2),)}
    fields.update(changes)
    return Spec(**fields)  # type: ignore[arg-type]
