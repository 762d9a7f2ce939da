"""SSH hosts that other people also use: private workspaces, the job fio ran is the job sent, and
keys as ssh takes them (issue 24, items 4 and 5). Real sshd in lab namespaces, real fio."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from diskbench.platforms.linux.shell import PosixShell

from ..conftest import diskbench, needs_fio
from ..lab import Lab, LabHost

pytestmark = needs_fio
DEFAULTS = {"size": "4M", "runtime": "1s", "ramp_time": "0s", "ioengine": "psync"}
REAL_FIO = shutil.which("fio") or "/usr/bin/fio"


def profile(path: Path, host: LabHost, **extra: object) -> Path:
    doc = {"name": "shared", "defaults": DEFAULTS, "hosts": [host.profile_host(**extra)],
           "workloads": [{"name": "w", "rw": "randwrite", "bs": "4k"}]}
    path.write_text(yaml.safe_dump(doc))
    return path


def fio_wrapper(host: LabHost, body: str) -> Path:
    """``fio`` on this host runs ``body`` (with $job the job file, when there is one) first."""
    log = host.home / "wrapper.log"
    host.add_command("fio", f'job=""; for a in "$@"; do case "$a" in *.fio) job="$a";; esac; done\n'
                            f'LOG={log}\nif [ -n "$job" ]; then\n{body}\nfi\nexec {REAL_FIO} "$@"\n')
    return log


def test_the_workspace_is_private_and_fresh(lab: Lab, db: Path, tmp_path: Path) -> None:
    """Logged in as a sudo user (as on Azure), with another user on the host who made the folder the
    workspace used to be (/tmp/diskbench-USER/HOST, mode 0777) and tries to swap job files."""
    login, attacker = lab.add_sudo_user(), lab.add_user(f"dbx{lab.id}")
    host = lab.add_host()
    path_rule = Path(f"/etc/sudoers.d/diskbench-lab-{lab.id}-path")  # sudo finds this host's fio wrapper
    path_rule.write_text(f'Defaults:{login} secure_path="{host.bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin"\n')
    path_rule.chmod(0o440)
    old = Path(f"/tmp/diskbench-{login}/{host.name}")
    subprocess.run(["su", "-s", "/bin/sh", attacker, "-c", f"mkdir -p {old} && chmod 0777 {old.parent} {old}"],
                   check=True)
    try:
        log = fio_wrapper(host, 'root=$(dirname "$(dirname "$(dirname "$job")")")\n'
                                'stat -c "%a %U %n" "$root" >> $LOG\n'
                                f'su -s /bin/sh {attacker} -c "echo rw=randread > $job" 2>>$LOG && echo SWAPPED >>$LOG')
        out = diskbench("run", "--profile", str(profile(tmp_path / "p.yaml", host, user=login, sudo=True)),
                        "--known-hosts", str(lab.known_hosts), db=db)
        assert out.returncode == 0, out.stderr
        lines = log.read_text().splitlines()
        mode, owner, root = lines[0].split()
        assert (mode, owner) == ("700", login) and root.startswith("/tmp/diskbench-") and root != str(old.parent)
        assert "Permission denied" in log.read_text() and "SWAPPED" not in lines
        assert not Path(root).exists()  # removed at the end
        assert list(old.iterdir()) == []  # the other user's folder was never used
    finally:
        path_rule.unlink(missing_ok=True)
        shutil.rmtree(old.parent, ignore_errors=True)


def test_a_job_file_changed_on_the_host_fails_the_job(lab: Lab, db: Path, tmp_path: Path) -> None:
    host = lab.add_host()
    fio_wrapper(host, "sed -i 's/^rw=randwrite/rw=randread/' \"$job\"")  # as if swapped on the way
    out = diskbench("run", "--profile", str(profile(tmp_path / "p.yaml", host)), "--known-hosts",
                    str(lab.known_hosts), "--format", "json", db=db)
    assert out.returncode == 1, out.stderr
    assert "did not run the job diskbench sent: [w] fio read rw=randread (sent rw=randwrite)" in out.stderr
    assert '"results": []' in out.stdout  # no figure of the other job is kept


def test_workspace_of_a_user_without_root(lab: Lab, tmp_path: Path) -> None:
    """The workspace command as a plain user makes a folder of that user's, mode 0700."""
    user = lab.add_user(f"dby{lab.id}")
    out = subprocess.run(["su", "-s", "/bin/sh", user, "-c", PosixShell().make_workspace()],
                         capture_output=True, text=True, check=True)
    path = Path(out.stdout.strip())
    try:
        st = path.stat()
        assert oct(st.st_mode & 0o777) == "0o700" and st.st_uid == int(
            subprocess.run(["id", "-u", user], capture_output=True, text=True, check=True).stdout)
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize(("setup", "expected"), [
    ("open", "may be read by others (mode 0644); like ssh, diskbench does not use such a key (chmod 600"),
    ("missing", "does not exist (pass --key (or key_file:) with an existing private key)"),
    ("folder", "is not a file"),
])
def test_key_files_are_taken_as_ssh_takes_them(lab: Lab, db: Path, tmp_path: Path, setup: str,
                                               expected: str) -> None:
    host = lab.add_host()
    key = tmp_path / "id_ed25519"
    if setup == "open":
        shutil.copy(lab.user_key, key)
        key.chmod(0o644)
    elif setup == "folder":
        key.mkdir()
    out = diskbench("run", "--profile", str(profile(tmp_path / "p.yaml", host, key_file=str(key))),
                    "--known-hosts", str(lab.known_hosts), db=db)
    assert out.returncode == 1 and f"the SSH key {key} {expected}" in out.stderr, out.stderr
    assert "cannot reach" not in out.stderr
    assert "Accepted publickey" not in host.auth_log()  # no login was tried with it
    if setup == "open":
        key.chmod(0o600)
        ok = diskbench("run", "--profile", str(profile(tmp_path / "p.yaml", host, key_file=str(key))),
                       "--known-hosts", str(lab.known_hosts), db=db)
        assert ok.returncode == 0, ok.stderr
    assert os.geteuid() == 0  # the lab runs as root: an unreadable key is tested as a folder instead
