"""SSH as ssh does it: ~/.ssh/config (Host aliases, User, IdentityFile, ProxyJump through a real
jump host), the user's known_hosts, and failures that say which they are (issue 26, 1)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..conftest import TINY_PROFILE, diskbench, needs_fio
from ..lab import Lab

pytestmark = needs_fio


def home_with(tmp_path: Path, lab: Lab, config: str = "", key: bool = True) -> dict[str, str]:
    """A HOME of the test's: ~/.ssh with the lab's key (0600), the lab's known_hosts and ``config``;
    no agent."""
    home = tmp_path / "home"
    ssh = home / ".ssh"
    ssh.mkdir(parents=True, mode=0o700)
    if key:
        shutil.copy(lab.user_key, ssh / "lab_key")
        (ssh / "lab_key").chmod(0o600)
    shutil.copy(lab.known_hosts, ssh / "known_hosts")
    (ssh / "config").write_text(config)
    return {"HOME": str(home), "SSH_AUTH_SOCK": ""}


def test_host_alias_and_proxyjump_from_ssh_config(lab: Lab, db: Path, tmp_path: Path) -> None:
    bastion, target = lab.add_host(), lab.add_host()
    lab.route_between_hosts()
    env = home_with(tmp_path, lab, f"Host bastion\n  HostName {bastion.address}\n  User root\n"
                                   f"  IdentityFile ~/.ssh/lab_key\n"
                                   f"Host db1\n  HostName {target.address}\n  User root\n"
                                   f"  IdentityFile ~/.ssh/lab_key\n  ProxyJump bastion\n")
    profile = tmp_path / "tiny.yaml"
    profile.write_text(TINY_PROFILE)
    out = diskbench("run", "--profile", str(profile), "--host", "db1", "--format", "json", db=db, env=env)
    assert out.returncode == 0, out.stderr
    assert "db1: connecting" in out.stderr
    # the target was reached from the bastion's own address, not from this machine
    reached = [line for line in target.auth_log().splitlines() if line.startswith("Connection from")]
    assert reached and all(f"from {bastion.address} " in line for line in reached), reached
    assert any(line.startswith("Connection from") for line in bastion.auth_log().splitlines())


def test_failures_say_which_they_are(lab: Lab, db: Path, tmp_path: Path) -> None:
    host = lab.add_host()
    profile = tmp_path / "tiny.yaml"
    profile.write_text(TINY_PROFILE)
    # reached, key verified, nothing to log in with: not "cannot reach"
    env = home_with(tmp_path, lab, key=False)
    out = diskbench("run", "--profile", str(profile), "--host", f"root@{host.address}", db=db, env=env)
    assert out.returncode == 1
    assert f"authentication failed for root@{host.address} (tried: nothing: no agent and no key)" in out.stderr
    assert "cannot reach" not in out.stderr and "pass --key" in out.stderr
    # a key ssh would offer by default, which the host does not accept: named in what was tried
    other = tmp_path / "home" / ".ssh" / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    out = diskbench("run", "--profile", str(profile), "--host", f"root@{host.address}", db=db, env=env)
    assert f"authentication failed for root@{host.address} (tried: ~/.ssh/id_ed25519)" in out.stderr, out.stderr
    # nobody listening: unreachable
    out = diskbench("run", "--profile", str(profile), "--host", f"root@{host.address}:2", db=db, env=env)
    assert out.returncode == 1 and f"cannot reach {host.address}:2" in out.stderr
