"""The engine seam: a benchmark program diskbench drives (fio built in; DiskSpd plugs in the same way).

An engine owns everything that is specific to its program: which of the workload vocabulary it
honours, the job files it renders from its templates, the command line that runs them, how to
find or install it on a host, its status lines, and how its output becomes the one result model
(for runs and for files a user made by hand).
"""

from __future__ import annotations

import signal
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..attribution.stop_rule import Sample
from ..executors.base import TIMED_OUT, Executor
from ..model import GroupResult
from ..profile.workload import Workload

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..check import Check
    from ..plan import Unit
    from ..platforms.base import Platform
    from ..runner.progress import JobTracker
    from .segments import Segments


# A job file rendered to run by hand names this where only a run would know the folder; an engine
# whose job files cannot take it from the environment says so in its file's first comment.
BY_HAND_TARGET = "${DISKBENCH_TARGET}"


@dataclass(frozen=True)
class Place:
    """One job of a unit on its prepared target: a directory, or a raw device."""

    workload: Workload
    target_label: str
    directory: str | None
    filename: str | None = None


@dataclass
class Parsed:
    """An engine's output as results, plus what the output says about the run."""

    groups: list[GroupResult]
    facts: dict[str, Any] = field(default_factory=dict)
    document: Any = None  # the engine's output as read (fio: its JSON document), for ``Engine.verify``


@dataclass(frozen=True)
class Endpoint:
    """Where the controller reaches one host's engine server in a multi-host run."""

    address: str
    port: int


@dataclass
class HostResults:
    """A multi-host run's output as results: each host's own, by the endpoint it was reached at,
    and the merge of all of them, computed as the engine merges (never an average of hosts)."""

    merged: list[GroupResult]
    hosts: dict[Endpoint, list[GroupResult]]


class MultiHost(ABC):
    """An engine's own way to run one job on many hosts at once (a profile's ``shared:``).

    A server runs on every host; one command on the controller hands each server its job file,
    starts them together and writes every host's results, and their merge, to one output. The
    runner connects, prepares, starts and stops; what the commands and the output say is the
    engine's, so the runner never names a program or its options.
    """

    pidfile: ClassVar[str] = "server.pid"  # the server's pid file, in the host's workspace
    options: ClassVar[type[BaseModel] | None] = None  # keys this mode adds to a profile's shared:

    def plan_workload(self, workload: Workload, options: Mapping[str, Any]) -> Workload:
        """The workload as every host runs it, given the profile's ``shared:`` keys of ``options``
        (fio: each host its own random offsets, so the server's cache cannot answer for the disk)."""
        return workload

    def same_offsets(self, workload: Workload) -> bool:
        """Whether every host runs ``workload`` at the same random offsets (a pitfall: the server's
        cache, not the disk, then answers all hosts but the first)."""
        return False

    @abstractmethod
    def serve(self, bind: str, port: int, pidfile: str) -> list[str]:
        """The command that starts this engine's server on a host: listening on ``bind:port``,
        detached from the command, its pid written to ``pidfile`` (the platform stops it by that)."""

    @abstractmethod
    def drive(self, jobs: Sequence[tuple[Endpoint, str]], output: str) -> list[str]:
        """The one command, run on the controller, that starts each (server, local job file) pair
        together and writes every host's results and their merge to ``output``."""

    @abstractmethod
    def results(self, text: str, *, source: str) -> HostResults:
        """The output of ``drive`` as results; ``ParseError`` naming ``source`` when it is none."""

    def failure(self, stderr: str) -> str | None:
        """The line of the controller's stderr that says why a run failed (None: it said nothing)."""
        lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
        return next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else None)


class Live(ABC):
    """An engine's output read while it runs, for a job that stops once its answer is known (``stop:``).

    The engine runs with ``command``: its stdout carries one figure per interval as it goes and,
    at the end, its whole result (what ``output_name`` holds otherwise). ``feed`` turns the text
    as it comes into the intervals completed in it. The job is stopped by the executor's
    ``interrupt`` (Ctrl-C's way), which an engine used here must answer by ending the job and
    writing its whole result for the time it ran."""

    @abstractmethod
    def command(self, jobfile: str) -> list[str]:
        """The command line that runs ``jobfile`` with its per-interval output and result on stdout."""

    @abstractmethod
    def feed(self, text: str) -> list[dict[str, Sample]]:
        """The intervals completed by ``text`` (the next piece of stdout), each by direction."""


class UnknownLayout(Exception):
    """The files a workload lays out cannot be told from its options (the free-space check is skipped)."""


class Engine(ABC):
    name: ClassVar[str]
    default_for: ClassVar[tuple[str, ...]] = ()  # platforms where workloads that name no engine use this one
    platforms: ClassVar[tuple[str, ...]] = ("linux",)
    job_suffix: ClassVar[str] = ".job"
    output_name: ClassVar[str] = "output.txt"  # the engine's result file in the artifacts
    prefill_once: ClassVar[bool] = False  # lay out each target's file once per run, preconditioned or not

    @abstractmethod
    def check_workload(self, workload: Workload) -> list[tuple[str, str]]:
        """(key, why) for each setting of ``workload`` this engine cannot honour."""

    def refused_options(self, workload: Workload, *, allow_exec: bool) -> list[tuple[str, str]]:
        """(key, why) for each setting a profile may not give this engine: options that decide
        where I/O lands (the target alone does) or that run programs (only ``allow_exec``, which
        the person running diskbench gives on the command line, allows those)."""
        return []

    @abstractmethod
    def render(self, job: Unit, places: list[Place], *, purpose: str = "") -> str:
        """The job file for ``places`` (same input, same bytes). ``purpose`` names a preparation pass, or
        ``measure`` for the measured run of a unit (which may also record per-second series)."""

    @abstractmethod
    def command(self, jobfile: str, output: str) -> list[str]:
        """The command line that runs ``jobfile`` and writes results to ``output``."""

    def check_command(self, jobfile: str) -> list[str] | None:
        """A command that checks ``jobfile`` on the host without any I/O (None: no such check)."""
        return None

    @abstractmethod
    def version(self, ex: Executor) -> str | None:
        """The engine's version on the host, or None when it is missing (or does not run)."""

    @abstractmethod
    def parse(self, text: str, *, source: str, per_job: bool = False) -> Parsed:
        """Results from the engine's output as it left it; ``ParseError`` naming ``source``."""

    def parse_file(self, path: Path, read: Callable[[Path], str], *, per_job: bool = False) -> Parsed:
        """``parse`` of a file (``read`` decodes it whole); an engine may read only what it needs."""
        return self.parse(read(path), source=str(path), per_job=per_job)

    @abstractmethod
    def sniff(self, text: str) -> bool:
        """Whether ``text`` looks like this engine's output (import picks the engine by it)."""

    def log_files(self, rendered: str) -> list[str]:
        """Files besides the output that the measured run of ``rendered`` may write (interval logs)."""
        return []

    def status(self, progress: JobTracker) -> Callable[[str], None]:
        """A feeder of the engine's live output that updates ``progress`` (default: ignore)."""
        return lambda _text: None

    def outcome(self, art: Path, rc: int, *, stopped_early: bool = False) -> tuple[list[GroupResult], str | None]:
        """Results of a finished run in ``art`` and a failure message (None when all went well).
        ``stopped_early``: diskbench's adaptive stop ended the run on purpose (``Live``), so what the
        output says about being cut short is no failure; an engine that flags it says so here."""
        from ..errors import DiskbenchError

        out = art / self.output_name
        text = out.read_text(errors="replace") if out.exists() else ""
        stderr_file = art / "stderr.txt"
        stderr = stderr_file.read_text(errors="replace") if stderr_file.exists() else ""
        try:
            parsed = self.parse(text, source=str(out))
        except DiskbenchError as exc:
            return [], self._failure(rc, stderr) or exc.message
        sent = art / f"job{self.job_suffix}"
        changed = self.verify(sent.read_text(encoding="utf-8"), parsed) if sent.exists() else None
        if changed is not None:  # the numbers are another job's: none of them is kept
            return [], (f"{self.name} did not run the job diskbench sent: {changed}; the job file on the host "
                        "was changed, so no result is kept")
        groups = parsed.groups
        errors = [e for g in groups for e in g.errors]
        if errors:  # fio stopped by the timeout's SIGINT says it was cut short: say who stopped it first
            said = "; ".join(errors) + _stderr_hint(stderr)
            return groups, f"{self._failure(rc, stderr)}; {said}" if rc == TIMED_OUT else said
        if rc != 0:
            return groups, self._failure(rc, stderr) or f"{self.name} exited with code {rc}"
        return groups, None

    def verify(self, rendered: str, parsed: Parsed) -> str | None:
        """What the engine's output says it ran that ``rendered`` (the job file sent) does not
        say; None when they agree or the engine does not echo its job."""
        return None

    def _failure(self, rc: int, stderr: str) -> str | None:
        """Why a run that exited ``rc`` failed. diskbench's own timeout (``TIMED_OUT``) is told apart from
        a signal from outside (the OOM killer, a user): a kill read as a timeout sends the user after a
        slow disk instead of the host's memory."""
        if rc == 0:
            return None
        if rc == TIMED_OUT:
            return f"{self.name} did not finish in time and was stopped by diskbench's timeout (exit {rc})"
        signum = _signal_of(rc)
        if signum is not None:
            return _killed(self.name, rc, signum)
        return f"{self.name} exited with code {rc}{_stderr_hint(stderr)}"

    def combine(self, output: Path) -> GroupResult | None:
        """All jobs of a finished run merged into one result (for units with sections), if the
        engine can merge them exactly; None otherwise."""
        return None

    def precondition(self, workload: Workload) -> Workload:
        """The workload that writes the working set once (same files as ``workload``)."""
        return workload.model_copy(update={"rw": "write", "bs": "1M", "iodepth": 32, "time_based": False,
                                           "runtime": None, "ramp_time": None, "rate_iops": None,
                                           "rwmixread": None, "extra": {}})

    def warmup(self, workload: Workload, seconds: float) -> Workload:
        """The workload that reads the working set for ``seconds`` to fill a host read cache."""
        return workload.model_copy(update={"rw": "read", "bs": "256k", "iodepth": 32, "time_based": True,
                                           "runtime": f"{seconds:g}s", "ramp_time": None, "rate_iops": None,
                                           "rwmixread": None, "extra": {}})

    def ensure(self, ex: Executor, platform: Platform, *, install: bool, host: str,
               line: Callable[[str], None]) -> str:
        """The engine's version on the host, installing it with the platform when allowed."""
        from ..errors import ExecutionError

        found = self.version(ex)
        if found:
            return found
        if not install:
            raise ExecutionError(f"{host}: {self.name} is not installed",
                                 hint=f"install {self.name} on the host, or set install_engine: true")
        platform.install(ex, self.name, host=host, line=line)
        found = self.version(ex)
        if not found:
            raise ExecutionError(f"{host}: {self.name} was installed but does not run")
        return found

    def live(self, ramp_s: float) -> Live | None:
        """A reader of this engine's running output for an adaptive stop, for a job whose first
        ``ramp_s`` seconds are not measured; None: the engine cannot end a job early (a workload
        with ``stop:`` then runs in ``segments``, or is refused by ``check_workload``)."""
        return None

    def segments(self) -> Segments | None:
        """How this engine runs a ``stop:`` job as short runs, one after another, when it cannot end a
        job early and keep its result (``live`` is None); None: it cannot do that either."""
        return None

    def multi_host(self) -> MultiHost | None:
        """How this engine runs one job on many hosts at once; None: it cannot (a profile with
        ``shared:`` needs an engine that can, and the plan says so before anything runs)."""
        return None

    def testbed_text(self, rendered: str) -> str:
        """The job file without what changes from run to run (comments, paths): for testbed keys."""
        return rendered

    def files(self, workload: Workload) -> dict[str, int]:
        """The files one job section of ``workload`` lays out, by name, with their sizes (bytes), for the
        free-space check before a target's first job (runner/space.py); raises ``UnknownLayout`` when
        that cannot be told beforehand."""
        raise UnknownLayout(f"the {self.name} engine lays out its files its own way")

    def keeps_files(self, workload: Workload) -> bool:
        """Whether the files of ``workload``'s job stay after it ends (False: the engine removes them
        itself, so they take room only while it runs)."""
        return True

    def data_file(self, name: str, workloads: list[str]) -> bool:
        """Whether a file ``name`` in a target directory is one this engine lays out for these
        workloads (so a run can remove what it wrote, and only that)."""
        return False

    def doctor(self, ex: Executor, platform: Platform) -> list[Check]:
        from ..check import Check

        version = self.version(ex)
        return [Check(self.name, version is not None, version or "not found",
                      "" if version else f"install {self.name}")]


def _signal_of(rc: int) -> int | None:
    """The signal that ended a run with exit code ``rc``: -N from a local process, 128+N from a shell
    (the SSH host's wrapper); None for an exit of the program's own."""
    signum = -rc if rc < 0 else rc - 128 if rc > 128 else 0
    return signum if 0 < signum < signal.NSIG else None


def _killed(engine: str, rc: int, signum: int) -> str:
    """A run a signal ended that diskbench did not send, naming it; the hint in parentheses (split off by
    the reports) points at the kernel's log: the OOM killer logs whom it killed (always with SIGKILL, the
    one signal that only comes from outside), and a crash (SIGSEGV, SIGBUS) shows there too."""
    try:
        name = f"{signal.Signals(signum).name} (signal {signum})"
    except ValueError:
        name = f"signal {signum}"
    if signum == signal.SIGKILL:
        return (f"{engine} was killed by {name} from outside diskbench, exit {rc}, not by diskbench's timeout "
                "(check dmesg on the host: the kernel's OOM killer logs 'Killed process' there)")
    return (f"{engine} was ended by {name}, exit {rc}, not by diskbench's timeout (check dmesg on the host "
            "for a crash or the OOM killer)")


def _stderr_hint(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return f": {lines[0]}" if lines else ""
