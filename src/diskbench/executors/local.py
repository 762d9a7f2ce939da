"""This machine, through subprocess."""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import cast

from ..errors import ExecutionError
from .base import Completed, Executor


class LocalExecutor(Executor):
    """This machine, through subprocess."""

    name = "local"

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None

    def interrupt(self) -> None:
        if self._proc is not None:
            _stop(self._proc)

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                  errors="replace", check=False)
        except FileNotFoundError:
            return Completed(argv, 127, "", f"{argv[0]}: command not found")
        except subprocess.TimeoutExpired:
            return Completed(argv, 124, "", f"{argv[0]}: timed out after {timeout:.0f}s")
        return Completed(argv, proc.returncode, proc.stdout, proc.stderr)

    def stream(self, argv: list[str], *, on_output: Callable[[str], None], timeout: float,
               stdout_path: Path, stderr_path: Path, privileged: bool = False,
               workdir: str | None = None) -> int:
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            try:
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err,
                                        start_new_session=True, cwd=workdir)
            except FileNotFoundError:
                raise ExecutionError(f"{argv[0]} is not installed") from None
            self._proc = proc
            reader = cast(io.BufferedReader, proc.stdout)
            watchdog = threading.Timer(timeout, _stop, [proc])  # a hung fio is stopped, not waited on
            watchdog.start()
            try:
                for chunk in iter(lambda: reader.read1(4096), b""):
                    out.write(chunk)
                    on_output(chunk.decode("utf-8", "replace"))
                return proc.wait()
            except BaseException:
                _stop(proc)
                raise
            finally:
                watchdog.cancel()
                reader.close()  # the pipe is ours to close (an unclosed one is a ResourceWarning)
                self._proc = None

    def write_text(self, path: str, text: str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")

    def fetch(self, path: str, dest: Path) -> bool:
        src = Path(path)
        if not src.exists():
            return False
        if src.resolve() != dest.resolve():
            shutil.copyfile(src, dest)
        return True

    def workspace(self, local_dir: Path) -> str:
        return str(local_dir)  # this host: write straight into the artifacts


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop fio the way Ctrl-C would (it then writes partial results), then harder."""
    for sig, wait in ((signal.SIGINT, 10.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=wait)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            continue
