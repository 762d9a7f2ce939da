"""One long-lived shell per SSH connection, running a host's small commands one after another.

Every exec channel costs the host a session (sshd forks, logs in, starts a shell): a run's
dozen setup commands used to open a dozen. Here they share one channel. Each command is framed
by the platform's shell (``Shell.framed``): the command's stdout, then a marker line with a
random token, its exit code and the size of its stderr, then that stderr. Reading blocks on
the channel (no polling); a command that outlives its timeout closes the session, and the next
command opens a new one.
"""

from __future__ import annotations

import secrets
import time

import paramiko

from ..platforms.base import Shell


class SessionTimeout(Exception):
    """A command did not finish in time; the session is closed (the command dies with it)."""


class ShellSession:
    def __init__(self, transport: paramiko.Transport, sh: Shell, command: str) -> None:
        self.sh = sh
        self.transport = transport
        self.channel = transport.open_session()
        self.channel.exec_command(command)
        self.opened = time.monotonic()

    @property
    def usable(self) -> bool:
        return self.transport.is_active() and not self.channel.closed and not self.channel.exit_status_ready()

    def close(self) -> None:
        self.channel.close()

    def run(self, cmd: str, timeout: float) -> tuple[int, bytes, bytes]:
        """(exit code, stdout, stderr) of ``cmd``; EOFError when the session died under it."""
        token = "DBK" + secrets.token_hex(8)
        self.channel.sendall(self.sh.framed(cmd, token).encode("utf-8"))
        marker = b"\n" + token.encode() + b" "
        buf = bytearray()
        deadline = time.monotonic() + timeout
        scan = 0
        while True:
            at = buf.find(marker, scan)
            if at >= 0 and b"\n" in buf[at + len(marker):]:
                break
            scan = at if at >= 0 else max(0, len(buf) - len(marker))
            buf += self._recv(deadline)
        end = buf.index(b"\n", at + len(marker))
        rc_text, nerr_text = bytes(buf[at + len(marker):end]).split()
        need = int(nerr_text)
        while len(buf) - (end + 1) < need:
            buf += self._recv(deadline)
        stderr = bytes(buf[end + 1:end + 1 + need])
        if len(buf) > end + 1 + need:  # nothing else may be in flight: the framing is broken
            raise EOFError("unexpected output after a command's stderr")
        return int(rc_text), bytes(buf[:at]), stderr

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
