"""The guest lab's delay link: a relay between QEMU's NBD client and qemu-nbd (unix sockets) that holds
every byte QEMU sends for a latency before passing it on.

Each request reaches the disk's server that much later, in order, however many are in flight (a
constant delay, as a network link adds it; the replies come straight back). Run as a process of its
own (``guest.DelayLink`` starts it) so that nothing else's turn on an interpreter lock comes between a
request's due time and its send::

    delay_link.py LISTEN UPSTREAM LATENCY_S armed|unarmed

It prints ``listening`` once QEMU may connect. Unarmed it holds nothing until a line ``arm`` comes on
its stdin (it answers ``armed``): a guest whose caps wait for its boot (``caps_after_boot``) boots at
full speed and gets its latency with its caps. It ends when its stdin closes: its parent ended.
Standard library only: it runs under the test's interpreter from any working directory.
"""

from __future__ import annotations

import collections
import contextlib
import os
import socket
import sys
import threading
import time
from pathlib import Path


class Relay:
    def __init__(self, listen: Path, upstream: Path, latency_s: float, armed: bool) -> None:
        self.upstream, self.latency_s = upstream, latency_s
        self.delay = latency_s if armed else 0.0
        listen.unlink(missing_ok=True)
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(listen))
        self._server.listen(4)
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self) -> None:
        self.delay = self.latency_s

    def _accept(self) -> None:
        while True:
            try:
                down, _ = self._server.accept()
            except OSError:  # closed
                return
            up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                up.connect(str(self.upstream))
            except OSError:
                up.close()
                down.close()
                continue
            pending: collections.deque[tuple[float, bytes]] = collections.deque()
            ready = threading.Condition()
            for target, args in ((self._take, (down, pending, ready)), (self._give, (up, pending, ready)),
                                 (self._back, (up, down))):
                threading.Thread(target=target, args=args, daemon=True).start()

    def _take(self, down: socket.socket, pending: collections.deque[tuple[float, bytes]],
              ready: threading.Condition) -> None:
        """What QEMU sends, stamped with the moment it may go on."""
        while True:
            try:
                data = down.recv(1 << 20)
            except OSError:
                data = b""
            with ready:
                pending.append((time.monotonic() + self.delay, data))
                ready.notify()
            if not data:
                return

    @staticmethod
    def _give(up: socket.socket, pending: collections.deque[tuple[float, bytes]], ready: threading.Condition) -> None:
        while True:
            with ready:
                while not pending:
                    ready.wait()
                due, data = pending.popleft()
            if not data:
                with contextlib.suppress(OSError):
                    up.shutdown(socket.SHUT_WR)
                return
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                up.sendall(data)
            except OSError:
                return

    @staticmethod
    def _back(up: socket.socket, down: socket.socket) -> None:
        while True:
            try:
                data = up.recv(1 << 20)
                if not data:
                    down.shutdown(socket.SHUT_WR)
                    return
                down.sendall(data)
            except OSError:
                return


def main(argv: list[str]) -> None:
    listen, upstream, latency, armed = argv
    relay = Relay(Path(listen), Path(upstream), float(latency), armed == "armed")
    print("listening", flush=True)
    for line in sys.stdin:
        if line.strip() == "arm":
            relay.arm()
            print("armed", flush=True)
    os._exit(0)  # stdin closed: the parent is gone or closed the link; the daemon threads go with it


if __name__ == "__main__":
    main(sys.argv[1:])
