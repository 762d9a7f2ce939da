"""A plain guest: booted from the shared image, reached over SSH with the host key the test generated."""

from __future__ import annotations

import base64
import hashlib
import time

import paramiko
import pytest

from tests.guestlab.guest import GuestLab, KeyPair
from tests.guestlab.spec import DiskSpec, plain

pytestmark = pytest.mark.guest


def openssh_fingerprint(key: paramiko.PKey) -> str:
    """What ssh-keygen -lf prints: SHA256 of the key blob, unpadded base64."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode().rstrip("=")


def test_plain_guest_login_pins_the_generated_host_key(guest_lab: GuestLab) -> None:
    guest = guest_lab.start(plain(disks=[DiskSpec("data0", bus="virtio", size_mib=16)]))
    print(f"plain guest: boot to 'sshd started' {guest.boot_seconds:.1f} s")
    assert (guest.address, guest.user) == ("127.0.0.1", "root")
    assert guest.layout.disks[0].name == "data0"

    rc, out, err = guest.run("hostname; ls /dev/disk/by-id/; ls /etc/ssh/ | grep -c ssh_host_ || true")
    assert rc == 0, err
    hostname, *links, image_keys = out.split()
    assert hostname == "plain"
    assert {"virtio-os-disk", "virtio-data0"} <= set(links)
    assert image_keys == "0"  # the image holds no host key; this one came by fw_cfg
    assert guest.run("exit 3") == (3, "", "")

    # The key the guest presents is the one the test made, as ssh-keygen prints it.
    served = guest.served_host_key()
    assert openssh_fingerprint(served) == guest.host_key_fingerprint
    assert f"{served.get_name()} {served.get_base64()}" == " ".join(guest.host_key.split()[:2])
    assert guest.profile_host()["host_key"] == guest.host_key_fingerprint

    # A wrong pinned key is refused right after the key exchange: sshd never sees an auth attempt.
    log_before = guest.run("wc -l < /run/lab/sshd.log")[1]
    wrong = KeyPair.generate(guest_lab.root / "wrong_host_key", "wrong")
    with pytest.raises(paramiko.BadHostKeyException):
        guest.connect(host_key=wrong.public_line, timeout=20)
    deadline = time.monotonic() + 20
    new: list[str] = []
    while time.monotonic() < deadline and not any("[preauth]" in line for line in new):
        new = guest.run(f"tail -n +{int(log_before) + 1} /run/lab/sshd.log")[1].splitlines()
        time.sleep(0.2)
    ports = [line.split(" port ")[1].split()[0] for line in new if line.startswith("Connection from")]
    # the refused connection, and only it, ended before authentication (the other connections in
    # the log are this test's own guest.run sessions, which log in)
    refused = [p for p in ports if any(f"port {p}" in line and "[preauth]" in line for line in new)]
    assert len(refused) == 1, new
    ports = refused
    about_it = [line for line in new if f"port {ports[0]}" in line]
    assert any("[preauth]" in line for line in about_it), about_it
    assert not any(w in line for line in about_it for w in ("Accepted", "Failed", "Postponed", "session")), about_it

    # close() powers the guest off over SSH (QEMU exits 0, not by a signal) and deletes the lab's files.
    guest_lab.close()
    assert guest.proc.returncode == 0, guest.proc.returncode
    assert not guest_lab.root.exists()
