"""Press Ctrl-C on a running ``diskbench`` at the right moments, reading what it says as it says it.

A second or third Ctrl-C must only be sent once the previous one was handled (Python runs a
signal handler once for signals that arrive together), so tests wait for the line each one
prints before the next; ``conftest.finish`` reads stderr only at the end, which cannot do that.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from .conftest import assert_no_bug, start_diskbench


class Watched:
    """``diskbench ARGS`` in the background; its stderr lines collected while it runs."""

    def __init__(self, *args: str, db: Path, env: dict[str, str] | None = None) -> None:
        self.proc = start_diskbench(*args, db=db, env=env)
        self.lines: list[str] = []
        self.out: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(stream, into), daemon=True)
                         for stream, into in ((self.proc.stderr, self.lines), (self.proc.stdout, self.out))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: IO[str] | None, into: list[str]) -> None:
        assert stream is not None
        for text in stream:
            into.append(text.rstrip("\n"))

    def __enter__(self) -> Watched:
        return self

    def __exit__(self, *exc: object) -> None:
        """Never leaves the process behind, also when the test failed before ``finish``."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._drain()

    def _drain(self) -> None:
        """The readers have read to the end (the process is gone): close its pipes."""
        for reader in self._readers:
            reader.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, text: str, timeout: float = 60) -> str:
        """The first stderr line containing ``text``, once it is there."""
        def hit() -> str | None:
            return next((line for line in list(self.lines) if text in line), None)

        until(lambda: hit() is not None, timeout, f"no line with {text!r} in:\n{self.stderr}")
        return hit() or ""

    def ctrl_c(self) -> None:
        self.proc.send_signal(signal.SIGINT)

    def finish(self, timeout: float = 60) -> int:
        """Wait for the exit (killing it when it does not come); its exit code, checked for bugs."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"diskbench did not exit within {timeout} s:\n{self.stderr}") from None
        finally:
            self._drain()
        assert_no_bug(self.proc.returncode, self.stderr)
        return self.proc.returncode


def fio_in(folder: Path) -> list[int]:
    """The fio processes working in ``folder`` (the local executor runs the engine there): a test's own, to
    kill by their ids as the OOM killer or a user would."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "comm").read_text().strip().startswith("fio") \
                    and Path(os.readlink(proc / "cwd")) == folder:
                out.append(int(proc.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return out


def until(check: Callable[[], bool], timeout: float = 60, what: str = "timed out waiting") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(what)
        time.sleep(0.05)


def stop_waiting_for_teardown(run: Watched, deleting: Callable[[], bool]) -> None:
    """Ctrl-C once ``deleting`` (the teardown has begun deleting): it goes on; then once more: the
    second stops waiting at once, and diskbench exits 130 saying what is left."""
    until(deleting)
    run.ctrl_c()  # the first during the teardown: deleting goes on
    run.wait_for("teardown in progress")
    run.ctrl_c()  # the second: stop waiting (a delete that never ends would hold it past the timeout)
    assert run.finish(timeout=30) == 130, run.stderr
