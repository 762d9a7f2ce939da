"""QEMU guests for tests: started from a GuestSpec, reached over SSH with a pinned host key, always stopped.

A ``GuestLab`` belongs to one test and has a random id that names its QEMU processes and directory.
``close()`` stops every guest it started (lab-poweroff over SSH, then terminate()/wait() on the Popen
handle, never by process name) and deletes the overlays, backing files and keys.

Keys: before boot the lab generates, per guest, an ed25519 host key and a client key, and hands them to
the guest through QEMU's fw_cfg (``-fw_cfg name=opt/diskbench/...,file=...``); lab-init copies them to a
tmpfs before sshd starts. The shared image is never written and holds no key; fw_cfg needs no extra disk
(which would show up in the guest's disk list), no filesystem tools on the host, and costs a few
milliseconds under TCG. The client verifies the host key it generated, never trusting on first use.
Readiness is "sshd started" on the serial log, which lab-init writes after sshd has bound port 22
(slirp accepts on the forwarded port long before that).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from .image import GuestImage
from .qemu import Boot, Command, Remote, command
from .spec import GuestSpec, Throttle

READY = "sshd started"
FAILED = "lab-init error:"
MAX_GUESTS = 3


class GuestLabError(RuntimeError):
    """A guest could not start or be reached; the message carries the serial log's tail."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (QEMU binds it a moment later; start() retries a clash)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _sh(*argv: str) -> str:
    return subprocess.run(list(argv), capture_output=True, text=True, check=True).stdout


@dataclass
class KeyPair:
    """An ed25519 key made by ssh-keygen: the private key file, its public line and fingerprint."""

    private: Path
    public_line: str
    fingerprint: str

    @classmethod
    def install(cls, path: Path, private_openssh: str) -> KeyPair:
        """A key someone else generated (a cloud's hand-over), written where the lab keeps keys."""
        path.write_text(private_openssh if private_openssh.endswith("\n") else private_openssh + "\n")
        path.chmod(0o600)
        Path(f"{path}.pub").write_text(_sh("ssh-keygen", "-y", "-f", str(path)))
        fingerprint = _sh("ssh-keygen", "-lf", f"{path}.pub").split()[1]
        return cls(path, Path(f"{path}.pub").read_text().strip(), fingerprint)

    @classmethod
    def generate(cls, path: Path, comment: str) -> KeyPair:
        _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path))
        fingerprint = _sh("ssh-keygen", "-lf", f"{path}.pub").split()[1]
        return cls(path, Path(f"{path}.pub").read_text().strip(), fingerprint)


@dataclass
class Segment:
    """A private L2 segment between guests (second NIC, eth1, static ``ip2`` addresses).

    ``stream``: a unix socket, exactly two guests, the first one started listens (QEMU >= 7.2).
    ``mcast``: a UDP multicast group on 127.0.0.1, any number of guests, no order; the group and port
    are random per segment so parallel tests never share a segment.
    """

    kind: str
    path: Path
    mcast: str = ""
    members: int = 0

    def netdev(self) -> str:
        self.members += 1
        if self.kind == "mcast":
            return f"socket,mcast={self.mcast},localaddr=127.0.0.1"
        if self.members > 2:
            raise GuestLabError("a stream segment joins two guests; use lab.segment('mcast') for more")
        server = "on" if self.members == 1 else "off"
        return f"stream,server={server},addr.type=unix,addr.path={self.path}"


class DelayLink:
    """A remote disk's delay link (``delay_link.py``), run as a process of its own: the relay's threads
    then do not share the test process's interpreter lock with paramiko, the fake clouds and fio's
    output being parsed, whose turns came between a request and its send (QD1 4k reads at a 5 ms
    link read a p50 of 6.3-8.8 ms over three 15 s runs when the relay ran in the test process).
    ``arm()`` returns once the relay holds requests for its latency."""

    def __init__(self, listen: Path, upstream: Path, latency_s: float, armed: bool = True) -> None:
        self.listen = listen
        # no parent-death signal (it follows the thread that started the process, not the process):
        # the relay ends when its stdin closes, which happens when this process ends, however it ends
        argv = [sys.executable, str(Path(__file__).with_name("delay_link.py")), str(listen), str(upstream),
                repr(latency_s), "armed" if armed else "unarmed"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._expect("listening")

    def _expect(self, word: str) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != word:
            self.close()
            raise GuestLabError(f"the delay link at {self.listen} said {line!r}, not {word!r} "
                                f"(exit {self.proc.poll()})")

    def arm(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("arm\n")
        self.proc.stdin.flush()
        self._expect("armed")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # nothing of its own to keep: the disk's writes are qemu-nbd's
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self.listen.unlink(missing_ok=True)


@dataclass
class RemoteDisks:
    """The qemu-nbd servers and delay links of one guest's remote disks (``qemu.Remote``)."""

    servers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    links: list[DelayLink] = field(default_factory=list)
    sockets: list[Path] = field(default_factory=list)

    @classmethod
    def start(cls, remotes: list[Remote], directory: Path, armed: bool, timeout: float = 15.0) -> RemoteDisks:
        started = cls()
        try:
            for remote in remotes:
                remote.server.unlink(missing_ok=True)
                argv = (["setpriv", "--pdeathsig", "KILL"] if shutil.which("setpriv") else []) + remote.server_argv()
                with open(directory / f"qemu-nbd-{remote.server.stem.rsplit('-', 1)[-1]}.out", "wb") as out:
                    server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
                started.servers.append(server)
                started.sockets.append(remote.server)
                deadline = time.monotonic() + timeout
                while not remote.server.exists():
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise GuestLabError(f"qemu-nbd for {remote.image.name} did not listen at {remote.server} "
                                            f"(exit {server.poll()})")
                    time.sleep(0.02)
                started.links.append(DelayLink(remote.link, remote.server, remote.latency_ms / 1000, armed))
        except BaseException:
            started.close()
            raise
        return started

    def arm(self) -> None:
        for link in self.links:
            link.arm()

    def close(self) -> None:
        for link in self.links:
            link.close()
        for server in self.servers:
            if server.poll() is None:
                server.terminate()
                try:
                    server.wait(10)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()
        for path in self.sockets:
            path.unlink(missing_ok=True)


@dataclass
class Guest:
    """One running guest. ``run()`` executes a shell command as root over SSH (paramiko, pinned host key)."""

    name: str
    spec: GuestSpec
    port: int
    key_file: Path
    host_key: str
    host_key_fingerprint: str
    directory: Path
    proc: subprocess.Popen[bytes]
    forwarded: dict[int, int] = field(default_factory=dict)
    address: str = "127.0.0.1"
    user: str = "root"
    boot_seconds: float = 0.0
    qmp_path: Path | None = None
    throttles: dict[str, Throttle] = field(default_factory=dict)  # QEMU throttle group id -> its limits
    remote: RemoteDisks = field(default_factory=RemoteDisks)  # remote disks' servers and delay links
    _started: float = 0.0
    _client: paramiko.SSHClient | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def layout(self) -> GuestSpec:
        return self.spec

    @property
    def serial_log(self) -> Path:
        return self.directory / "serial.log"

    @property
    def ip2(self) -> str | None:
        """The guest's private address without the prefix length."""
        return self.spec.ip2.split("/")[0] if self.spec.ip2 else None

    def profile_host(self, **extra: object) -> dict[str, object]:
        """This guest as a diskbench profile host (host key pinned by fingerprint)."""
        return {"name": self.name, "address": self.address, "port": self.port, "user": self.user,
                "key_file": str(self.key_file), "host_key": self.host_key_fingerprint, **extra}

    def known_hosts_line(self) -> str:
        return f"[{self.address}]:{self.port} {' '.join(self.host_key.split()[:2])}"

    # --- boot ------------------------------------------------------------------------------------
    def wait_ready(self, timeout: float = 180.0) -> None:
        """Until lab-init says sshd started; a QEMU exit, a lab-init error or the timeout raise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.serial_log.read_text(errors="replace") if self.serial_log.exists() else ""
            if READY in text:
                self.boot_seconds = time.monotonic() - self._started
                return
            if FAILED in text:
                raise GuestLabError(f"guest {self.name}: {self._tail(text)}")
            if self.proc.poll() is not None:
                raise GuestLabError(f"guest {self.name}: QEMU exited with {self.proc.returncode}: "
                                    f"{self.qemu_output()[-800:]} {self._tail(text)}")
            time.sleep(0.1)
        raise GuestLabError(f"guest {self.name}: no '{READY}' after {timeout:.0f} s: {self._tail(self._log())}")

    def _log(self) -> str:
        return self.serial_log.read_text(errors="replace") if self.serial_log.exists() else ""

    @staticmethod
    def _tail(text: str) -> str:
        return "serial log ends: " + " | ".join(text.strip().splitlines()[-8:])

    def qemu_output(self) -> str:
        path = self.directory / "qemu.out"
        return path.read_text(errors="replace") if path.exists() else ""

    # --- ssh -------------------------------------------------------------------------------------
    def connect(self, host_key: str | None = None, timeout: float = 30.0) -> paramiko.SSHClient:
        """A new SSH client that accepts only ``host_key`` (default: this guest's own public key line).

        A different key fails with paramiko.BadHostKeyException right after the key exchange, before any
        authentication is attempted (paramiko checks the server key before auth).
        """
        client = paramiko.SSHClient()
        line = host_key or self.host_key
        known = self.address if self.port == 22 else f"[{self.address}]:{self.port}"  # OpenSSH's spelling
        entry = paramiko.hostkeys.HostKeyEntry.from_line(f"{known} {line}")
        assert entry is not None, f"not an OpenSSH public key line: {line!r}"
        client.get_host_keys().add(known, entry.key.get_name(), entry.key)
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        try:
            client.connect(self.address, self.port, username=self.user, key_filename=str(self.key_file),
                           look_for_keys=False, allow_agent=False, timeout=timeout, banner_timeout=timeout,
                           auth_timeout=timeout)
        except BaseException:
            client.close()  # paramiko leaves the refused transport open otherwise
            raise
        return client

    def _session(self) -> paramiko.SSHClient:
        with self._lock:
            transport = self._client.get_transport() if self._client else None
            if self._client is None or transport is None or not transport.is_active():
                if self._client is not None:
                    self._client.close()
                self._client = self.connect()
            return self._client

    def run(self, cmd: str, timeout: float = 300.0) -> tuple[int, str, str]:
        """Run ``cmd`` with sh as root; returns (exit code, stdout, stderr). One connection, reused."""
        channel = self._session().get_transport().open_session(timeout=30)  # type: ignore[union-attr]
        try:
            channel.exec_command(cmd)
            out, err = _drain(channel, time.monotonic() + timeout)
        except TimeoutError:
            channel.close()
            raise GuestLabError(f"guest {self.name}: `{cmd[:200]}` still running after {timeout:.0f} s") from None
        return channel.recv_exit_status(), out, err

    def served_host_key(self) -> paramiko.PKey:
        """The host key the guest's sshd presented on the current connection (verified against host_key)."""
        return self._session().get_transport().get_remote_server_key()  # type: ignore[union-attr]

    def check(self, cmd: str, timeout: float = 300.0) -> str:
        """Like run(), but a non-zero exit raises with the command's stderr; returns stdout."""
        rc, out, err = self.run(cmd, timeout)
        if rc != 0:
            raise GuestLabError(f"guest {self.name}: `{cmd[:200]}` exited {rc}: {err.strip()[-800:]}")
        return out

    # --- QEMU's monitor ------------------------------------------------------------------------
    def qmp(self, command: str, **arguments: object) -> object:
        """One QMP command on the guest's monitor socket; returns its ``return`` value."""
        if self.qmp_path is None:
            raise GuestLabError(f"guest {self.name}: started without a QMP socket")
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(30)
            sock.connect(str(self.qmp_path))
            with sock.makefile("rw") as stream:
                json.loads(stream.readline())  # the greeting
                answer: object = None
                for cmd, args in (("qmp_capabilities", {}), (command, arguments)):
                    stream.write(json.dumps({"execute": cmd, **({"arguments": args} if args else {})}) + "\n")
                    stream.flush()
                    while "event" in (reply := json.loads(stream.readline())):
                        continue
                    if "error" in reply:
                        raise GuestLabError(f"guest {self.name}: QMP {cmd}: {reply['error']}")
                    answer = reply.get("return")
                return answer

    def apply_caps(self) -> None:
        """Give every throttle group its limits (a guest started with ``caps_after_boot``, which read the
        tools diskbench runs into memory before its sshd started: ``lab.preload=1``); each group's burst
        bucket starts full, as a new disk's does. ``start`` calls it the moment sshd runs, before any SSH
        handshake (a second or more under TCG) could let a client in."""
        for gid, throttle in self.throttles.items():
            self.qmp("qom-set", path=f"/objects/{gid}", property="limits", value=throttle.qmp_limits())
        self.remote.arm()  # remote disks' latency, with the caps

    # --- stop ------------------------------------------------------------------------------------
    def kill(self) -> None:
        """Stop QEMU at once, without shutting the guest down: for a throwaway guest (a calibration)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.remote.close()
        if self._client is not None:
            self._client.close()
            self._client = None

    def stop(self, timeout: float = 15.0) -> None:
        """lab-poweroff over SSH (the connection dies with the guest), then terminate()/wait() the handle."""
        if self.proc.poll() is None:
            with contextlib.suppress(Exception):
                channel = self._session().get_transport().open_session(timeout=5)  # type: ignore[union-attr]
                channel.exec_command("/sbin/lab-poweroff")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.remote.close()
        if self._client is not None:
            self._client.close()
            self._client = None


def _drain(channel: paramiko.Channel, deadline: float) -> tuple[str, str]:
    """Read stdout and stderr to the end without letting either fill its window while we wait on the other."""
    out, err = bytearray(), bytearray()
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError
        got = False
        if channel.recv_ready():
            out += channel.recv(65536)
            got = True
        if channel.recv_stderr_ready():
            err += channel.recv_stderr(65536)
            got = True
        if not got:
            if channel.exit_status_ready() and not channel.recv_ready() and not channel.recv_stderr_ready():
                break
            if channel.closed and not channel.recv_ready() and not channel.recv_stderr_ready():
                break
            time.sleep(0.01)
    return out.decode(errors="replace"), err.decode(errors="replace")


class GuestLab:
    """The guests of one test: started from specs, all stopped and deleted by the lab's id in close()."""

    def __init__(self, image: GuestImage, workdir: Path, *, max_guests: int = MAX_GUESTS,
                 disks_in: Path | None = None) -> None:
        """``disks_in`` puts the guests' data and temp disk files in a folder of this lab's own there, for a
        measurement that must not pay this machine's own disk: a tmpfs (/dev/shm; O_DIRECT works on it
        since Linux 6.6) keeps the host's writeback stalls out of what the caps and latency emulate (QD1
        writes through the lab's raw files on this machine's disk read a p99.9 of 130-790 ms in 15 s runs)."""
        self.image = image
        self.id = secrets.token_hex(4)
        self.root = workdir / f"guestlab-{self.id}"
        self.root.mkdir(parents=True)
        self.disks_root = disks_in / f"guestlab-{self.id}" if disks_in is not None else None
        if self.disks_root is not None:
            self.disks_root.mkdir(parents=True)
        self.max_guests = max_guests
        self.guests: list[Guest] = []
        self._segments = 0
        self._nvme_guests = 0

    def __enter__(self) -> GuestLab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def segment(self, kind: str = "stream") -> Segment:
        """A new private segment for ``start(..., segment=)``: 'stream' (two guests) or 'mcast' (any number)."""
        if kind not in ("stream", "mcast"):
            raise GuestLabError(f"segment kind {kind!r}: use 'stream' or 'mcast'")
        self._segments += 1
        group = f"239.192.{secrets.randbelow(256)}.{1 + secrets.randbelow(254)}:{20000 + secrets.randbelow(40000)}"
        return Segment(kind, self.root / f"segment{self._segments}.sock", mcast=group)

    def launch(self, spec: GuestSpec, segment: Segment | None = None, netns: tuple[str, str] | None = None,
               host_private_key: str | None = None, login_key: str | None = None) -> Guest:
        """Start QEMU for ``spec`` and return at once (call ``wait_ready``); ``start`` does both.

        ``netns`` is (namespace, its address): QEMU runs in that network namespace and forwards
        port 22 there, so the guest answers at ``address:22`` as a cloud VM does. ``host_private_key``
        (OpenSSH text) is the host key a cloud handed over (else the lab generates one), and
        ``login_key`` a public key authorized besides the lab's own (a cloud's per-run key).
        """
        running = [g for g in self.guests if g.proc.poll() is None]
        if len(running) >= self.max_guests:
            raise GuestLabError(f"at most {self.max_guests} guests at once on this machine (2 cores)")
        if any(g.name == spec.name for g in self.guests):
            raise GuestLabError(f"guest name {spec.name} is already used in this lab")
        if segment is not None and not spec.ip2:
            raise GuestLabError(f"guest {spec.name}: a segment needs an ip2 address in the spec")
        directory = self.root / spec.name
        directory.mkdir()
        if host_private_key:
            host = KeyPair.install(directory / "ssh_host_ed25519_key", host_private_key)
        else:
            host = KeyPair.generate(directory / "ssh_host_ed25519_key", f"guestlab-{self.id}-{spec.name}-host")
        client = KeyPair.generate(directory / "id_ed25519", f"guestlab-{self.id}-{spec.name}-client")
        (directory / "authorized_keys").write_text(client.public_line + "\n" + (f"{login_key}\n" if login_key else ""))
        netdev = segment.netdev() if segment else None
        qmp = Path(f"/tmp/guestlab-{self.id}-{spec.name}.qmp")  # short: a unix socket path stops at 107 bytes
        remote: RemoteDisks | None = None
        for attempt in range(3):
            boot = Boot(directory=directory, tag=f"guestlab-{self.id}-{spec.name}", kernel=self.image.kernel,
                        initrd=self.image.initrd, root_raw=self.image.root_raw,
                        ssh_port=22 if netns else free_port(),
                        forwarded={p: p if netns else free_port() for p in spec.forwards}, private_netdev=netdev,
                        mac_suffix=len(self.guests) + 1, host_key=host.private,
                        authorized_keys=directory / "authorized_keys", bind="" if netns else "127.0.0.1",
                        qmp=qmp, defer_caps=spec.caps_after_boot,
                        disks=self._disk_folder(spec.name))
            cmd = command(spec, boot)
            if attempt == 0:
                _prepare_files(cmd)
                remote = RemoteDisks.start(cmd.remotes, directory, armed=not spec.caps_after_boot)
            if netns:
                cmd.argv[:0] = ["ip", "netns", "exec", netns[0]]
            try:
                guest = self._popen(spec, boot, cmd, host, client)
            except BaseException:
                if remote is not None:
                    remote.close()
                raise
            if remote is not None:
                guest.remote = remote
            if netns:
                guest.address = netns[1]
            if not _port_clash(guest):
                break
        self.guests.append(guest)
        if segment is not None and segment.kind == "stream" and segment.members == 1:
            _wait_for(segment.path, guest)  # the client's QEMU must find the listening socket
        return guest

    def _popen(self, spec: GuestSpec, boot: Boot, cmd: Command, host: KeyPair, client: KeyPair) -> Guest:
        (boot.directory / "serial.log").unlink(missing_ok=True)
        # setpriv --pdeathsig: should the test process be killed outright (no close()), QEMU dies with it.
        if spec.has_nvme:
            cmd.argv[:0] = ["taskset", "-c", str(self._nvme_core())]
        argv = (["setpriv", "--pdeathsig", "KILL"] if shutil.which("setpriv") else []) + cmd.argv
        with open(boot.directory / "qemu.out", "wb") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        (boot.directory / "argv").write_text("\n".join(cmd.argv) + "\n")
        return Guest(name=spec.name, spec=spec, port=boot.ssh_port, key_file=client.private,
                     host_key=host.public_line, host_key_fingerprint=host.fingerprint, directory=boot.directory,
                     proc=proc, forwarded=dict(boot.forwarded), qmp_path=boot.qmp, throttles=dict(cmd.throttles),
                     _started=time.monotonic())

    def _disk_folder(self, name: str) -> Path | None:
        if self.disks_root is None:
            return None
        folder = self.disks_root / name
        folder.mkdir(exist_ok=True)
        return folder

    def _nvme_core(self) -> int:
        """The host core a guest with an NVMe controller runs on: all of its QEMU threads on one core, the
        next such guest on the next core. QEMU 7.2's NVMe controller loses submissions when its vCPU thread
        and its main loop run on two cores at once: with the Linux guest's shadow doorbells, I/O then waits
        for the driver's 30 s timeout, abort and controller reset ("nvme nvme0: I/O 750 QID 1 timeout,
        aborting" in the guest's dmesg). Measured on this machine kind: 10 s of 4k random writes at QD8 on
        a RAID0 of four NVMe devices, rounds 2 and 3 of 3 stalled (14 timeouts) unpinned; pinned, 8 of 8
        rounds ran at 6,000-7,100 IOPS with none. It was the array left behind by a run (the umount stuck
        behind a lost write), the Ctrl-C test's hang and the v6 guest's stall of issue 30."""
        cores = sorted(os.sched_getaffinity(0))
        core = cores[self._nvme_guests % len(cores)]
        self._nvme_guests += 1
        return core

    def start(self, spec: GuestSpec, segment: Segment | None = None, timeout: float = 180.0,
              netns: tuple[str, str] | None = None, host_private_key: str | None = None,
              login_key: str | None = None) -> Guest:
        """Boot a guest and wait until its sshd runs (and, with ``caps_after_boot``, its caps are set)."""
        guest = self.launch(spec, segment, netns, host_private_key, login_key)
        guest.wait_ready(timeout)
        if spec.caps_after_boot:
            guest.apply_caps()
        return guest

    def start_all(self, *specs: GuestSpec, segment: Segment | None = None, timeout: float = 180.0) -> list[Guest]:
        """Boot several guests at once (in order, so a stream segment's listener comes first), then wait."""
        guests = [self.launch(spec, segment) for spec in specs]
        for guest in guests:
            guest.wait_ready(timeout)
        return guests

    def close(self) -> None:
        """Stop every guest of this lab and delete its directory (overlays, backing files, keys, logs)."""
        errors = []
        for guest in self.guests:
            try:
                errors.extend(lost_io(guest))
                guest.stop()
            except Exception as exc:  # keep stopping the others
                errors.append(f"{guest.name}: {exc}")
        shutil.rmtree(self.root, ignore_errors=True)
        if self.disks_root is not None:
            shutil.rmtree(self.disks_root, ignore_errors=True)
        for guest in self.guests:
            if guest.qmp_path is not None:
                guest.qmp_path.unlink(missing_ok=True)
        if errors:
            raise GuestLabError("; ".join(errors))


def _prepare_files(cmd: Command) -> None:
    """Preallocated raw backing files (throttling on sparse files is not real) and qcow2 overlays."""
    for path, mib in cmd.raw_files:
        _sh("qemu-img", "create", "-q", "-f", "raw", "-o", "preallocation=falloc", str(path), f"{mib}M")
    for overlay, backing, fmt, cluster in cmd.overlays:
        opts = ["-o", f"cluster_size={cluster}"] if cluster else []
        _sh("qemu-img", "create", "-q", "-f", "qcow2", *opts, "-b", str(backing), "-F", fmt, str(overlay))


def _port_clash(guest: Guest, timeout: float = 5.0) -> bool:
    """True when QEMU died because a forwarded port was taken in the meantime (the guest is then reaped).

    Connecting to the SSH port only tells that slirp set up its forwarding (it accepts before the guest
    runs); readiness is never judged by it.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and guest.proc.poll() is None:
        with contextlib.suppress(OSError), socket.create_connection((guest.address, guest.port), timeout=0.5):
            return False
        time.sleep(0.05)
    if guest.proc.poll() is None:
        return False
    return "hostfwd" in guest.qemu_output() or "host forwarding" in guest.qemu_output()


def _wait_for(path: Path, guest: Guest, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if guest.proc.poll() is not None or time.monotonic() > deadline:
            raise GuestLabError(f"guest {guest.name}: segment socket {path} never appeared: {guest.qemu_output()}")
        time.sleep(0.05)


def lost_io(guest: Guest) -> list[str]:
    """What the guest's kernel said of NVMe commands that never completed (see ``GuestLab._nvme_core``): a lab
    fault, so the test that used the guest errors at teardown instead of its figures passing for the disk's."""
    if not guest.spec.has_nvme or guest.proc.poll() is not None:
        return []
    try:
        out = guest.run("dmesg | grep -E 'nvme[0-9]+: I/O [0-9]+ .*timeout' | head -3", timeout=30)[1]
    except Exception:  # a guest that no longer answers says nothing here; stop() reports it
        return []
    said = " | ".join(line for line in out.splitlines() if line.strip())
    return [f"{guest.name}: the lab's NVMe controller lost I/O: {said}"] if said else []
