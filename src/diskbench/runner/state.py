"""What the threads of one run share: all that a machine's or a client group's part may touch.

The runner makes one per run and hands it to every machine and client-group thread instead of
itself, so a part can count its units, fail them, say what Ctrl-C must stop and ask the
providers' runs, and nothing else; the counters and the registry of running executors are
guarded here, once, by one lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import DiskbenchError, SafetyError
from ..executors.base import Executor
from ..plan import Unit
from ..providers.base import ProviderRun
from ..store import now_iso
from .options import RunOutcome
from .progress import Progress
from .recorder import Recorder
from .shared_volume import SharedVolume

if TYPE_CHECKING:
    from .auto_repeats import Repeater


@dataclass
class RunState:
    """One run's shared state: its record, its screen, its counts, and what may be stopped."""

    run_id: str
    store: Recorder
    ui: Progress
    total: int  # units this attempt runs (the "n of total" of progress lines)
    outcome: RunOutcome
    provider_runs: Mapping[str, ProviderRun]
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _started: int = field(default=0, init=False)
    _active: list[Executor] = field(default_factory=list, init=False)
    reached: int = field(default=0, init=False)  # machines and client groups connected to
    quiet_failures: bool = False  # one machine: its connection failure is the run's one error line
    shared: SharedVolume | None = None  # the run's shared volume (a profile's shared:), made once, one part at a time
    parts_left: dict[tuple[str, str], int] = field(default_factory=dict)  # (provider, machine) -> parts using it
    repeater: Repeater | None = None  # --repeats auto: the rounds after the plan's units

    @property
    def stopped(self) -> bool:
        """Ctrl-C (or SIGTERM) asked the run to stop: no unit starts any more."""
        return self._stop.is_set()

    def interrupt(self) -> None:
        """Stop the run: no unit starts, and every engine running now is stopped as Ctrl-C would,
        all at once (a host that does not answer costs its own wait, not everyone's)."""
        self._stop.set()
        with self._lock:
            running = list(self._active)
        stoppers = [threading.Thread(target=ex.interrupt, name=f"stop-{ex.name}", daemon=True) for ex in running]
        for thread in stoppers:
            thread.start()
        for thread in stoppers:
            thread.join()

    @contextmanager
    def active(self, ex: Executor) -> Iterator[Executor]:
        """``ex`` runs a part of this run until the block ends: an interrupt reaches its engine."""
        with self._lock:
            self._active.append(ex)
        try:
            yield ex
        finally:
            with self._lock:
                self._active.remove(ex)

    def reach(self) -> None:
        """A machine (or a client group) was connected to: from here on the run has something to keep."""
        with self._lock:
            self.reached += 1

    @property
    def nothing_ran(self) -> bool:
        """No machine was reached and nothing was refused: only pre-flight failures, nothing to keep."""
        return self.reached == 0 and self.outcome.done == 0 and not self.outcome.refused

    def units(self, jobs: list[Unit]) -> Iterator[tuple[int, Unit]]:
        """A part's units with their place in ``jobs``; with automatic repeats, after the last one each
        further round the gate asks for, appended to ``jobs`` (so a failure still fails them all)."""
        index = 0
        while True:
            while index < len(jobs):
                yield index, jobs[index]
                index += 1
            if self.repeater is None or self.stopped:
                return
            more = self.repeater.next_round(jobs)
            if not more:
                return
            with self._lock:
                self.total += len(more)
            jobs.extend(more)

    def next_index(self) -> int:
        """The number of the unit that starts now (units start in any order on many threads)."""
        with self._lock:
            self._started += 1
            return self._started

    def tally(self, ok: bool, message: str | None = None) -> None:
        """One unit finished (``ok``) or failed, and why it failed."""
        with self._lock:
            self.outcome.done += ok
            self.outcome.failed += not ok
            if message is not None:
                self.outcome.messages.append(message)

    def unit_ended(self, job: Unit) -> None:
        """A unit ended on its machine (or on each client of its group): the machine's last unit so far."""
        now = time.time()
        for part in job.clients or [job]:
            prun = self.provider_runs.get(part.provider)
            use = prun.used.get(part.machine) if prun is not None else None
            if use is not None:
                use.last_unit = now

    def count_parts(self, parts: list[list[Unit]]) -> None:
        """How many parts (machine or client-group threads) use each machine, before they start."""
        for jobs in parts:
            for key in _machines(jobs):
                self.parts_left[key] = self.parts_left.get(key, 0) + 1

    def part_done(self, jobs: list[Unit]) -> list[tuple[str, str]]:
        """A part ended: the machines (provider, name) no other part still uses, to be released now."""
        free = []
        with self._lock:
            for key in _machines(jobs):
                self.parts_left[key] = self.parts_left.get(key, 1) - 1
                if self.parts_left[key] <= 0:
                    free.append(key)
        return free

    def fail(self, jobs: list[Unit], error: DiskbenchError | str, *, unreached: bool = False) -> None:
        """These units failed with ``error``; a refusal of the safety rule is kept apart (exit 6).
        ``unreached``: their machine could not be reached; with ``quiet_failures`` the run's
        closing error says so, once, instead of a line here."""
        message = str(error)
        for job in jobs:
            self.store.update_job(self.run_id, job.key, status="failed", finished=now_iso(), message=message)
        with self._lock:
            self.outcome.failed += len(jobs)
            self.outcome.messages.append(message)
            if isinstance(error, SafetyError):
                self.outcome.refused.append(message)
        if not (unreached and self.quiet_failures):
            self.ui.line(f"FAILED: {message}")

    def fail_unfinished(self, jobs: list[Unit], error: DiskbenchError | str) -> None:
        """What stopped a machine or client group (its connection, its preparation) fails the units it
        left; after Ctrl-C the unit it cut short was interrupted (resume runs it), not failed."""
        status = {j["key"]: j["status"] for j in self.store.get_jobs(self.run_id)}
        if self.stopped:
            for job in jobs:
                if status.get(job.key) == "running":
                    self.store.update_job(self.run_id, job.key, status="interrupted", finished=now_iso(),
                                          message=str(error))
            return
        self.fail([j for j in jobs if status.get(j.key, "pending") in ("pending", "running")], error)


def _machines(jobs: list[Unit]) -> list[tuple[str, str]]:
    """The machines a part runs on: its own, or its client group's clients."""
    return list(dict.fromkeys((part.provider, part.machine) for job in jobs for part in (job.clients or [job])))
