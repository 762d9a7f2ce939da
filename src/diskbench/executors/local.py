"""This machine, through subprocess."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

from ..errors import ExecutionError
from .base import TIMED_OUT, Completed, Executor


class LocalExecutor(Executor):
    """This machine, through subprocess."""

    name = "local"

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._locks: dict[str, int] = {}  # lock name -> the open file its flock is on

    def hold(self, name: str, info: str, reclaim: str | None = None) -> str | None:
        """flock on a file in /run/lock (or the temp folder), shared by every user's runs. The
        engine inherits the open file, so a target stays locked while an engine that outlived a
        killed diskbench still writes to it; such an engine of the same run (its holder's info
        starts with ``reclaim``) is stopped and the lock taken."""
        folder = "/run/lock" if os.access("/run/lock", os.W_OK) else tempfile.gettempdir()
        path = os.path.join(folder, f"diskbench-{name}.lock")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            return f"its lock file {path} cannot be opened: {exc.strerror}"
        holder = _flock(fd, path)
        if holder is not None and reclaim and holder.startswith(reclaim):
            for pgid in {os.getpgid(pid) for pid in _holders(path) if _exists(pid)}:
                stop_group(pgid)
            holder = _flock(fd, path)
        if holder is not None:
            os.close(fd)
            return holder
        self._locks[name] = fd
        with contextlib.suppress(OSError):  # never through a link someone else put there
            who = os.open(path + ".who", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            with os.fdopen(who, "w", encoding="utf-8") as fh:
                fh.write(info + "\n")
        return None

    def close(self) -> None:
        for fd in self._locks.values():
            os.close(fd)
        self._locks.clear()

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
            try:  # the engine gets the target locks: they stay held while it runs, if diskbench is killed
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, start_new_session=True,
                                        cwd=workdir, pass_fds=tuple(self._locks.values()))
            except FileNotFoundError:
                raise ExecutionError(f"{argv[0]} is not installed") from None
            self._proc = proc
            reader = cast(io.BufferedReader, proc.stdout)
            fired = threading.Event()
            watchdog = threading.Timer(min(timeout, threading.TIMEOUT_MAX / 2), _time_out, [proc, fired])
            watchdog.start()
            try:
                for chunk in iter(lambda: reader.read1(4096), b""):
                    out.write(chunk)
                    on_output(chunk.decode("utf-8", "replace"))
                rc = proc.wait()
                return TIMED_OUT if fired.is_set() else rc
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


def _flock(fd: int, path: str) -> str | None:
    """None when the lock on ``fd`` is taken, else what its holder wrote beside it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        try:
            with open(path + ".who", encoding="utf-8", errors="replace") as fh:
                return fh.read(500).strip() or "another diskbench run"
        except OSError:
            return "another diskbench run"


def _holders(path: str) -> list[int]:
    """Processes with ``path`` open (/proc/*/fd): who holds a lock file."""
    out = []
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        with contextlib.suppress(OSError):
            if os.readlink(fd) == path:
                out.append(int(fd.parts[2]))
    return [p for p in dict.fromkeys(out) if p != os.getpid()]


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def stop_group(pgid: int) -> None:
    """A whole process group (an engine and its job processes) stopped as Ctrl-C would, then killed."""
    for sig, wait_s in ((signal.SIGINT, 10.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def _time_out(proc: subprocess.Popen[bytes], fired: threading.Event) -> None:
    """The watchdog: a hung engine stopped, and marked as stopped by diskbench's timeout (``TIMED_OUT``),
    so that its failure is not told as a kill from outside; one that ended meanwhile is left alone."""
    if proc.poll() is None:
        fired.set()
        _stop(proc)


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
