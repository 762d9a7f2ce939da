"""The lab's delay link on its own (no QEMU): an echo server behind it, a client in front.

A request must reach the server no sooner than the link's latency after it was sent, and not much
later (the upper bound: 20 ms of scheduling on this 2-core machine, far below the 50 ms latency, so
a link that delayed twice would fail); unarmed it passes at once, armed it holds; the relay's
process ends when the test's end of its stdin closes."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path

import pytest

from .guest import DelayLink

LATENCY_S = 0.05
SLACK_S = 0.02  # the scheduling the upper bound allows (see the module's docstring)


def _echo(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def serve() -> None:
        with contextlib.suppress(OSError):  # the test closed the server
            conn, _ = server.accept()
            while data := conn.recv(4096):
                conn.sendall(data)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return server


def _round_trip(client: socket.socket) -> float:
    start = time.monotonic()
    client.sendall(b"x" * 512)
    got = b""
    while len(got) < 512:
        got += client.recv(4096)
    return time.monotonic() - start


@pytest.mark.parametrize("armed", [True, False])
def test_the_link_holds_each_request_for_its_latency_once_armed(tmp_path: Path, armed: bool) -> None:
    upstream, listen = tmp_path / "nbd.sock", tmp_path / "link.sock"
    server = _echo(upstream)
    link = DelayLink(listen, upstream, LATENCY_S, armed=armed)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(listen))
            if not armed:
                assert _round_trip(client) < SLACK_S  # boots at full speed
                link.arm()
            trips = [_round_trip(client) for _ in range(5)]
        assert all(LATENCY_S <= t <= LATENCY_S + SLACK_S for t in trips), trips
    finally:
        link.close()
        server.close()
    assert link.proc.returncode is not None and not listen.exists()


def test_the_relay_ends_when_its_stdin_closes(tmp_path: Path) -> None:
    """What happens when the test process dies, however it dies: its end of the pipe closes."""
    upstream = tmp_path / "nbd.sock"
    server = _echo(upstream)
    link = DelayLink(tmp_path / "link.sock", upstream, LATENCY_S)
    try:
        assert link.proc.stdin is not None
        link.proc.stdin.close()
        assert link.proc.wait(timeout=5) == 0
    finally:
        link.close()
        server.close()
