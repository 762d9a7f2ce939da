"""A lab of SSH hosts for tests: network namespaces, real sshd, loop devices as disks.

Each host lives in its own network namespace with its own address (198.18.0.0/15, the
benchmarking range), runs the distribution's sshd with generated host and user keys, and gets
loop devices as its disks; a cgroup v1 blkio throttle can cap a device like a cloud disk.
Everything is named after the lab's random id and removed by that id in ``close()``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

BLKIO = Path("/sys/fs/cgroup/blkio")
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
MARK = "diskbench-lab-"  # a lab's names: /run/<MARK><id>, its sudoers file, its users' comment


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check)


def owner_mark() -> str:
    """This process as a lab's owner: pid and start time (a pid alone can be reused); what
    tests/lab_leftovers.py reads to tell a live lab from a killed session's."""
    return f"{os.getpid()} {start_time(os.getpid())}"


def start_time(pid: int) -> str:
    """A process's start time (field 22 of its stat, in clock ticks); empty when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def lab_supported() -> str | None:
    """Why the lab cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, loop devices, sshd)"
    for tool in ("ip", "losetup", "ssh-keygen", "nsenter"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not Path(SSHD).exists():
        return "openssh-server is not installed"
    return None


@dataclass
class LabHost:
    lab: Lab
    name: str
    index: int
    address: str
    ns: str
    veth: str
    home: Path
    fio_missing: bool = False
    sftp: bool = True
    loops: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    cgroup: Path | None = None

    @property
    def destination(self) -> str:
        return f"root@{self.address}"

    def host_key_fingerprint(self) -> str:
        out = sh("ssh-keygen", "-lf", str(self.home / "ssh_host_ed25519_key.pub")).stdout
        return out.split()[1]

    def profile_host(self, **extra: object) -> dict[str, object]:
        return {"name": self.name, "address": self.address, "user": "root",
                "key_file": str(self.lab.user_key), **extra}

    # --- sshd -------------------------------------------------------------------------------
    def start_sshd(self) -> None:
        config = self.home / "sshd_config"
        config.write_text(
            f"ListenAddress {self.address}:22\nHostKey {self.home}/ssh_host_ed25519_key\n"
            f"PidFile {self.home}/sshd.pid\nAuthorizedKeysFile {self.lab.authorized_keys}\n"
            "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel VERBOSE\n"
            f"{'Subsystem sftp internal-sftp' if self.sftp else ''}\nMaxStartups 100\n"
            f"SetEnv PATH={self.bin_dir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n")
        Path("/run/sshd").mkdir(exist_ok=True)
        daemon = f"exec {SSHD} -D -e -f {config}"
        if self.fio_missing:  # hide fio from this host only: a bind mount in its own mount namespace
            fake = self.home / "no-fio"
            fake.write_text("")
            fake.chmod(0o644)
            hides = " ".join(f"mount --bind {fake} {p} &&" for p in _fio_paths())
            daemon = f"{hides} {daemon}"
            argv = ["nsenter", f"--net=/run/netns/{self.ns}", "unshare", "-m", "--propagation", "private",
                    "sh", "-c", daemon]
        else:
            # Only the network namespace: like a real host, sshd sees this machine's mounts and
            # what diskbench mounts there is visible here, so tests can check the cleanup.
            argv = ["nsenter", f"--net=/run/netns/{self.ns}", "sh", "-c", daemon]
        with open(self.home / "sshd.log", "ab") as log:  # sshd keeps its own copy of the descriptor
            self.proc = subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True)
        if self.cgroup is not None:
            (self.cgroup / "cgroup.procs").write_text(str(self.proc.pid))
        self.wait_listening()

    def auth_log(self) -> str:
        """What sshd logged (LogLevel VERBOSE): accepted and failed authentications, sessions."""
        path = self.home / "sshd.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def wait_listening(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = sh("ip", "netns", "exec", self.ns, "ss", "-Htln", "sport = :22", check=False)
            if self.address in out.stdout:
                return
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"sshd on {self.name} exited: {(self.home / 'sshd.log').read_text()}")
            time.sleep(0.05)
        raise RuntimeError(f"sshd on {self.name} did not start")

    def sshd_pids(self) -> list[int]:
        """The listener and every sshd session process below it (not the shells or fio)."""
        if self.proc is None:
            return []
        pids, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            if comm in ("sshd", "sh", "unshare", "nsenter") and pid == self.proc.pid or comm == "sshd":
                pids.append(pid)
            todo += [int(c) for c in children]
        return pids

    def kill_sshd(self) -> None:
        """Like a crash of sshd: the listener and all sessions die at once."""
        for pid in self.sshd_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(timeout=10)
            self.proc = None

    def go_silent(self) -> None:
        """Like a VM that froze or lost its network: its side of the link goes down, so what is
        sent to it vanishes without an answer (no reset, no refusal) while its processes run on."""
        sh("ip", "netns", "exec", self.ns, "ip", "link", "set", f"{self.veth}p", "down")

    def answer_again(self) -> None:
        """The link back up after ``go_silent``."""
        sh("ip", "netns", "exec", self.ns, "ip", "link", "set", f"{self.veth}p", "up")

    def kill_all(self) -> None:
        """Every process left in this host's network namespace (fio that nobody could stop)."""
        for pid in sh("ip", "netns", "pids", self.ns, check=False).stdout.split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)

    @property
    def bin_dir(self) -> Path:
        """First on the PATH of this host's SSH sessions; readable by every lab user."""
        return self.lab.shared / f"host{self.index}-bin"

    def add_command(self, name: str, script: str) -> Path:
        """A command only this host has, e.g. a cloud-init that finishes after a while."""
        self.bin_dir.mkdir(mode=0o755, exist_ok=True)
        path = self.bin_dir / name
        path.write_text("#!/bin/sh\n" + script)
        path.chmod(0o755)
        return path

    def install_host_key(self, private_openssh: str) -> None:
        """What cloud-init does with ssh_keys: replace the host key, restart sshd."""
        from cryptography.hazmat.primitives import serialization

        key = serialization.load_ssh_private_key(private_openssh.encode(), password=None)
        pub = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        self.kill_sshd()
        path = self.home / "ssh_host_ed25519_key"
        path.write_text(private_openssh)
        path.chmod(0o600)
        (self.home / "ssh_host_ed25519_key.pub").write_text(pub.decode() + "\n")
        self.start_sshd()

    # --- disks ------------------------------------------------------------------------------
    def add_loop(self, size_mib: int = 64) -> str:
        backing = self.home / f"disk{len(self.loops)}.img"
        with open(backing, "wb") as fh:
            fh.truncate(size_mib * 1024 * 1024)
        dev = sh("losetup", "--find", "--show", "--direct-io=on", str(backing)).stdout.strip()
        self.loops.append(dev)
        self.lab.loops.append(dev)
        return dev

    def throttle(self, dev: str, *, write_iops: int | None = None, read_iops: int | None = None) -> None:
        """Cap a device like a cloud disk, for every process this host's sshd starts."""
        if not (BLKIO / "cgroup.procs").exists():
            raise RuntimeError("cgroup v1 blkio is not mounted at /sys/fs/cgroup/blkio")
        if self.cgroup is None:
            self.cgroup = BLKIO / f"diskbench-lab-{self.lab.id}-{self.index}"
            self.cgroup.mkdir()
            self.lab.cgroups.append(self.cgroup)
        rdev = os.stat(dev).st_rdev
        majmin = f"{os.major(rdev)}:{os.minor(rdev)}"
        if write_iops:
            (self.cgroup / "blkio.throttle.write_iops_device").write_text(f"{majmin} {write_iops}")
        if read_iops:
            (self.cgroup / "blkio.throttle.read_iops_device").write_text(f"{majmin} {read_iops}")
        if self.proc is not None:
            for pid in [self.proc.pid, *self.sshd_pids()]:
                try:
                    (self.cgroup / "cgroup.procs").write_text(str(pid))
                except OSError:
                    continue


class Lab:
    """N lab hosts; ``close()`` removes all of it, by this lab's id."""

    def __init__(self, root: Path) -> None:
        self.id, self.subnet = _free_id()
        self.root = root
        self.hosts: list[LabHost] = []
        self.loops: list[str] = []
        self.cgroups: list[Path] = []
        self.users: list[str] = []
        self.user_key = root / "id_ed25519"
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"diskbench-lab-{self.id}",
           "-f", str(self.user_key))
        # sshd reads authorized keys as the user logging in: keep them where any user can read.
        self.shared = Path(f"/run/diskbench-lab-{self.id}")
        self.shared.mkdir(mode=0o755)
        (self.shared / "owner").write_text(owner_mark())  # see lab_leftovers.py
        self.authorized_keys = self.shared / "authorized_keys"
        shutil.copy(f"{self.user_key}.pub", self.authorized_keys)
        self.authorized_keys.chmod(0o644)
        self.known_hosts = root / "known_hosts"
        self.known_hosts.write_text("")
        self.forwarding: str | None = None  # this machine's ip_forward before route_between_hosts

    def add_user(self, name: str) -> str:
        """A plain local user (no sudo): another person on the lab's hosts; removed in close()."""
        sh("useradd", "--no-create-home", "--shell", "/bin/sh", "--password", "*",
           "--comment", f"{MARK}{self.id}", name)
        self.users.append(name)
        return name

    def route_between_hosts(self) -> None:
        """Let the lab's hosts reach each other through this machine (a bastion and the host behind
        it): a default route in each namespace and forwarding here, put back as it was in close()."""
        forward = Path("/proc/sys/net/ipv4/ip_forward")
        if self.forwarding is None:
            self.forwarding = forward.read_text().strip()
            forward.write_text("1")
        b, c = self.subnet
        for host in self.hosts:
            sh("ip", "netns", "exec", host.ns, "ip", "route", "replace", "default", "via",
               f"198.{b}.{c}.{4 * host.index + 1}")

    def add_sudo_user(self, name: str | None = None) -> str:
        """A non-root login with passwordless sudo, like Azure's default user; removed in close()."""
        name = self.add_user(name or f"dbl{self.id}")
        sudoers = Path(f"/etc/sudoers.d/diskbench-lab-{self.id}")
        sudoers.write_text(f"{name} ALL=(ALL) NOPASSWD:ALL\n")
        sudoers.chmod(0o440)
        return name

    def add_namespace(self) -> LabHost:
        """A network namespace with its own address and nothing running: for a guest whose QEMU
        forwards port 22 there (it then answers at ``address:22`` like a cloud VM)."""
        return self.add_host(start=False, trusted=False)

    def add_host(self, *, loops: int = 0, loop_mib: int = 64, fio_missing: bool = False,
                 start: bool = True, trusted: bool = True, sftp: bool = True) -> LabHost:
        i = len(self.hosts)
        b, c = self.subnet
        outer, inner = f"198.{b}.{c}.{4 * i + 1}", f"198.{b}.{c}.{4 * i + 2}"
        ns, veth = f"dbl-{self.id}-{i}", f"dbl{self.id}{i}"
        home = self.root / f"host{i}"
        home.mkdir()
        host = LabHost(self, f"lab{i}", i, inner, ns, veth, home, fio_missing, sftp)
        self.hosts.append(host)
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", veth, "type", "veth", "peer", "name", f"{veth}p")
        sh("ip", "link", "set", f"{veth}p", "netns", ns)
        sh("ip", "addr", "add", f"{outer}/30", "dev", veth)
        sh("ip", "link", "set", veth, "up")
        sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{inner}/30", "dev", f"{veth}p")
        sh("ip", "netns", "exec", ns, "ip", "link", "set", f"{veth}p", "up")
        sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(home / "ssh_host_ed25519_key"))
        if trusted:
            pub = (home / "ssh_host_ed25519_key.pub").read_text().split()
            with open(self.known_hosts, "a") as fh:
                fh.write(f"{inner} {pub[0]} {pub[1]}\n")
        for _ in range(loops):
            host.add_loop(loop_mib)
        if start:
            host.start_sshd()
        return host

    def close(self) -> None:
        if self.forwarding is not None:
            Path("/proc/sys/net/ipv4/ip_forward").write_text(self.forwarding)
        for host in self.hosts:
            with contextlib.suppress(Exception):  # keep cleaning up
                host.kill_sshd()
            host.kill_all()
        _unmount_and_stop(self.loops)
        for host in self.hosts:
            sh("ip", "netns", "del", host.ns, check=False)
            sh("ip", "link", "del", host.veth, check=False)
        for dev in self.loops:
            sh("losetup", "-d", dev, check=False)
        shutil.rmtree(self.shared, ignore_errors=True)
        for user in self.users:
            Path(f"/etc/sudoers.d/diskbench-lab-{self.id}").unlink(missing_ok=True)
            sh("pkill", "-KILL", "-u", user, check=False)
            sh("userdel", user, check=False)
        for cgroup in self.cgroups:
            for pid in (cgroup / "cgroup.procs").read_text().split() if cgroup.exists() else []:
                with contextlib.suppress(OSError):
                    (BLKIO / "cgroup.procs").write_text(pid)
            for _ in range(50):
                try:
                    cgroup.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)


def _free_id() -> tuple[str, tuple[int, int]]:
    """A new lab id and its /24 in 198.18.0.0/15, neither held by another lab nor by an address on
    this machine (two labs on one subnet would route each other's hosts away)."""
    addresses = [a for line in sh("ip", "-br", "-4", "addr").stdout.splitlines() for a in line.split()[2:]]
    held = {p.name.removeprefix(MARK) for p in Path("/run").glob(f"{MARK}*")}
    held_subnets = {_subnet_of(h) for h in held}
    for _ in range(1000):
        lab_id = secrets.token_hex(2)
        subnet = _subnet_of(lab_id)
        prefix = f"198.{subnet[0]}.{subnet[1]}."
        if lab_id not in held and subnet not in held_subnets and not any(a.startswith(prefix) for a in addresses):
            return lab_id, subnet
    raise RuntimeError("no free lab subnet in 198.18.0.0/15: see tests/lab_leftovers.py")


def _subnet_of(lab_id: str) -> tuple[int, int]:
    n = int(lab_id, 16) if all(c in "0123456789abcdef" for c in lab_id) and lab_id else 0
    return 18 + n % 2, n % 250 + 2


def _fio_paths() -> list[str]:
    found = [shutil.which("fio")] + ["/usr/bin/fio", "/usr/local/bin/fio"]
    return sorted({p for p in found if p and os.path.exists(p)})


def _unmount_and_stop(loops: list[str]) -> None:
    """Unmount and stop whatever a test (or diskbench) left on this lab's loop devices."""
    if not loops:
        return
    names = {Path(dev).name for dev in loops}
    arrays = []
    for line in Path("/proc/mdstat").read_text().splitlines() if Path("/proc/mdstat").exists() else []:
        if line.startswith("md") and any(f"{n}[" in line for n in names):
            arrays.append(f"/dev/{line.split()[0]}")
    for dev in [*arrays, *loops]:
        out = sh("findmnt", "-n", "-o", "TARGET", "-S", dev, check=False)
        for target in out.stdout.split():
            sh("umount", "-l", target, check=False)
    for md in arrays:
        sh("mdadm", "--stop", md, check=False)
    for dev in loops:
        sh("mdadm", "--zero-superblock", dev, check=False)
