"""Remote hosts over SSH (paramiko): one connection per host, long commands detached on the host.

A long command (fio) runs detached with its output, status and exit code in files on the host
(how, is the host platform's shell's business), so a dropped connection neither kills nor loses
the run: diskbench reconnects and follows the files again from where it left off.
"""

from __future__ import annotations

import base64
import contextlib
import getpass
import io
import logging
import os
import secrets
import socket
import stat
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import paramiko

from ..errors import ExecutionError
from ..platforms.base import Shell
from ..profile import Host
from .base import TIMED_OUT, Completed, Executor
from .hostkeys import HostKeyError, HostKeyTrust, VerifyBeforeAuth
from .ssh_session import Reply, SessionTimeout, ShellSession
from .sshconfig import Route, resolve, tried

RECONNECT_EVERY_S = 1.0
# A stop (Ctrl-C, SIGTERM, an adaptive stop) that the host does not answer within this long is
# taken to mean the host is gone (frozen, its network cut): a stopped run must not wait out the
# job's own timeout, nor each later command's.
STOP_TIMEOUT_S = 10.0
T = TypeVar("T")
KILLED = -9
# paramiko logs every failed reconnect with a traceback; diskbench reports them itself.
logging.getLogger("paramiko").addHandler(logging.NullHandler())
logging.getLogger("paramiko").propagate = False
_TRANSIENT = (paramiko.SSHException, socket.error, EOFError, OSError)


class NoSftp(Exception):
    """The host's sshd offers no SFTP subsystem; files then go over the exec channel."""


class HostGone(ExecutionError):
    """The host did not answer a stop: nothing more is asked of it by this executor, so each later
    command fails at once instead of waiting out its own timeout (and is not retried)."""


class SSHExecutor(Executor):
    def __init__(self, host: Host, trust: HostKeyTrust, *, connect_timeout: float = 10.0,
                 on_event: Callable[[str], None] | None = None, shell: Shell | None = None) -> None:
        from .. import registry

        self.host = host
        self.name = host.name
        self.platform = host.platform
        self.sh: Shell = shell or registry.platforms.get(host.platform).shell()
        self.trust = trust
        self.connect_timeout = connect_timeout
        self.on_event = on_event or (lambda _msg: None)
        self.user = host.user or getpass.getuser()
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._no_sftp = False
        self._held: dict[str, str] = {}  # lock name -> our info, taken again after a reconnect
        self._lock_channels: dict[str, paramiko.Channel] = {}
        self._jumps: list[paramiko.SSHClient] = []  # ProxyJump hops of the current connection
        self._work_root: str | None = None  # made on first use (Shell.make_workspace)
        self._pid: str | None = None
        self._work: str | None = None  # the workspace of the command being followed
        self._following: str | None = None  # the name of the command being followed, for messages
        self._gone: str | None = None  # HostGone's message, once the host was given up
        self._session: ShellSession | None = None
        self._session_lock = threading.Lock()
        self.channels = 0  # exec and SFTP channels opened (the host's sshd sees one session each)

    def interrupt(self) -> None:
        """Stop the command being followed the platform's way. A host that does not answer within
        ``STOP_TIMEOUT_S`` is given up: its connection closes, the follow ends, and the user is told
        that the engine may run on there until its runtime ends. With nothing followed (the host
        being prepared), ``_answers_or_given_up``."""
        work, what = self._work, self._following
        if self._gone is not None:
            return
        if work is None:
            self._answers_or_given_up()
            return
        try:
            # First a read that answers at once on a live host (the stop itself may rightly take
            # longer: SIGINT, then up to 10 s for the engine's last words before SIGKILL).
            pid = self._read_pid(work, timeout=STOP_TIMEOUT_S, strict=True) or self._pid
        except ExecutionError:
            self._give_up(f"{self.name}: no answer within {STOP_TIMEOUT_S:.0f} s, so {what} could not be "
                          "stopped there; it may run on until its runtime ends")
            return
        if pid:
            self._kill(pid)

    def _answers_or_given_up(self) -> None:
        """A stop with no engine running (the host being prepared): no engine to stop, but the
        command in flight may be waiting on a host that froze, for its whole timeout, and then the
        removal of the workspace would too. One question with ``STOP_TIMEOUT_S`` to answer it; a
        host that does not is given up, which ends that wait."""
        if self._client is None:  # not connected: connecting has its own timeout
            return
        try:
            self.shell("true", timeout=STOP_TIMEOUT_S)
        except ExecutionError:
            self._give_up(f"{self.name}: no answer within {STOP_TIMEOUT_S:.0f} s to the stop; the host is given up")

    def _give_up(self, why: str) -> None:
        """Say ``why``; from now on every command on this host fails at once (HostGone), and a follow
        blocked on the connection ends as it closes."""
        self._gone = f"{self.name}: the host stopped answering"
        self.on_event(why)
        with contextlib.suppress(Exception):  # a dead link may fail its own close
            self.close()

    # --- connection -------------------------------------------------------------------------
    def connect(self) -> SSHExecutor:
        """Connect as ssh would (~/.ssh/config, ProxyJump, the agent and default keys), the host key
        checked before any credential is offered; each failure says which of the three it is."""
        if self._gone is not None:
            raise HostGone(self._gone)
        route = resolve(self.host)
        for key_file in route.identities if self.host.key_file else []:
            check_key_file(key_file, self.name)
        sock = self._through(route.jumps, route)
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(VerifyBeforeAuth(self.trust, route.host(self.host)))
        self.user = route.user
        try:
            self._login(client, route, sock)
        except BaseException:
            client.close()
            raise
        transport = client.get_transport()
        assert transport is not None
        transport.set_keepalive(5)
        self._client, self._sftp = client, None
        for name, info in list(self._held.items()):  # a reconnect: the old holders ended with the old link
            holder = self._take(transport, name, info)
            if holder is not None:
                self.on_event(f"{self.name}: after reconnecting, the lock {name} is held by {holder}")
        return self

    def _login(self, client: paramiko.SSHClient, route: Route, sock: paramiko.Channel | None) -> None:
        try:
            self._open(client, route, sock)
        except HostKeyError:
            raise
        except paramiko.PasswordRequiredException:
            key = route.identities[0] if route.identities else "the key"
            raise ExecutionError(f"{self.name}: the SSH key {key} is protected by a passphrase",
                                 hint=f"load it into ssh-agent (ssh-add {key}) and leave out the key") from None
        except paramiko.AuthenticationException:
            raise self._auth_failed(route) from None
        except paramiko.SSHException as exc:
            if "no authentication methods" in str(exc).lower():  # reached it, had nothing to offer
                raise self._auth_failed(route) from None
            raise self._unreachable(route, exc) from None
        except OSError as exc:
            raise self._unreachable(route, exc) from None

    def _through(self, jumps: list[Route], target: Route) -> paramiko.Channel | None:
        """A channel to ``target`` through each ProxyJump hop in turn (each hop's key checked too)."""
        sock: paramiko.Channel | None = None
        for index, hop in enumerate(jumps):
            client = paramiko.SSHClient()
            client.set_missing_host_key_policy(VerifyBeforeAuth(self.trust, hop.host()))
            self._jumps.append(client)
            try:
                self._open(client, hop, sock)
            except HostKeyError:
                raise
            except paramiko.AuthenticationException:
                raise self._auth_failed(hop, via="jump host ") from None
            except (paramiko.SSHException, OSError) as exc:
                raise self._unreachable(hop, exc, via="jump host ") from None
            after = jumps[index + 1] if index + 1 < len(jumps) else target
            transport = client.get_transport()
            assert transport is not None
            sock = transport.open_channel("direct-tcpip", (after.hostname, after.port), ("", 0))
        return sock

    def _open(self, client: paramiko.SSHClient, route: Route, sock: paramiko.Channel | None) -> None:
        """One hop's SSH login: its key files, or (none named) the agent and ssh's default keys."""
        keys: Any = route.identities or None  # paramiko takes a list of files (its stubs say one)
        client.connect(route.hostname, port=route.port, username=route.user, sock=sock, key_filename=keys,
                       allow_agent=True, look_for_keys=not route.identities, timeout=self.connect_timeout,
                       banner_timeout=self.connect_timeout, auth_timeout=self.connect_timeout)

    def _auth_failed(self, route: Route, via: str = "") -> ExecutionError:
        offered = tried(route)
        return ExecutionError(
            f"{self.name}: authentication failed for {via}{route.user}@{route.hostname} "
            f"(tried: {', '.join(offered) or 'nothing: no agent and no key'})",
            hint="pass --key (key_file: in a profile) or add IdentityFile for the host in ~/.ssh/config")

    def _unreachable(self, route: Route, exc: BaseException, via: str = "") -> ExecutionError:
        return ExecutionError(f"{self.name}: cannot reach {via}{route.hostname}:{route.port}: "
                              f"{exc or type(exc).__name__}",
                              hint="is the host up and is SSH allowed from here?")

    def hold(self, name: str, info: str, reclaim: str | None = None) -> str | None:
        """(``reclaim`` is not needed here: a killed controller's lock ends with its connection.)"""
        transport = self._live().get_transport()
        assert transport is not None
        holder = self._take(transport, name, info)
        if holder is None:
            self._held[name] = info
        return holder

    def _take(self, transport: paramiko.Transport, name: str, info: str) -> str | None:
        """The platform's lock command on a channel of its own, which holds the lock as long as it
        stays open; None when taken, else the holder's info."""
        cmd = self.sh.hold_lock(name, info)
        if cmd is None:
            return None
        self.channels += 1
        channel = transport.open_session()
        channel.settimeout(30)
        channel.exec_command(cmd)
        seen = b""
        try:
            while b"\n" not in seen:
                chunk = channel.recv(4096)
                if not chunk:
                    break
                seen += chunk
        except TimeoutError:
            channel.close()
            raise ExecutionError(f"{self.name}: taking the lock {name} did not answer in 30 s") from None
        if seen.startswith(b"LOCKED"):
            self._lock_channels[name] = channel
            return None
        rc = channel.recv_exit_status()
        channel.close()
        if rc == 75:
            return seen.decode("utf-8", "replace").strip() or "another diskbench run"
        if rc == 127:  # no flock(1) on this host: say so once, run without the lock
            self.on_event(f"{self.name}: flock is not installed; targets are not locked against other runs")
            return None
        raise ExecutionError(f"{self.name}: cannot take the lock {name} (exit {rc})")

    def close(self) -> None:
        for channel in self._lock_channels.values():
            channel.close()  # the holder's stdin ends: the lock is free
        self._lock_channels.clear()
        if self._client is not None:
            self._client.close()
        for jump in reversed(self._jumps):
            jump.close()
        self._jumps.clear()
        self._client = self._sftp = self._session = None

    def _live(self) -> paramiko.SSHClient:
        if self._gone is not None:
            raise HostGone(self._gone)
        transport = self._client.get_transport() if self._client else None
        if transport is None or not transport.is_active():
            self.close()
            self.connect()
        assert self._client is not None
        return self._client

    def _sftp_client(self) -> paramiko.SFTPClient:
        client = self._live()
        if self._no_sftp:
            raise NoSftp
        if self._sftp is None:
            try:
                self.channels += 1
                self._sftp = client.open_sftp()
            except paramiko.SSHException as exc:
                if not client.get_transport() or not client.get_transport().is_active():  # type: ignore[union-attr]
                    raise
                self._no_sftp = True  # "subsystem request failed": no SFTP server on the host
                self.on_event(f"{self.name}: the host has no SFTP subsystem ({exc}); moving files over "
                              "the exec channel instead")
                raise NoSftp from None
        return self._sftp

    def _retrying(self, what: str, action: Callable[[], Any], deadline: float) -> Any:
        """Run ``action``; on a dropped connection, reconnect until ``deadline``."""
        while True:
            try:
                return action()
            except _TRANSIENT as exc:
                if isinstance(exc, (HostKeyError, paramiko.AuthenticationException)):
                    raise
                if self._gone is not None:  # the link was closed because the host was given up
                    raise HostGone(self._gone) from None
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
            except ExecutionError as exc:
                if isinstance(exc, HostGone) or time.monotonic() > deadline:
                    raise
                time.sleep(RECONNECT_EVERY_S)

    # --- commands ---------------------------------------------------------------------------
    def command(self, argv: list[str], *, privileged: bool = False) -> str:
        cmd = self.sh.join(argv)
        return self.sh.privileged(cmd, sudo=self.host.sudo, user=self.user) if privileged else cmd

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        return self.shell(self.command(argv, privileged=privileged), timeout=timeout, argv=argv)

    def shell(self, cmd: str, *, timeout: float = 60.0, argv: list[str] | None = None) -> Completed:
        def once() -> Completed:
            framed = self._in_session(lambda session: session.run(cmd, timeout), timeout)
            if framed is not None:
                return _completed(argv or [cmd], framed)
            self.channels += 1
            _, out, err = self._live().exec_command(cmd, timeout=timeout)
            stdout = out.read().decode("utf-8", "replace")
            stderr = err.read().decode("utf-8", "replace")
            return Completed(argv or [cmd], out.channel.recv_exit_status(), stdout, stderr)

        result: Completed = self._retrying(f"`{cmd[:40]}`", once, time.monotonic() + timeout)
        return result

    def run_many(self, commands: Sequence[list[str]], *, timeout: float = 60.0,
                 privileged: bool = False) -> list[Completed]:
        """All of ``commands`` in one round trip when the host has a session shell."""
        return self._shell_many([self.command(argv, privileged=privileged) for argv in commands],
                                list(commands), timeout)

    def _shell_many(self, cmds: list[str], argvs: list[list[str]], timeout: float) -> list[Completed]:
        if len(cmds) < 2 or self.sh.session() is None:
            return [self.shell(cmd, timeout=timeout, argv=argv) for cmd, argv in zip(cmds, argvs, strict=True)]

        def once() -> list[Reply] | None:
            return self._in_session(lambda session: session.run_many(cmds, timeout), timeout)

        replies: list[Reply] | None = self._retrying(f"`{cmds[0][:40]}` and {len(cmds) - 1} more", once,
                                                     time.monotonic() + timeout)
        if replies is None:  # the session is busy (a Ctrl-C stopping fio): one by one
            return [self.shell(cmd, timeout=timeout, argv=argv) for cmd, argv in zip(cmds, argvs, strict=True)]
        return [_completed(argv, reply) for argv, reply in zip(argvs, replies, strict=True)]

    def _in_session(self, use: Callable[[ShellSession], T], timeout: float) -> T | None:
        """``use`` the connection's long-lived shell; None when the platform has none or it is
        busy (another thread, e.g. a Ctrl-C stopping fio), so the caller opens a channel."""
        opener = self.sh.session()
        if opener is None or not self._session_lock.acquire(blocking=False):
            return None
        try:
            client = self._live()
            if self._session is None or not self._session.usable:
                transport = client.get_transport()
                assert transport is not None
                self.channels += 1
                self._session = ShellSession(transport, self.sh, opener)
            try:
                return use(self._session)
            except SessionTimeout:
                self._session = None
                raise TimeoutError(f"no answer within {timeout:.0f} s") from None
            except BaseException:
                with contextlib.suppress(Exception):
                    self._session.close()
                self._session = None
                raise
        finally:
            self._session_lock.release()

    def write_text(self, path: str, text: str) -> None:
        if self.sh.session() is not None:  # a heredoc through the session: no SFTP channel
            end = "DBK" + secrets.token_hex(8)
            data = base64.encodebytes(text.encode("utf-8")).decode("ascii")
            folder = self.sh.quote(os.path.dirname(path) or "/")
            out = self.shell(f"mkdir -p {folder} && base64 -d > {self.sh.quote(path)} <<'{end}'\n{data}{end}",
                             timeout=60)
            if out.returncode != 0:
                raise ExecutionError(f"{self.name}: cannot write {path}: {out.stderr.strip()}")
            return

        def once() -> None:
            try:
                sftp = self._sftp_client()
            except NoSftp:
                self._exec_upload(path, text.encode("utf-8"))
                return
            _sftp_makedirs(sftp, os.path.dirname(path))
            with sftp.open(path, "w") as fh:
                fh.write(text.encode("utf-8"))

        self._retrying(f"upload of {path}", once, time.monotonic() + 60)

    def fetch(self, path: str, dest: Path) -> bool:
        if self.sh.session() is not None:  # base64 through the session: no SFTP channel
            return self._exec_download(path, dest)

        def once() -> bool:
            try:
                self._sftp_client().get(path, str(dest))
            except NoSftp:
                return self._exec_download(path, dest)
            except FileNotFoundError:
                return False
            return True

        result: bool = self._retrying(f"download of {path}", once, time.monotonic() + 120)
        return result

    def _exec_upload(self, path: str, data: bytes) -> None:
        """``mkdir -p`` and ``cat >`` over an exec channel, for hosts without SFTP."""
        self.channels += 1
        channel = self._live().get_transport().open_session()  # type: ignore[union-attr]
        channel.exec_command(self.sh.write_file(path))
        channel.sendall(data)
        channel.shutdown_write()
        rc = channel.recv_exit_status()
        if rc != 0:
            raise ExecutionError(f"{self.name}: cannot write {path} (exit {rc}) and the host has no SFTP")

    def fetch_many(self, pairs: Sequence[tuple[str, Path]]) -> list[bool]:
        if self.sh.session() is None:
            return [self.fetch(path, dest) for path, dest in pairs]
        reads = [self.sh.read_file(path) for path, _ in pairs]
        outs = self._shell_many(reads, [[r] for r in reads], timeout=120)
        return [_downloaded(out, dest) for out, (_, dest) in zip(outs, pairs, strict=True)]

    def _exec_download(self, path: str, dest: Path) -> bool:
        return _downloaded(self.shell(self.sh.read_file(path), timeout=120), dest)


    def workspace(self, local_dir: Path) -> str:
        return f"{self.work_root}/{local_dir.parent.name}/{local_dir.name}"

    @property
    def work_root(self) -> str:
        """This connection's private folder on the host, made the first time it is needed."""
        if self._work_root is None:
            out = self.shell(self.sh.make_workspace(), timeout=30)
            lines = out.stdout.strip().splitlines()
            if out.returncode != 0 or not lines:
                detail = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
                raise ExecutionError(f"{self.name}: cannot make a private workspace on the host: {detail}",
                                     hint="is /tmp (or %TEMP%) writable by the login user?")
            self._work_root = lines[-1].strip()
        return self._work_root

    def workspace_root(self, *, make: bool = False) -> str | None:
        return self.work_root if make else self._work_root

    # --- long commands ----------------------------------------------------------------------
    def stream(self, argv: list[str], *, on_output: Callable[[str], None], timeout: float,
               stdout_path: Path, stderr_path: Path, privileged: bool = False,
               workdir: str | None = None) -> int:
        work = workdir or os.path.dirname(argv[-1])
        # One command starts it detached and follows its output; the wrapper's pid and exit code
        # come back on stderr, the command's own stdout on stdout. It goes through the session
        # shell when the host has one (no second SSH session), else over its own exec channel.
        # Either way the shell that starts the wrapper also waits for it, so it is reaped (and
        # the follow ends) the moment it exits, whatever the host's init does with orphans.
        start = self.sh.start_detached(argv, work, lambda wrapper: self.command(wrapper, privileged=privileged))
        deadline = time.monotonic() + timeout
        received, rc, reconnected = 0, None, False
        pid: str | None = None
        self._work, self._following = work, os.path.basename(argv[0])
        with open(stdout_path, "wb") as local_out:
            while rc is None:
                if reconnected and pid is None:  # a follow cut short before its pid was seen
                    pid = self._read_pid(work)
                follow = self.sh.follow(work, pid, start, received)
                try:
                    followed = self._follow_in_session(follow, local_out, on_output, received, deadline)
                    if followed is None:
                        followed = self._follow(follow, local_out, on_output, received, deadline)
                    received, rc, seen_pid = followed
                except KeyboardInterrupt:
                    self.interrupt()
                    raise
                if seen_pid and not pid:
                    if not seen_pid.isdigit():
                        raise ExecutionError(f"{self.name}: could not start {argv[0]} in {work}")
                    pid = self._pid = seen_pid
                if rc is None:
                    reconnected = True
                    if time.monotonic() > deadline:
                        self.interrupt()
                        rc = TIMED_OUT  # stopped by this timeout, not killed from outside
        self._pid = self._work = self._following = None
        wanted = [(f"{work}/stderr.txt", stderr_path)]
        if reconnected:  # what was streamed may have gaps; the host's file has it all
            wanted.append((f"{work}/stdout.txt", stdout_path))
        if not self.fetch_many(wanted)[0]:
            stderr_path.write_bytes(b"")
        return rc

    def _read_pid(self, work: str, *, timeout: float = 30, strict: bool = False) -> str | None:
        """The running wrapper's pid from its file on the host (the session shell hands the pid
        back only when the follow ends); None when there is none yet, or (unless ``strict``, which
        raises) when the host did not answer."""
        try:
            out = self.shell(f"cat {self.sh.quote(work)}/pid", timeout=timeout)
        except ExecutionError:
            if strict:
                raise
            return None
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip().isdigit() else None

    def _follow_in_session(self, cmd: str, local_out: io.BufferedWriter, on_output: Callable[[str], None],
                           received: int, deadline: float) -> tuple[int, int | None, str | None] | None:
        """Stream output through the session until the wrapper exits: (bytes seen, exit code or
        None when the follow was cut short, pid); None when there is no session to use."""
        seen = [received]

        def chunk(data: bytes) -> None:
            local_out.write(data)
            seen[0] += len(data)
            on_output(data.decode("utf-8", "replace"))

        def follow(session: ShellSession) -> bytes:
            return session.stream(cmd, chunk, max(1.0, deadline - time.monotonic()))[1]

        try:
            err = self._in_session(follow, deadline - time.monotonic())
        except TimeoutError:
            return seen[0], None, None  # the deadline passed: the caller stops the command
        except (*_TRANSIENT, ExecutionError) as exc:
            self._lost(exc, deadline)
            return seen[0], None, None
        if err is None:
            return None
        pid = err.split(b"PID ", 1)[1].split(b"\n", 1)[0].decode().strip() if b"PID " in err else None
        return seen[0], _exit_code(err), pid

    def _follow(self, cmd: str, local_out: io.BufferedWriter, on_output: Callable[[str], None],
                received: int, deadline: float) -> tuple[int, int | None, str | None]:
        """Stream output until fio's wrapper exits: (bytes seen, exit code or None, pid or None)."""
        pid: str | None = None
        err = b""
        try:
            transport = self._live().get_transport()
            assert transport is not None
            self.channels += 1
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
                    if self._gone is not None:  # the channel closed with the connection, not at the end
                        raise HostGone(self._gone)
                    break
                local_out.write(chunk)
                received += len(chunk)
                on_output(chunk.decode("utf-8", "replace"))
            channel.recv_exit_status()
            while channel.recv_stderr_ready():
                err += channel.recv_stderr(4096)
            if pid is None and b"PID " in err:
                pid = err.split(b"PID ", 1)[1].split(b"\n", 1)[0].decode().strip()
            rc = _exit_code(err)
            return received, rc, pid
        except (*_TRANSIENT, ExecutionError) as exc:
            self._lost(exc, deadline)
            return received, None, pid

    def _lost(self, exc: BaseException, deadline: float) -> None:
        """A follow's connection failed: reconnect until ``deadline``, unless the host's key is
        wrong or a stop gave the host up (then the connection was closed on purpose)."""
        if isinstance(exc, (HostKeyError, HostGone)):
            raise exc
        if self._gone is not None:
            raise HostGone(self._gone) from None
        self.on_event(f"{self.name}: connection lost while fio runs ({exc}); reconnecting")
        self._reconnect_until(deadline)

    def _reconnect_until(self, deadline: float) -> None:
        self.close()
        while time.monotonic() < deadline and self._gone is None:
            time.sleep(RECONNECT_EVERY_S)
            try:
                self.connect()
                return
            except HostKeyError:
                raise
            except ExecutionError:
                continue

    def _kill(self, pid: str) -> None:
        """Stop the engine on the host the way its platform does (fio: SIGINT first, then SIGKILL)."""
        with contextlib.suppress(ExecutionError):
            self.shell(self.sh.stop(pid, lambda argv: self.command(argv, privileged=True)), timeout=30)


def check_key_file(path: str, host: str) -> None:
    """A private key as ssh takes it: a readable file that others cannot read (OpenSSH refuses
    a key file of its user's that group or others may read, and so does diskbench)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ExecutionError(f"{host}: the SSH key {path} is not a file", hint="pass --key with a private key file")
        with open(path, "rb"):
            pass
    except FileNotFoundError:
        raise ExecutionError(f"{host}: the SSH key {path} does not exist",
                             hint="pass --key (or key_file:) with an existing private key") from None
    except PermissionError:
        raise ExecutionError(f"{host}: cannot read the SSH key {path}: permission denied",
                             hint="run diskbench as the key's owner, or pass another key") from None
    if st.st_uid == os.getuid() and st.st_mode & 0o077:
        raise ExecutionError(f"{host}: the SSH key {path} may be read by others (mode {stat.S_IMODE(st.st_mode):04o}); "
                             "like ssh, diskbench does not use such a key", hint=f"chmod 600 {path}")


def _exit_code(err: bytes) -> int | None:
    """The follow's ``RC <code>`` line: None when the follow itself was cut short; KILLED when
    the wrapper is gone without an exit code (killed, say, by an OOM killer)."""
    if b"RC " not in err:
        return None
    rc_text = err.split(b"RC ", 1)[1].split(b"\n", 1)[0].decode().strip()
    return int(rc_text) if rc_text.lstrip("-").isdigit() else KILLED


def _downloaded(out: Completed, dest: Path) -> bool:
    """A file read by ``Shell.read_file`` (base64) written to ``dest``; False when it is missing."""
    if out.returncode != 0:
        return False
    dest.write_bytes(base64.b64decode(out.stdout))
    return True


def _completed(argv: list[str], reply: Reply) -> Completed:
    rc, stdout, stderr = reply
    return Completed(argv, rc, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"))


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
