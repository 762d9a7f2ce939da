"""Remote Linux hosts over SSH (paramiko): one connection per host, fio detached on the host.

fio runs under ``setsid`` with its output, status and exit code in files on the host, so a
dropped connection neither kills nor loses the run: diskbench reconnects and follows the files
again from where it left off (``tail --pid`` ends the moment fio's wrapper exits).
"""

from __future__ import annotations

import base64
import contextlib
import getpass
import hashlib
import io
import logging
import os
import shlex
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paramiko

from .errors import ExecutionError
from .executor import Completed, Executor
from .profile import Host

RECONNECT_EVERY_S = 1.0
KILLED = -9
# paramiko logs every failed reconnect with a traceback; diskbench reports them itself.
logging.getLogger("paramiko").addHandler(logging.NullHandler())
logging.getLogger("paramiko").propagate = False
_TRANSIENT = (paramiko.SSHException, socket.error, EOFError, OSError)


class HostKeyError(ExecutionError):
    """The host's key is unknown, changed, or not the pinned one."""


def fingerprint(key: paramiko.PKey) -> str:
    """OpenSSH's SHA256 fingerprint, as ``ssh-keygen -lf`` prints it."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


class HostKeyTrust:
    """Known hosts: the user's known_hosts, diskbench's own record, and pinned fingerprints.

    Unknown keys are refused unless ``accept_new`` is set; then the first key seen is recorded
    (in diskbench's known-hosts file and the run) and a different key later is refused.
    """

    def __init__(self, *, known_hosts: str | None = None, diskbench_known_hosts: Path | None = None,
                 accept_new: bool = False) -> None:
        self.known_hosts = Path(known_hosts or os.path.expanduser("~/.ssh/known_hosts"))
        self.own = diskbench_known_hosts
        self.accept_new = accept_new
        self.seen: dict[str, str] = {}  # "[addr]:port" -> fingerprint, for the run record
        self._lock = threading.Lock()

    def host_keys(self) -> paramiko.HostKeys:
        keys = paramiko.HostKeys()
        for path in (self.known_hosts, self.own):
            if path is not None and path.is_file():
                keys.load(str(path))
        return keys

    def verify(self, host: Host, key: paramiko.PKey) -> None:
        name = host.address if host.port == 22 else f"[{host.address}]:{host.port}"
        got = fingerprint(key)
        with self._lock:
            self.seen[name] = got
        if host.host_key:
            if got != host.host_key:
                raise HostKeyError(f"{host.name}: host key {got} is not the pinned {host.host_key}",
                                   hint="someone may be intercepting the connection; check the host")
            return
        known = self.host_keys().lookup(name)
        if known is not None:
            if known.get(key.get_name()) is None or known[key.get_name()].asbytes() != key.asbytes():
                raise HostKeyError(f"{host.name}: the host key of {name} changed (now {got})",
                                   hint="if the host was rebuilt, remove its old key from known_hosts")
            return
        if not self.accept_new:
            raise HostKeyError(f"{host.name}: unknown host key {got} for {name}",
                               hint="pin it with host_key: in the profile, add it to known_hosts, "
                                    "or pass --accept-new-host-key")
        if self.own is not None:
            with self._lock:
                self.own.parent.mkdir(parents=True, exist_ok=True)
                with open(self.own, "a", encoding="utf-8") as fh:
                    fh.write(f"{name} {key.get_name()} {key.get_base64()}\n")


class _Verify(paramiko.MissingHostKeyPolicy):
    """Let the handshake finish; HostKeyTrust decides right after, for every key."""

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        return None


def parse_destination(dest: str, **fields: Any) -> Host:
    """``user@address[:port]`` -> Host (IPv6 as ``user@[::1]:22``)."""
    user, _, rest = dest.rpartition("@")
    address, port = rest, 22
    if rest.startswith("["):
        address, _, tail = rest[1:].partition("]")
        port = int(tail[1:]) if tail.startswith(":") else 22
    elif rest.count(":") == 1:
        address, port_text = rest.split(":")
        port = int(port_text)
    name = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in address).strip("-") or "host"
    return Host(name=name, address=address, port=port, user=user or None, **fields)


class SSHExecutor(Executor):
    def __init__(self, host: Host, trust: HostKeyTrust, *, connect_timeout: float = 10.0,
                 on_event: Callable[[str], None] | None = None) -> None:
        self.host = host
        self.name = host.name
        self.trust = trust
        self.connect_timeout = connect_timeout
        self.on_event = on_event or (lambda _msg: None)
        self.user = host.user or getpass.getuser()
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self.work_root = f"/tmp/diskbench-{self.user}/{host.name}"
        self._pid: str | None = None

    def interrupt(self) -> None:
        if self._pid:
            self._kill(self._pid)

    # --- connection -------------------------------------------------------------------------
    def connect(self) -> SSHExecutor:
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(_Verify())
        key_file = os.path.expanduser(self.host.key_file) if self.host.key_file else None
        try:
            client.connect(self.host.address, port=self.host.port, username=self.user,
                           key_filename=key_file, allow_agent=True, look_for_keys=key_file is None,
                           timeout=self.connect_timeout, banner_timeout=self.connect_timeout,
                           auth_timeout=self.connect_timeout)
        except paramiko.AuthenticationException as exc:
            raise ExecutionError(f"{self.name}: SSH login as {self.user}@{self.host.address} failed: {exc}",
                                 hint="check user and key_file, or load the key into ssh-agent") from None
        except (paramiko.SSHException, OSError) as exc:
            raise ExecutionError(
                f"{self.name}: cannot reach {self.host.address}:{self.host.port}: {exc or type(exc).__name__}",
                hint="is the host up and is SSH allowed from here?") from None
        transport = client.get_transport()
        assert transport is not None
        try:
            self.trust.verify(self.host, transport.get_remote_server_key())
        except HostKeyError:
            client.close()
            raise
        transport.set_keepalive(5)
        self._client, self._sftp = client, None
        return self

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = self._sftp = None

    def _live(self) -> paramiko.SSHClient:
        transport = self._client.get_transport() if self._client else None
        if transport is None or not transport.is_active():
            self.close()
            self.connect()
        assert self._client is not None
        return self._client

    def _sftp_client(self) -> paramiko.SFTPClient:
        client = self._live()
        if self._sftp is None:
            self._sftp = client.open_sftp()
        return self._sftp

    def _retrying(self, what: str, action: Callable[[], Any], deadline: float) -> Any:
        """Run ``action``; on a dropped connection, reconnect until ``deadline``."""
        while True:
            try:
                return action()
            except _TRANSIENT as exc:
                if isinstance(exc, (HostKeyError, paramiko.AuthenticationException)):
                    raise
                if time.monotonic() > deadline:
                    raise ExecutionError(f"{self.name}: lost the connection during {what} and could "
                                         f"not reconnect: {exc}") from None
                self.on_event(f"{self.name}: connection lost during {what} ({exc}); reconnecting")
                self.close()
                time.sleep(RECONNECT_EVERY_S)
                try:
                    self.connect()
                except ExecutionError as again:
                    if isinstance(again, HostKeyError):
                        raise
            except ExecutionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(RECONNECT_EVERY_S)

    # --- commands ---------------------------------------------------------------------------
    def command(self, argv: list[str], *, privileged: bool = False) -> str:
        cmd = shlex.join(argv)
        if privileged and self.host.sudo and self.user != "root":
            return "sudo -n " + cmd
        return cmd

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        return self.shell(self.command(argv, privileged=privileged), timeout=timeout, argv=argv)

    def shell(self, cmd: str, *, timeout: float = 60.0, argv: list[str] | None = None) -> Completed:
        def once() -> Completed:
            _, out, err = self._live().exec_command(cmd, timeout=timeout)
            stdout = out.read().decode("utf-8", "replace")
            stderr = err.read().decode("utf-8", "replace")
            return Completed(argv or [cmd], out.channel.recv_exit_status(), stdout, stderr)

        result: Completed = self._retrying(f"`{cmd[:40]}`", once, time.monotonic() + timeout)
        return result

    def which(self, program: str) -> str | None:
        out = self.shell(f"command -v {shlex.quote(program)}")
        return out.stdout.strip() or None if out.returncode == 0 else None

    def write_text(self, path: str, text: str) -> None:
        def once() -> None:
            sftp = self._sftp_client()
            _sftp_makedirs(sftp, os.path.dirname(path))
            with sftp.open(path, "w") as fh:
                fh.write(text.encode("utf-8"))

        self._retrying(f"upload of {path}", once, time.monotonic() + 60)

    def fetch(self, path: str, dest: Path) -> bool:
        def once() -> bool:
            try:
                self._sftp_client().get(path, str(dest))
            except FileNotFoundError:
                return False
            return True

        result: bool = self._retrying(f"download of {path}", once, time.monotonic() + 120)
        return result

    def make_scratch_dir(self, near: str | None = None) -> str:
        base = near if near and near.startswith("/") else "/var/tmp"
        out = self.run(["mktemp", "-d", "-p", base, "diskbench-scratch-XXXXXX"], privileged=True)
        if out.returncode != 0:
            raise ExecutionError(f"{self.name}: cannot create a scratch directory in {base}: "
                                 f"{out.stderr.strip()}")
        return out.stdout.strip()

    def remove_tree(self, path: str) -> None:
        self.run(["rm", "-rf", "--one-file-system", path], privileged=True)

    def is_dir(self, path: str) -> bool:
        return self.run(["test", "-d", path]).returncode == 0

    def remove_workspace(self, run_id: str) -> None:
        self.remove_tree(f"{self.work_root}/{run_id}")
        self.run(["rmdir", "-p", "--ignore-fail-on-non-empty", self.work_root], privileged=True)

    def workspace(self, local_dir: Path) -> str:
        return f"{self.work_root}/{local_dir.parent.name}/{local_dir.name}"

    # --- long commands ----------------------------------------------------------------------
    def stream(self, argv: list[str], *, on_output: Callable[[str], None], timeout: float,
               stdout_path: Path, stderr_path: Path, privileged: bool = False,
               workdir: str | None = None) -> int:
        work = shlex.quote(workdir or os.path.dirname(argv[-1]))
        # The wrapper outlives a Ctrl-C sent to its group (trap), so the exit code is always written.
        inner = (f"trap : INT TERM HUP; echo $$ > pid; {self.command(argv)} > stdout.txt 2> stderr.txt; "
                 "echo $? > exit_code.part; mv exit_code.part exit_code")
        launcher = self.command(["setsid", "sh", "-c", inner], privileged=privileged)
        # One round trip starts fio detached and follows its status; the wrapper's pid and exit
        # code come back on stderr, fio's own stdout on stdout.
        start = (f"cd {work} || exit 97; rm -f pid exit_code; ({launcher}) >/dev/null 2>&1 </dev/null &\n"
                 "i=0; while [ ! -s pid ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done\n"
                 "p=$(cat pid 2>/dev/null); echo \"PID $p\" >&2\n")
        deadline = time.monotonic() + timeout
        received, rc, reconnected = 0, None, False
        pid: str | None = None
        with open(stdout_path, "wb") as local_out:
            while rc is None:
                follow = (f"{'cd ' + work + ' || exit 97; p=' + pid if pid else start}\n"
                          f"tail -c +{received + 1} -s 0.05 -F --pid=$p stdout.txt 2>/dev/null\n"
                          "echo \"RC $(cat exit_code 2>/dev/null)\" >&2\n")
                try:
                    received, rc, seen_pid = self._follow(follow, local_out, on_output, received, deadline)
                except KeyboardInterrupt:
                    if pid or self._pid:
                        self._kill(pid or self._pid or "")
                    raise
                if seen_pid and not pid:
                    if not seen_pid.isdigit():
                        raise ExecutionError(f"{self.name}: could not start {argv[0]} in {work}")
                    pid = self._pid = seen_pid
                if rc is None:
                    reconnected = True
                    if time.monotonic() > deadline:
                        if pid:
                            self._kill(pid)
                        rc = -9
        self._pid = None
        if reconnected:  # what was streamed may have gaps; the host's file has it all
            self.fetch(f"{workdir}/stdout.txt", stdout_path)
        if not self.fetch(f"{workdir}/stderr.txt", stderr_path):
            stderr_path.write_bytes(b"")
        return rc

    def _follow(self, cmd: str, local_out: io.BufferedWriter, on_output: Callable[[str], None],
                received: int, deadline: float) -> tuple[int, int | None, str | None]:
        """Stream output until fio's wrapper exits: (bytes seen, exit code or None, pid or None)."""
        pid: str | None = None
        err = b""
        try:
            transport = self._live().get_transport()
            assert transport is not None
            channel = transport.open_session()
            channel.settimeout(0.2)
            channel.exec_command(cmd)
            while True:
                while channel.recv_stderr_ready():
                    err += channel.recv_stderr(4096)
                if pid is None and b"PID " in err and b"\n" in err.split(b"PID ", 1)[1]:
                    pid = err.split(b"PID ", 1)[1].split(b"\n", 1)[0].decode().strip()
                    self._pid = pid if pid.isdigit() else None  # Ctrl-C can stop it from now on
                try:
                    chunk = channel.recv(65536)
                except TimeoutError:
                    if time.monotonic() > deadline:
                        channel.close()
                        return received, None, pid
                    if not transport.is_active():
                        raise EOFError("transport closed") from None
                    continue
                if not chunk:
                    break
                local_out.write(chunk)
                received += len(chunk)
                on_output(chunk.decode("utf-8", "replace"))
            channel.recv_exit_status()
            while channel.recv_stderr_ready():
                err += channel.recv_stderr(4096)
            if pid is None and b"PID " in err:
                pid = err.split(b"PID ", 1)[1].split(b"\n", 1)[0].decode().strip()
            if b"RC " not in err:
                return received, None, pid  # the follow itself was cut short
            rc_text = err.split(b"RC ", 1)[1].split(b"\n", 1)[0].decode().strip()
            # The wrapper is gone; without an exit code it was killed (say, by an OOM killer).
            return received, int(rc_text) if rc_text.lstrip("-").isdigit() else KILLED, pid
        except (*_TRANSIENT, ExecutionError) as exc:
            if isinstance(exc, HostKeyError):
                raise
            self.on_event(f"{self.name}: connection lost while fio runs ({exc}); reconnecting")
            self.close()
            while time.monotonic() < deadline:
                time.sleep(RECONNECT_EVERY_S)
                try:
                    self.connect()
                    return received, None, pid
                except HostKeyError:
                    raise
                except ExecutionError:
                    continue
            return received, None, pid

    def _kill(self, pid: str) -> None:
        """Stop the fio on the host: SIGINT first (fio then writes what it has), then SIGKILL."""
        stop = self.command(["kill", "-INT", "--", f"-{pid}"], privileged=True)
        kill = self.command(["kill", "-KILL", "--", f"-{pid}"], privileged=True)
        with contextlib.suppress(ExecutionError):
            self.shell(f"{stop}; for i in $(seq 50); do kill -0 {pid} 2>/dev/null || exit 0; sleep 0.2; "
                       f"done; {kill}", timeout=30)


def _sftp_makedirs(sftp: paramiko.SFTPClient, path: str) -> None:
    """``mkdir -p`` over SFTP (no extra command round trip)."""
    missing = []
    while path and path != "/":
        try:
            sftp.stat(path)
            break
        except FileNotFoundError:
            missing.append(path)
            path = os.path.dirname(path)
    for folder in reversed(missing):
        sftp.mkdir(folder)
