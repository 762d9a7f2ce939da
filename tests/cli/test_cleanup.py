"""``diskbench cleanup`` looks at every provider that creates machines (issue 24, item 17).

One that is not set up or cannot log in is skipped with a line saying why and the others still
run; only a provider that was set up and failed, or the one named with ``--provider``, fails the
command. The clouds are the fakes (real SDKs over HTTP); nothing of the user's configuration is read.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from diskbench.providers.openstack.journal import Journal
from diskbench.providers.openstack.provider import JOURNAL
from diskbench.providers.openstack.provision import provision
from diskbench.providers.openstack.session import Waits, connect
from diskbench.providers.openstack.spec import Spec

from ..conftest import diskbench
from ..fake_arm import SUB
from ..fake_openstack import FakeOpenStack

RUN = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-cl01")  # a fresh run: not expired
NO_AZURE = ("not logged in: no subscription found; run `az login`, or set AZURE_SUBSCRIPTION_ID with "
            "AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET")
NO_OPENSTACK = "no cloud to look in: set OS_CLOUD to a clouds.yaml entry, or source your project's openrc file"
NO_CREDENTIALS = ("no Azure credentials (DefaultAzureCredential failed to retrieve a token from the included "
                  "credentials.)")
LEFT = f"server diskbench-{RUN}-db01, security group diskbench-{RUN}, keypair diskbench-{RUN}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An environment with no cloud set up: no Azure login, no OS_* variables, an empty home."""
    env = {k: "" for k in os.environ if k.startswith(("AZURE_", "OS_", "DISKBENCH_ARM_"))}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config"),
               AZURE_CONFIG_DIR=str(tmp_path / ".azure"), OS_CLIENT_SECURE_FILE=str(tmp_path / "none.yaml"),
               OS_CLIENT_CONFIG_FILE=str(tmp_path / "clouds.yaml"))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def _leftovers(fake: FakeOpenStack, tmp_path: Path, *, journal: bool) -> None:
    """A run's server, keypair and security group in the fake cloud ``fake``, as a crashed run leaves them
    (its journal entry beside the store when ``journal``)."""
    (tmp_path / "clouds.yaml").write_text(fake.clouds_yaml("fake"))
    fake.delete_polls = 0  # cleanup's teardown finds the server gone at its first look
    conn = connect("fake")
    try:
        provision(conn, RUN, Spec(name="db01", cloud="fake", flavor="i1-180", image="Ubuntu 24.04",
                                  network="Ext-Net"), "203.0.113.7", "ssh-ed25519 AAAA run",
                  journal=Journal(tmp_path / JOURNAL) if journal else None, waits=Waits(poll=0.01))
    finally:
        conn.close()
    assert fake.servers and fake.keypairs and fake.security_groups


def test_nothing_set_up_skips_every_provider_saying_why(home: dict[str, str], tmp_path: Path) -> None:
    out = diskbench("cleanup", db=tmp_path / "db.sqlite", env=home)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"azure: skipped ({NO_AZURE})", f"openstack: skipped ({NO_OPENSTACK})",
                                       "nothing to clean up"]


def test_a_failed_login_is_skipped_and_the_next_provider_still_cleans_up(
        fake: FakeOpenStack, home: dict[str, str], tmp_path: Path) -> None:
    _leftovers(fake, tmp_path, journal=True)  # the journal says which cloud: no OS_CLOUD needed
    env = {**home, "AZURE_SUBSCRIPTION_ID": SUB}  # a subscription, but no credentials for it
    out = diskbench("cleanup", db=tmp_path / "db.sqlite", env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"azure: skipped ({NO_CREDENTIALS}; run `az login`"), lines
    assert lines[1:] == [f"openstack: deleted run {RUN} on fake (in the journal: {LEFT})"]
    assert fake.empty()


def test_a_provider_that_is_set_up_and_fails_fails_cleanup_after_the_others_ran(
        fake: FakeOpenStack, home: dict[str, str], tmp_path: Path) -> None:
    _leftovers(fake, tmp_path, journal=False)
    env = {**home, "OS_CLOUD": "fake", "DISKBENCH_ARM_URL": "http://127.0.0.1:9", "DISKBENCH_ARM_TOKEN": "t",
           "AZURE_SUBSCRIPTION_ID": SUB}
    out = diskbench("cleanup", "--dry-run", "--older-than", "0s", db=tmp_path / "db.sqlite", env=env)
    assert out.returncode == 1, out.stderr
    assert out.stdout.splitlines() == [
        f"openstack: would delete run {RUN} on the OS_* cloud (older than 0:00:00: {LEFT})"]
    assert out.stderr.splitlines()[-1] == (
        "error: azure: listing diskbench's resource groups: cannot reach Azure Resource Manager at "
        "http://127.0.0.1:9 (check the network, a proxy, or DISKBENCH_ARM_URL; nothing was changed)")
    assert fake.servers  # a dry run


def test_a_run_the_store_does_not_know_is_looked_for_by_its_id(
        fake: FakeOpenStack, home: dict[str, str], tmp_path: Path) -> None:
    _leftovers(fake, tmp_path, journal=False)
    db = tmp_path / "db.sqlite"
    out = diskbench("cleanup", "--provider", "openstack", "--run", RUN, db=db, env={**home, "OS_CLOUD": "fake"})
    assert out.returncode == 0, out.stderr
    assert f"run {RUN} is not in {db}; looking for it in the clouds by its id" in out.stderr.splitlines()
    assert out.stdout.splitlines() == [f"openstack: deleted run {RUN} on the OS_* cloud (run {RUN}: {LEFT})"]
    assert fake.empty()


@pytest.mark.parametrize(("provider", "subscription", "error"), [
    ("openstack", "", f"error: openstack: {NO_OPENSTACK}"),
    ("azure", "", f"error: azure: {NO_AZURE}"),
    ("azure", SUB, f"error: azure: {NO_CREDENTIALS} (run `az login`"),
])
def test_the_provider_named_must_work(home: dict[str, str], tmp_path: Path, provider: str, subscription: str,
                                      error: str) -> None:
    out = diskbench("cleanup", "--provider", provider, db=tmp_path / "db.sqlite",
                    env={**home, "AZURE_SUBSCRIPTION_ID": subscription})
    assert out.returncode == 1, out.stderr
    assert out.stderr.splitlines()[-1].startswith(error), out.stderr
    assert out.stdout == ""


def test_older_than_that_is_no_duration_is_a_one_line_usage_error(home: dict[str, str], tmp_path: Path) -> None:
    out = diskbench("cleanup", "--older-than", "bogus", db=tmp_path / "db.sqlite", env=home)
    assert out.returncode == 2
    assert out.stderr == "error: --older-than: 'bogus' is not a duration (use e.g. 30s, 2m)\n"
