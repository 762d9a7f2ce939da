"""What the runner shows while it works; the terminal UI is one implementation, silence another."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol


class JobTracker(Protocol):
    label: str
    started: float

    def update(self, percent: float | None, eta_s: float | None, rate: str) -> None: ...


class Progress(Protocol):
    def line(self, text: str) -> None: ...

    def warn(self, text: str) -> None: ...

    def session(self) -> AbstractContextManager[None]: ...

    def job(self, index: int, total: int, label: str, expected_s: float,
            remaining_s: float) -> AbstractContextManager[JobTracker]: ...

    def job_done(self, tracker: JobTracker, summary: str) -> None: ...


class _Tracker:
    def __init__(self, label: str) -> None:
        self.label = label
        self.started = time.monotonic()

    def update(self, percent: float | None, eta_s: float | None, rate: str) -> None:
        return None


class NullProgress:
    """Shows nothing: for library use without a terminal."""

    def line(self, text: str) -> None:
        return None

    def warn(self, text: str) -> None:
        return None

    @contextmanager
    def session(self) -> Iterator[None]:
        yield

    @contextmanager
    def job(self, index: int, total: int, label: str, expected_s: float,
            remaining_s: float) -> Iterator[JobTracker]:
        yield _Tracker(label)

    def job_done(self, tracker: JobTracker, summary: str) -> None:
        return None
