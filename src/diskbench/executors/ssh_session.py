"""One long-lived shell per SSH connection, running a host's commands one after another.

Every exec channel costs the host a session (sshd forks, logs in, starts a shell): a run's
dozen setup commands used to open a dozen. Here they share one channel. Each command is framed
by the platform's shell (``Shell.framed``): the command's stdout, then a marker line with a
random token, its exit code and the size of its stderr, then that stderr. Reading blocks on
the channel (no polling); a command that outlives its timeout closes the session, and the next
command opens a new one.

Several commands can go up in one write and come back in order (``run_many``): a host's facts
cost one round trip, not ten, which matters when many hosts share the controller's CPU. A long
command's stdout can be handed on as it arrives (``stream``): following fio needs no second
session.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence

import paramiko

from ..platforms.base import Shell

Reply = tuple[int, bytes, bytes]  # exit code, stdout, stderr


def _unambiguous(buf: bytearray, marker: bytes) -> int:
    """How much of ``buf`` is stdout for sure: all but a tail that may be the marker's start."""
    tail = buf.rfind(b"\n", max(0, len(buf) - len(marker) + 1))
    return tail if tail >= 0 and marker.startswith(bytes(buf[tail:])) else len(buf)


class SessionTimeout(Exception):
    """A command did not finish in time; the session is closed (the command dies with it)."""


class ShellSession:
    def __init__(self, transport: paramiko.Transport, sh: Shell, command: str) -> None:
        self.sh = sh
        self.transport = transport
        self.channel = transport.open_session()
        self.channel.exec_command(command)
        self.opened = time.monotonic()
        self._buf = bytearray()  # received and not yet handed out

    @property
    def usable(self) -> bool:
        return self.transport.is_active() and not self.channel.closed and not self.channel.exit_status_ready()

    def close(self) -> None:
        self.channel.close()

    def run(self, cmd: str, timeout: float) -> Reply:
        """(exit code, stdout, stderr) of ``cmd``; EOFError when the session died under it."""
        return self.run_many([cmd], timeout)[0]

    def run_many(self, cmds: Sequence[str], timeout: float) -> list[Reply]:
        """Every command sent at once and answered in order: one round trip for all of them."""
        tokens = [self._token() for _ in cmds]
        self.channel.sendall("".join(self.sh.framed(c, t) for c, t in zip(cmds, tokens, strict=True)).encode("utf-8"))
        deadline = time.monotonic() + timeout
        replies = [self._reply(token, deadline, None) for token in tokens]
        self._check_drained()
        return replies

    def stream(self, cmd: str, on_stdout: Callable[[bytes], None], timeout: float) -> tuple[int, bytes]:
        """Run ``cmd``, handing its stdout to ``on_stdout`` as it arrives: (exit code, stderr)."""
        token = self._token()
        self.channel.sendall(self.sh.framed(cmd, token).encode("utf-8"))
        rc, _, stderr = self._reply(token, time.monotonic() + timeout, on_stdout)
        self._check_drained()
        return rc, stderr

    @staticmethod
    def _token() -> str:
        return "DBK" + secrets.token_hex(8)

    def _reply(self, token: str, deadline: float, on_stdout: Callable[[bytes], None] | None) -> Reply:
        """Read one framed reply off the buffer; stdout goes to ``on_stdout`` as it comes when given
        (all but the last bytes, which may be the start of the marker)."""
        marker = b"\n" + token.encode() + b" "
        buf = self._buf
        scan = 0
        while True:
            at = buf.find(marker, scan)
            if at >= 0 and b"\n" in buf[at + len(marker):]:
                break
            if on_stdout is not None:
                safe = at if at >= 0 else _unambiguous(buf, marker)
                if safe:
                    on_stdout(bytes(buf[:safe]))
                    del buf[:safe]
            scan = 0 if on_stdout is not None else (at if at >= 0 else max(0, len(buf) - len(marker)))
            buf += self._recv(deadline)
        end = buf.index(b"\n", at + len(marker))
        rc_text, nerr_text = bytes(buf[at + len(marker):end]).split()
        need = int(nerr_text)
        while len(buf) - (end + 1) < need:
            buf += self._recv(deadline)
        stdout, stderr = bytes(buf[:at]), bytes(buf[end + 1:end + 1 + need])
        del buf[:end + 1 + need]
        if on_stdout is not None and stdout:
            on_stdout(stdout)
            stdout = b""
        return int(rc_text), stdout, stderr

    def _check_drained(self) -> None:
        if self._buf:  # nothing else may be in flight: the framing is broken
            raise EOFError("unexpected output after a command's stderr")

    def _recv(self, deadline: float) -> bytes:
        left = deadline - time.monotonic()
        if left <= 0:
            self.close()
            raise SessionTimeout
        self.channel.settimeout(min(left, 5.0))  # wake up now and then to see the transport alive
        try:
            chunk = self.channel.recv(1 << 16)
        except TimeoutError:
            if not self.transport.is_active():
                raise EOFError("transport closed") from None
            return b""
        if not chunk:
            raise EOFError("the session's shell exited")
        return chunk
