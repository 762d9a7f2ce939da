"""The platform seam: what a host's operating system family does for a run.

A platform prepares storage targets (finds devices, keeps the safety rule, makes filesystems,
mounts, stripes), gathers host facts, manages scratch and workspace paths, installs packages,
and writes the commands its executors send (its ``Shell``). Linux is built in; a Windows
platform plugs in the same way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import DiskbenchError, Unavailable
from ..executors.base import Executor

if TYPE_CHECKING:
    from ..check import Check
    from ..profile.targets import TargetModel


class Shell(ABC):
    """How commands are written for a platform's command interpreter."""

    @abstractmethod
    def join(self, argv: list[str]) -> str: ...

    @abstractmethod
    def quote(self, text: str) -> str: ...

    @abstractmethod
    def privileged(self, cmd: str, *, sudo: bool, user: str) -> str: ...

    @abstractmethod
    def which(self, program: str) -> str: ...

    @abstractmethod
    def start_detached(self, argv: list[str], work: str, wrap: Callable[[list[str]], str]) -> str:
        """Start ``argv`` detached in ``work`` (files stdout.txt, stderr.txt, exit_code there) and
        print ``PID <n>`` on stderr; ``wrap`` turns an argv into a command line (privileges)."""

    @abstractmethod
    def follow(self, work: str, pid: str | None, start: str, received: int) -> str:
        """Stream stdout.txt from byte ``received`` until the command ends, then ``RC <code>`` on stderr
        (after running ``start`` when there is no ``pid`` yet)."""

    @abstractmethod
    def stop(self, pid: str, wrap: Callable[[list[str]], str]) -> str:
        """Stop the detached command (gently first where the program writes partial results)."""

    @abstractmethod
    def write_file(self, path: str) -> str:
        """A command that writes its stdin to ``path`` (creating folders): for hosts without SFTP."""

    @abstractmethod
    def read_file(self, path: str) -> str:
        """A command that prints ``path`` as base64, failing when it does not exist."""

    @abstractmethod
    def make_workspace(self) -> str:
        """A command that makes a new folder only the login user can write (privileged steps read
        their job files from it), checks that it is so, and prints its path: never a name another
        user of the host could have made first."""

    def hold_lock(self, name: str, info: str) -> str | None:
        """A command that takes the host-wide lock ``name``, writes ``info`` beside it, prints
        ``LOCKED`` and holds the lock until its stdin closes (the connection ends); when another
        holds it, exits 75 after printing what that holder wrote. None: no locks on this platform."""
        return None

    def stop_pidfile(self, pidfile: str) -> list[str] | None:
        """A command that stops the daemon whose pid is in ``pidfile`` (gently, for good after a few
        seconds) and removes the file; None where the platform cannot (no engine server runs there)."""
        return None

    def reached_address(self) -> list[str] | None:
        """A command that prints this host's own address of the SSH connection it runs in (where a
        server must listen to be reached as SSH was); None where the platform cannot tell."""
        return None

    def session(self) -> str | None:
        """A long-lived interpreter that runs ``framed`` commands one after another, so a host's
        many small commands share one SSH channel; None where the platform has none."""
        return None

    def framed(self, cmd: str, token: str) -> str:
        """``cmd`` for the ``session`` interpreter: stdin closed, then a line ``token RC NERR``
        on stdout followed by NERR bytes of the command's stderr."""
        raise NotImplementedError


@dataclass(frozen=True)
class DeviceMap:
    """Where a machine's disks appear, as its provider knows them; paths are tried in order."""

    luns: tuple[str, ...] = ()  # the device of LUN n, when the provider knows it for this machine
    lun_paths: tuple[str, ...] = ()  # patterns with {n}: the data disk at LUN n
    temp_paths: tuple[str, ...] = ()  # the temp (resource) disk's partition or device
    temp_mounts: tuple[str, ...] = ()  # where images mount the temp disk when no path matches
    temp_nvme_models: tuple[str, ...] = ()  # NVMe models of raw temp disks the platform formats itself (v6)
    # When no path names LUN n: the namespace n + lun_namespace_offset of the NVMe controller whose model is one
    # of these (the OS and data disks of one remote controller, on images without the cloud's udev rules)
    lun_namespace_models: tuple[str, ...] = ()
    lun_namespace_offset: int = 0
    nvme_exclude_models: tuple[str, ...] = ()  # NVMe controllers that are not local disks
    lun_locations: tuple[str, ...] = ()  # Windows: the end of a disk's Location for LUN n, with {n}
    temp_drives: tuple[str, ...] = ()  # Windows: drives where the temp disk is mounted
    lun_hint: str = ""
    temp_hint: str = ""

    def merged(self, other: DeviceMap) -> DeviceMap:
        def cat(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(dict.fromkeys((*a, *b)))

        return DeviceMap(luns=self.luns or other.luns, lun_paths=cat(self.lun_paths, other.lun_paths),
                         temp_paths=cat(self.temp_paths, other.temp_paths),
                         temp_mounts=cat(self.temp_mounts, other.temp_mounts),
                         temp_nvme_models=cat(self.temp_nvme_models, other.temp_nvme_models),
                         lun_namespace_models=cat(self.lun_namespace_models, other.lun_namespace_models),
                         lun_namespace_offset=self.lun_namespace_offset or other.lun_namespace_offset,
                         nvme_exclude_models=cat(self.nvme_exclude_models, other.nvme_exclude_models),
                         lun_locations=cat(self.lun_locations, other.lun_locations),
                         temp_drives=cat(self.temp_drives, other.temp_drives),
                         lun_hint=self.lun_hint or other.lun_hint, temp_hint=self.temp_hint or other.temp_hint)


class Journal:
    """What a run prepares on one host (mounts, arrays, file systems, folders), written down the
    moment each exists and marked undone when diskbench undoes it; ``earlier`` holds what earlier
    attempts of the same run wrote down on this host (resume). Without a store it forgets."""

    def __init__(self, record: Callable[[str, str, dict[str, Any]], int] | None = None,
                 release: Callable[[int], None] | None = None,
                 earlier: list[dict[str, Any]] | None = None) -> None:
        self._record, self._release = record, release
        self.earlier = earlier or []

    def made(self, kind: str, what: str, **detail: Any) -> int:
        return self._record(kind, what, detail) if self._record is not None else 0

    def undone(self, entry: int) -> None:
        if self._release is not None and entry:
            self._release(entry)

    def ours(self, kind: str) -> list[dict[str, Any]]:
        """Earlier attempts' entries of ``kind`` (whatever became of them)."""
        return [e for e in self.earlier if e["kind"] == kind]


@dataclass
class Prepared:
    """Where the engine writes for one target: a directory, or a raw device."""

    directory: str | None = None
    filename: str | None = None
    devices: list[str] = field(default_factory=list)
    cleanup: list[Callable[[], None]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        return self.directory is not None or self.filename is not None

    def release(self) -> None:
        for step in reversed(self.cleanup):
            try:
                step()
            except DiskbenchError:
                continue
        self.cleanup.clear()


class Preparer(ABC):
    """Prepares the targets of one machine for one run, and undoes it with ``Prepared.release``."""

    @abstractmethod
    def prepare(self, target: TargetModel, writes: bool) -> Prepared: ...

    def flush_cache(self, where: Prepared, size: int, art: Path, name: str = "flush") -> None:
        """A workload's ``flush_cache`` before a job on ``where``, never measured: with ``size``, read a
        separate data set of ``size`` bytes (laid out beside the job's files the first time, removed
        with the target) with direct I/O, so the storage's caches hold other data; then drop this
        host's own caches. What it runs and says is kept in ``art`` as ``name.*`` files. Only platforms
        with ``Platform.flushes_caches`` have it (the plan refuses the key elsewhere)."""
        raise Unavailable(f"{type(self).__name__} cannot flush caches")

    def flush_set_bytes(self, size: int) -> int:
        """Bytes the separate data set of a ``flush_cache`` of ``size`` takes on the target (the runner
        counts it with the job's files before the first job: it is laid out beside them)."""
        return size


class Platform(ABC):
    name: ClassVar[str]
    engine: ClassVar[str | None] = None  # tried first for workloads that name no engine (it must agree)
    flushes_caches: ClassVar[bool] = False  # its preparer has the flush_cache step (Preparer.flush_cache)

    @abstractmethod
    def shell(self) -> Shell: ...

    @abstractmethod
    def which(self, ex: Executor, program: str, *, privileged: bool = False) -> str | None:
        """Where ``program`` is on the host (``privileged``: on the PATH privileged steps run with)."""

    @abstractmethod
    def make_scratch_dir(self, ex: Executor, near: str | None = None) -> str: ...

    @abstractmethod
    def remove_tree(self, ex: Executor, path: str) -> None: ...

    @abstractmethod
    def is_dir(self, ex: Executor, path: str) -> bool: ...

    @abstractmethod
    def host_facts(self, ex: Executor) -> dict[str, Any]: ...

    @abstractmethod
    def target_facts(self, ex: Executor, path: str) -> dict[str, Any]: ...

    @abstractmethod
    def preparer(self, ex: Executor, *, devices: DeviceMap, allowed: list[str], name: str, run_id: str,
                 scratch_base: str | None, line: Callable[[str], None],
                 journal: Journal | None = None, exclusive: bool = True) -> Preparer:
        """``exclusive``: lock each target against other runs while this one uses it (a client
        group's shared target is used by all its clients at once: not locked)."""

    def undo(self, ex: Executor, entry: dict[str, Any], line: Callable[[str], None]) -> bool:
        """Undo one thing a run prepared and left (``Journal`` entry: a mount, an array, a folder)
        because it was killed; True when done or nothing was left, False when this platform does
        not know the kind."""
        return False

    @abstractmethod
    def install(self, ex: Executor, package: str, *, host: str, line: Callable[[str], None]) -> None:
        """Install a package with the host's package manager (or explain why not)."""

    def list_files(self, ex: Executor, path: str) -> dict[str, int] | None:
        """Regular files directly in ``path`` with their sizes (None: this platform cannot say)."""
        return None

    def free_bytes(self, ex: Executor, path: str) -> int | None:
        """Bytes the engine's files may still take in the file system holding ``path``, as the host
        reports them (the runner refuses a target whose workloads' files would not fit, before fio
        fails half-way with ENOSPC); None: this platform cannot tell. A probe that fails raises."""
        return None

    def remove_files(self, ex: Executor, path: str, names: list[str]) -> None:  # noqa: B027 - optional hook
        """Remove these files from ``path`` (names as ``list_files`` gave them)."""

    def remove_workspace(self, ex: Executor, root: str) -> None:
        """Remove a connection's workspace (``Shell.make_workspace``) with all it holds."""
        self.remove_tree(ex, root)

    def doctor(self, ex: Executor) -> list[Check]:
        """The host tools this platform needs, for ``diskbench doctor``."""
        return []

    def default_scratch_base(self, ex: Executor) -> str | None:
        """Where scratch directories go when the user said nothing."""
        return None
