"""Provision, host key from the console, teardown; faults; crashes: real openstacksdk, fake cloud."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from diskbench.errors import DiskbenchError
from diskbench.providers.openstack.journal import Journal
from diskbench.providers.openstack.provision import provision
from diskbench.providers.openstack.session import Waits, connect
from diskbench.providers.openstack.teardown import find_leftovers, teardown
from tests.fake_openstack import NO_VALID_HOST, Boot, FakeOpenStack, fingerprint, host_key_line

from .conftest import FAST, public_key, spec

RUN = "20261122-101500-ab12"


def _boot_with(fake: FakeOpenStack, **boot: Any) -> list[str]:
    """Servers boot with a known host key; returns the list it is put in."""
    keys: list[str] = []

    def on_boot(server: dict[str, Any]) -> Boot:
        keys.append(host_key_line(f"root@{server['name']}"))
        return Boot(address=fake.next_address(), host_keys=[keys[-1]], **boot)

    fake.on_boot = on_boot
    return keys


def test_provision_reads_the_host_key_and_teardown_leaves_nothing(fake: FakeOpenStack, conn: Any, waits: Waits,
                                                                  tmp_path: Path) -> None:
    keys = _boot_with(fake, console_polls=3)
    journal = Journal(tmp_path / "journal.jsonl")
    login = public_key()
    created = provision(conn, RUN, spec(), "203.0.113.7", login, journal=journal, waits=waits)
    assert created.host_key.fingerprint == fingerprint(keys[0]) and created.host_key.type == "ssh-ed25519"
    assert (created.address, created.port, created.user) == ("198.51.100.11", 22, "ubuntu")
    assert created.flavor.local_nvme == 4 and created.key_name == f"diskbench-{RUN}"
    assert [(v.size_gb, v.type, v.device) for v in created.volumes] == [(100, "high-speed", "/dev/vdb"),
                                                                        (100, "high-speed", "/dev/vdc")]
    assert all(v["status"] == "in-use" for v in fake.volumes.values())
    # the console was read until cloud-init had printed the keys: nothing was trusted before
    assert len(fake.calls("POST", r"/servers/[^/]+/action$")) == 4
    server = next(iter(fake.servers.values()))
    assert server["name"] == f"diskbench-{RUN}-db01" and server["tags"] == ["diskbench", f"diskbench-run-{RUN}"]
    assert server["metadata"]["diskbench-run"] == RUN and {"diskbench-created", "diskbench-expires"} <= \
        set(server["metadata"])
    assert fake.keypairs[f"diskbench-{RUN}"]["public_key"] == login
    group = next(iter(fake.security_groups.values()))
    ssh = [r for r in group["security_group_rules"] if r["direction"] == "ingress"]
    assert [(r["protocol"], r["port_range_min"], r["remote_ip_prefix"]) for r in ssh] == \
        [("tcp", 22, "203.0.113.7/32")]
    assert journal.open_runs()[RUN]["cloud"] == "fake"

    deleted = teardown(conn, RUN, journal=journal, waits=waits)
    assert deleted == [f"server diskbench-{RUN}-db01", f"volume diskbench-{RUN}-db01-vol0",
                       f"volume diskbench-{RUN}-db01-vol1", f"keypair diskbench-{RUN}",
                       f"security group diskbench-{RUN}"]
    assert fake.empty() and journal.open_runs() == {}
    assert teardown(conn, RUN, waits=waits) == []  # safe twice


def test_user_keypair_and_group_are_used_and_kept(fake: FakeOpenStack, conn: Any, waits: Waits) -> None:
    _boot_with(fake, port=2222)
    fake.keypairs["mykey"] = {"name": "mykey", "public_key": public_key(), "type": "ssh", "fingerprint": "x"}
    conn.network.create_security_group(name="ssh-from-office", description="the user's own")
    created = provision(conn, RUN, spec(key_name="mykey", security_group="ssh-from-office", volumes=(),
                                        image="Debian 12"), "any", None, waits=waits)
    assert (created.key_name, created.security_group, created.user, created.port) == ("mykey", None, "debian", 2222)
    assert set(fake.keypairs) == {"mykey"} and len(fake.security_groups) == 1
    teardown(conn, RUN, waits=waits)
    assert not fake.servers and set(fake.keypairs) == {"mykey"} and len(fake.security_groups) == 1


def _fails(conn: Any, waits: Waits, expected: str, **changes: Any) -> str:
    with pytest.raises(DiskbenchError) as info:
        provision(conn, RUN, spec(**changes), "203.0.113.7", public_key(), waits=waits)
    text = str(info.value)
    assert expected in text and "\n" not in text and "Traceback" not in text, text
    return text


def test_no_valid_host(fake: FakeOpenStack, conn: Any, waits: Waits) -> None:
    fake.no_valid_host = True
    text = _fails(conn, waits, f"db01: server i1-180 went to ERROR: {NO_VALID_HOST}")
    assert "try another availability zone, region or flavor" in text
    assert fake.empty()


@pytest.mark.parametrize("status", [403, 413])
def test_nova_quota_exceeded(fake: FakeOpenStack, conn: Any, waits: Waits, status: int) -> None:
    fake.quota_fault = status
    text = _fails(conn, waits, f"creating server diskbench-{RUN}-db01: OpenStack said {status}: Quota exceeded "
                               "for cores: Requested 32")
    assert "more quota" in text and fake.empty()


def test_quota_counted_by_the_fake_itself(fake: FakeOpenStack, conn: Any, waits: Waits) -> None:
    fake.compute_limits["maxTotalRAMSize"] = 100000
    _fails(conn, waits, "OpenStack said 403: Quota exceeded for ram: Requested 184320, but already used 0 of 100000")
    assert fake.empty()


def test_cinder_quota_exceeded(fake: FakeOpenStack, conn: Any, waits: Waits) -> None:
    fake.volume_limits["maxTotalVolumeGigabytes"] = 150
    _fails(conn, waits, "creating volume diskbench-20261122-101500-ab12-db01-vol1 (100 GB high-speed): OpenStack "
                        "said 413: VolumeSizeExceedsAvailableQuota")
    assert fake.empty()


def test_flavor_not_found(fake: FakeOpenStack, conn: Any, waits: Waits) -> None:
    _fails(conn, waits, "db01: flavor 'i1-999' does not exist in this cloud", flavor="i1-999")
    # ... and when it disappears between the lookup and the create, Nova's own 400
    fake.faults["POST /compute/v2.1/servers$"] = [400, {"badRequest": {
        "code": 400, "message": "Flavor a8b2c7e4-1f0d-4c55-9e0a-0000000000b4 could not be found."}}, 1]
    _fails(conn, waits, "OpenStack said 400: Flavor a8b2c7e4-1f0d-4c55-9e0a-0000000000b4 could not be found.")
    assert fake.empty()


def test_conflicts_on_delete_are_retried(fake: FakeOpenStack, conn: Any, waits: Waits) -> None:
    _boot_with(fake)
    provision(conn, RUN, spec(), "203.0.113.7", public_key(), waits=waits)
    conflict = {"conflictingRequest": {"code": 409, "message": "Cannot 'delete' instance while it is in "
                                                               "task_state image_uploading"}}
    fake.faults["DELETE /compute/v2.1/servers/"] = [409, conflict, 2]
    fake.faults["DELETE /compute/v2.1/os-keypairs/"] = [409, {"conflictingRequest": {"code": 409, "message": "busy"}},
                                                        1]
    fake.faults["DELETE /network/v2.0/security-groups/"] = [409, {"NeutronError": {
        "type": "SecurityGroupInUse", "message": "Security Group in use.", "detail": ""}}, 2]
    teardown(conn, RUN, waits=waits)
    assert fake.empty()
    assert [len(fake.calls("DELETE", path)) for path in ("/servers/", "/os-keypairs/", "/security-groups/")] == \
        [3, 2, 3]


def test_conflict_that_never_ends_is_one_line_and_cleanup_finishes_later(fake: FakeOpenStack, conn: Any,
                                                                        waits: Waits) -> None:
    _boot_with(fake)
    provision(conn, RUN, spec(volumes=()), "203.0.113.7", public_key(), waits=waits)
    fake.faults["DELETE /compute/v2.1/servers/"] = [409, {"conflictingRequest": {"code": 409, "message": "busy"}}]
    with pytest.raises(DiskbenchError) as info:
        teardown(conn, RUN, waits=waits)
    assert "not everything was deleted: deleting server" in str(info.value) and "OpenStack said 409" in str(info.value)
    assert f"diskbench cleanup --run {RUN}" in str(info.value)
    del fake.faults["DELETE /compute/v2.1/servers/"]
    teardown(conn, RUN, waits=waits)
    assert fake.empty()


def test_token_expiry_mid_run_logs_in_again(fake: FakeOpenStack, conn: Any, waits: Waits) -> None:
    keys = _boot_with(fake)
    original = fake.on_boot
    assert original is not None

    def boot_and_expire(server: dict[str, Any]) -> Boot:
        fake.expire_tokens()  # while the server builds, the token runs out
        return original(server)

    fake.on_boot = boot_and_expire
    created = provision(conn, RUN, spec(), "203.0.113.7", public_key(), waits=waits)
    assert created.host_key.fingerprint == fingerprint(keys[0])
    assert len(fake.auth_requests()) == 2
    assert any(r.token and not fake._token_ok(r.token) for r in fake.requests)  # a request was refused...
    fake.expire_tokens()
    teardown(conn, RUN, waits=waits)  # ... and teardown too logs in again
    assert fake.empty() and len(fake.auth_requests()) == 3


def test_interrupt_while_waiting_deletes_everything(fake: FakeOpenStack, conn: Any) -> None:
    _boot_with(fake, console_polls=10**6)  # cloud-init never prints the keys
    waits = Waits(**FAST)  # type: ignore[arg-type]

    def line(text: str) -> None:
        if "waiting for the host keys" in text:
            threading.Timer(0.3, waits.stop.set).start()  # what a SIGTERM handler does, from another thread

    with pytest.raises(DiskbenchError, match="interrupted while waiting for db01's SSH host keys"):
        provision(conn, RUN, spec(), "203.0.113.7", public_key(), waits=waits, line=line)
    assert fake.empty()


def test_ctrl_c_in_the_main_thread_deletes_everything(fake: FakeOpenStack, conn: Any, waits: Waits) -> None:
    _boot_with(fake)

    def line(text: str) -> None:
        if "waiting for the host keys" in text:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        provision(conn, RUN, spec(), "203.0.113.7", public_key(), waits=waits, line=line)
    assert fake.empty()


def test_console_without_keys_times_out_and_never_trusts(fake: FakeOpenStack, conn: Any) -> None:
    _boot_with(fake, console=lambda: "[    0.000000] Linux version 6.8.0\nlogin: \n")
    waits = Waits(**{**FAST, "console": 0.5})  # type: ignore[arg-type]
    with pytest.raises(DiskbenchError, match="waiting for db01's SSH host keys on its console.*cloud-init"):
        provision(conn, RUN, spec(volumes=()), "203.0.113.7", public_key(), waits=waits)
    assert fake.empty()


CRASHER = """
import sys
from diskbench.providers.openstack.provision import provision
from diskbench.providers.openstack.session import Waits, connect
conn = connect("fake")
provision(conn, sys.argv[1], __import__("tests.providers.openstack.conftest", fromlist=["spec"]).spec(),
          "203.0.113.7", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBIfa9X0uO1K/wiSDcAYB9dXVvS91+2F3SCf3gh2ECYy x",
          waits=Waits(poll=0.01), line=lambda text: print(text, flush=True))
"""


def test_teardown_after_a_crash_finds_everything_by_run_id(fake: FakeOpenStack, os_config: Path,
                                                           waits: Waits) -> None:
    _boot_with(fake, console_polls=10**6)
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen([sys.executable, "-c", CRASHER, RUN], env=env, stdout=subprocess.PIPE, text=True,
                            cwd=root)
    try:
        assert proc.stdout is not None
        for text in proc.stdout:
            if "waiting for the host keys" in text:
                break
        time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGKILL)  # no handler, no finally: a crash
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    assert len(fake.servers) == 1 and len(fake.volumes) == 2 and fake.keypairs and fake.security_groups
    conn = connect("fake")
    found = find_leftovers(conn, run_id=RUN)
    assert [(f.run_id, sorted(f.resources)) for f in found] == [(RUN, sorted([
        f"server diskbench-{RUN}-db01", f"volume diskbench-{RUN}-db01-vol0", f"volume diskbench-{RUN}-db01-vol1",
        f"keypair diskbench-{RUN}", f"security group diskbench-{RUN}"]))]
    teardown(conn, RUN, waits=waits)
    assert fake.empty()


def test_leftovers_by_expiry_age_run_and_journal(fake: FakeOpenStack, conn: Any, waits: Waits,
                                                 tmp_path: Path) -> None:
    _boot_with(fake)
    journal = Journal(tmp_path / "journal.jsonl")
    for run in ("r1", "r1-2"):
        provision(conn, run, spec(volumes=(), flavor="b2-7"), "203.0.113.7", public_key(), waits=waits,
                  journal=journal, lifetime=timedelta(hours=1 if run == "r1" else 6))
    now = datetime.now(timezone.utc)
    assert {f.run_id: f.reason for f in find_leftovers(conn, now=now)} == {}
    assert {f.run_id: f.reason for f in find_leftovers(conn, journal=journal, now=now)} == \
        {"r1": "in the journal", "r1-2": "in the journal"}
    later = now + timedelta(hours=2)
    assert {f.run_id: f.reason for f in find_leftovers(conn, now=later)} == {"r1": "expired"}
    assert {f.run_id for f in find_leftovers(conn, older_than=timedelta(minutes=30), now=later)} == {"r1", "r1-2"}
    teardown(conn, "r1", waits=waits, journal=journal)  # run r1 must not take r1-2's server
    assert [s["name"] for s in fake.servers.values()] == ["diskbench-r1-2-db01"]
    assert [f.run_id for f in find_leftovers(conn, journal=journal)] == ["r1-2"]
    teardown(conn, "r1-2", waits=waits, journal=journal)
    assert fake.empty() and journal.open_runs() == {}


def test_the_console_key_is_the_key_sshd_presents(fake: FakeOpenStack, conn: Any, waits: Waits, lab: Any,
                                                 tmp_path: Path) -> None:
    """A server that "boots" as a lab host with a real sshd: SSH with only the console's key succeeds."""
    import paramiko

    key_file = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key_file)], check=True)

    def on_boot(server: dict[str, Any]) -> Boot:
        host = lab.add_host(trusted=False)  # not in any known_hosts: only the console vouches for it
        with open(lab.authorized_keys, "a") as fh:
            fh.write(fake.keypairs[server["key_name"]]["public_key"] + "\n")  # what cloud-init does with it
        return Boot(address=host.address, host_keys=[(host.home / "ssh_host_ed25519_key.pub").read_text().strip()])

    fake.on_boot = on_boot
    created = provision(conn, RUN, spec(volumes=(), user="root"), "127.0.0.1",
                        key_file.with_suffix(".pub").read_text(), waits=waits)
    assert created.host_key.fingerprint == lab.hosts[0].host_key_fingerprint()
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    client.get_host_keys().add(created.address, created.host_key.type,
                               paramiko.Ed25519Key(data=base64.b64decode(created.host_key.base64)))
    try:
        client.connect(created.address, port=created.port, username=created.user, key_filename=str(key_file),
                       timeout=10, allow_agent=False, look_for_keys=False)
        _, out, _ = client.exec_command("echo booted")
        assert out.read().decode().strip() == "booted"
    finally:
        client.close()
    teardown(conn, RUN, waits=waits)
    assert fake.empty()


def test_bad_input_is_refused_before_anything_exists(fake: FakeOpenStack, conn: Any, waits: Waits,
                                                     tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.jsonl")
    for run, cidr, message in (("a/b", "203.0.113.7", "run id 'a/b' cannot name OpenStack resources"),
                               (RUN, "203.0.113.7/99", "'203.0.113.7/99' is not an address or network")):
        with pytest.raises(DiskbenchError, match=message):
            provision(conn, run, spec(), cidr, public_key(), waits=waits, journal=journal)
    assert all(r.path.startswith("/identity") for r in fake.requests) and not journal.path.exists()  # the login
