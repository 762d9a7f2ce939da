"""One object owns what the user sees: messages, progress, tables, and aborting.

Interactive terminals get a rich progress bar; CI (``CI=true``) or no TTY gets plain lines.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from .units import human_seconds

PLAIN_STATUS_EVERY_S = 10.0


def ci_mode(stream: Any = None) -> bool:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return True
    stream = stream or sys.stdout
    return not (hasattr(stream, "isatty") and stream.isatty())


class JobProgress:
    """Receives fio status updates for one job and shows them."""

    def __init__(self, ui: UI, label: str, expected_s: float) -> None:
        self.ui, self.label, self.expected_s = ui, label, expected_s
        self.started = time.monotonic()
        self.percent: float | None = None
        self.rate = ""
        self._last_plain = self.started
        self._task: Any = None

    def update(self, percent: float | None, eta_s: float | None, rate: str) -> None:
        self.percent = percent if percent is not None else self.percent
        self.rate = rate or self.rate
        if self.ui.progress is not None and self._task is not None:
            completed = self.percent if self.percent is not None else self._time_share()
            self.ui.progress.update(self._task, completed=completed, rate=self.rate)
        elif time.monotonic() - self._last_plain >= PLAIN_STATUS_EVERY_S:
            self._last_plain = time.monotonic()
            elapsed = time.monotonic() - self.started
            eta = f", eta {human_seconds(eta_s)}" if eta_s is not None else ""
            pct = f"{self.percent:.0f}%" if self.percent is not None else "running"
            self.ui.line(f"  {self.label}: {pct}, elapsed {human_seconds(elapsed)}{eta} {self.rate}")

    def _time_share(self) -> float:
        elapsed = time.monotonic() - self.started
        return min(99.0, 100.0 * elapsed / self.expected_s) if self.expected_s else 0.0


class UI:
    def __init__(self, *, plain: bool | None = None, quiet: bool = False) -> None:
        self.plain = ci_mode() if plain is None else plain
        self.quiet = quiet
        # Piped or CI output is read in logs and files: do not squeeze tables to 80 columns.
        width = None if not self.plain else int(os.environ.get("COLUMNS", "200"))
        self.out = Console(highlight=False, force_terminal=False if self.plain else None, width=width)
        self.err = Console(stderr=True, highlight=False)
        self.progress: Progress | None = None

    def line(self, text: str) -> None:
        """A plain status line (stderr, so stdout stays clean for --format json)."""
        if not self.quiet:
            sys.stdout.flush()
            self.err.print(text, markup=False, highlight=False, soft_wrap=True)

    def warn(self, text: str) -> None:
        self.err.print(f"warning: {text}", markup=False, style="yellow")

    def print(self, renderable: Any) -> None:
        self.out.print(renderable)

    def write(self, text: str) -> None:
        """Machine-readable output, byte for byte (json, csv, markdown)."""
        sys.stdout.write(text)
        sys.stdout.flush()

    @contextmanager
    def job(self, index: int, total: int, label: str, expected_s: float,
            remaining_s: float) -> Iterator[JobProgress]:
        tracker = JobProgress(self, f"[{index}/{total}] {label}", expected_s)
        eta = f" (about {human_seconds(remaining_s)} left in the run)" if remaining_s else ""
        if self.plain or self.quiet:
            self.line(f"[{index}/{total}] {label}: started, expected {human_seconds(expected_s)}{eta}")
            yield tracker
            return
        with Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[rate]}"),
            console=self.err, transient=True,
        ) as progress:
            self.progress = progress
            tracker._task = progress.add_task(tracker.label, total=100.0, rate="")
            try:
                yield tracker
            finally:
                self.progress = None

    def job_done(self, tracker: JobProgress, summary: str) -> None:
        elapsed = human_seconds(time.monotonic() - tracker.started)
        self.line(f"{tracker.label}: {summary} ({elapsed})")
