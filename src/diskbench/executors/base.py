"""Where commands run: the executor seam (this machine, SSH, ...).

The runner speaks only to an Executor, so a job runs the same way here and on a remote host.
An executor moves commands and files; what the commands say (POSIX shell, PowerShell) is the
host's platform's business, and an executor asks its platform's shell when it must write one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# What ``Executor.stream`` returns when its own timeout stopped the command (as timeout(1) exits): the
# engine's outcome then says diskbench stopped it, which an engine killed from outside (exit -9, 137)
# must not be mistaken for.
TIMED_OUT = 124


@dataclass
class Completed:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str


class Executor(ABC):
    """Run commands and move files on one host."""

    name: str
    platform: str = "linux"  # the host's platform (registry name): prepares targets, writes commands

    @abstractmethod
    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        """Run a short command to completion and capture its output.

        ``privileged`` steps (mkfs, mount, fio on devices) get sudo where the host asks for it.
        """

    def run_many(self, commands: Sequence[list[str]], *, timeout: float = 60.0,
                 privileged: bool = False) -> list[Completed]:
        """Several short commands in order; an executor that can send them in one round trip
        does (a host's facts, a unit's outputs), which is what keeps many hosts cheap."""
        return [self.run(argv, timeout=timeout, privileged=privileged) for argv in commands]

    @abstractmethod
    def stream(self, argv: list[str], *, on_output: Callable[[str], None], timeout: float,
               stdout_path: Path, stderr_path: Path, privileged: bool = False,
               workdir: str | None = None) -> int:
        """Run a long command, feeding its stdout to ``on_output`` as it comes; keep both streams. Its exit
        code, or ``TIMED_OUT`` when it ran past ``timeout`` and the executor stopped it."""

    @abstractmethod
    def write_text(self, path: str, text: str) -> None: ...

    @abstractmethod
    def fetch(self, path: str, dest: Path) -> bool:
        """Copy a host file into the local artifacts; False if it does not exist."""

    def fetch_many(self, pairs: Sequence[tuple[str, Path]]) -> list[bool]:
        """``fetch`` for each (host path, local path), in one round trip where the executor can."""
        return [self.fetch(path, dest) for path, dest in pairs]

    @abstractmethod
    def workspace(self, local_dir: Path) -> str:
        """Where this host keeps a job's files (job file, fio output) for ``local_dir``."""

    def workspace_root(self, *, make: bool = False) -> str | None:
        """The private folder on the host that holds every ``workspace`` of this connection: made
        now with ``make``, else only once one was made (None: the host keeps files in the local
        artifacts)."""
        return None

    def hold(self, name: str, info: str, reclaim: str | None = None) -> str | None:
        """Take the host-wide lock ``name`` until ``close``; None when taken, else what the holder
        wrote as its ``info`` (who holds it). A holder whose info starts with ``reclaim`` is an
        engine an earlier, killed attempt of the same run left running: it may be stopped to take
        the lock. Hosts whose platform has no locks always grant it."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections (and the locks held through them)."""

    def interrupt(self) -> None:  # noqa: B027 - optional hook
        """Stop the long command running now (from another thread), as Ctrl-C would."""
