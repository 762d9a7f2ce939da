"""One object owns what the user sees: messages, progress, tables, and aborting.

Interactive terminals get a rich progress bar (one line per running job, several when hosts
run in parallel); CI (``CI=true``) or no TTY gets plain lines.
"""

from __future__ import annotations

import os
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from .text import printable
from .units import human_seconds

if TYPE_CHECKING:
    from .runner.progress import JobTracker

PLAIN_STATUS_EVERY_S = 10.0


def ci_mode(stream: Any = None) -> bool:
    """Plain lines, no progress bar: in CI (``CI=true``) or when ``stream`` is not a terminal."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return True
    stream = stream or sys.stdout
    return not (hasattr(stream, "isatty") and stream.isatty())


def color(stream: Any) -> bool:
    """Whether ``stream`` gets colour: a terminal, not CI, and no NO_COLOR (https://no-color.org)."""
    return not ci_mode(stream) and "NO_COLOR" not in os.environ


class JobProgress:
    """Receives fio status updates for one job and shows them."""

    def __init__(self, ui: UI, label: str, expected_s: float, task: Any = None) -> None:
        self.ui, self.label, self.expected_s = ui, label, expected_s
        self.started = time.monotonic()
        self.percent: float | None = None
        self.rate = ""
        self._last_plain = self.started
        self._task = task

    def update(self, percent: float | None, eta_s: float | None, rate: str) -> None:
        self.percent = percent if percent is not None else self.percent
        self.rate = rate or self.rate
        progress = self.ui.progress
        if progress is not None and self._task is not None:
            completed = self.percent if self.percent is not None else self._time_share()
            progress.update(self._task, completed=completed, rate=self.rate)
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
        # Progress goes to stderr, so it is stderr that decides: `run --format json > out.json` in a
        # terminal keeps its progress bar.
        self.plain = ci_mode(sys.stderr) if plain is None else plain
        self.quiet = quiet
        # Piped or CI output is read in logs and files: do not squeeze tables to 80 columns.
        piped = ci_mode(sys.stdout) if plain is None else plain
        width = None if not piped else int(os.environ.get("COLUMNS", "200"))
        self.out = Console(highlight=False, force_terminal=False if piped else None, width=width,
                           no_color="NO_COLOR" in os.environ)
        self.err = Console(stderr=True, highlight=False, width=None if not self.plain else width,
                           no_color="NO_COLOR" in os.environ)
        self.progress: Progress | None = None
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        """A plain status line (stderr, so stdout stays clean for --format json)."""
        if not self.quiet:
            with self._lock:
                sys.stdout.flush()
                text = self.wrap(printable(text, keep_newlines=True), self.err)
                self.err.print(text, markup=False, highlight=False, soft_wrap=True)

    def verdict(self, word: str) -> str:
        """A gate verdict, in colour on a terminal that wants it: what went wrong stands out."""
        style = {"REGRESSED": "red", "ERROR": "red", "INCONCLUSIVE": "yellow"}.get(word)
        if style is None or not color(sys.stdout):
            return word
        import click

        return click.style(word, fg=style, bold=True)

    @property
    def interactive(self) -> bool:
        """Whether a question can be asked: a person at a terminal, not CI."""
        return not ci_mode(sys.stdin) and not ci_mode(sys.stderr)

    def warn(self, text: str) -> None:
        text = printable(f"warning: {text}", keep_newlines=True)
        self.err.print(self.wrap(text, self.err, len("warning: ")), markup=False, style="yellow", soft_wrap=True)

    def wrap(self, text: str, console: Console | None = None, indent: int = 2) -> str:
        """``text`` wrapped at word boundaries with a hanging indent, for a terminal; as it is for a
        log or a pipe (one line per message is what grep and CI logs want)."""
        console = console or self.out
        if not console.is_terminal:
            return text
        width = max(40, console.width)
        lines: list[str] = []
        for para in text.split("\n"):
            lead = len(para) - len(para.lstrip(" "))
            lines += textwrap.wrap(para, width, subsequent_indent=" " * (lead + indent),
                                   break_long_words=False, break_on_hyphens=False) or [""]
        return "\n".join(lines)

    def print(self, renderable: Any) -> None:
        # never crop a line to the terminal: a plain-text table that cannot fit overflows whole
        if isinstance(renderable, str):
            renderable = printable(renderable, keep_newlines=True)
        self.out.print(renderable, crop=False)

    def write(self, text: str, *, styled: bool = False) -> None:
        """Output as it is (json, csv, markdown, plain lines), but for control characters other than
        newlines and tabs, which are shown as escapes: a job name from an imported file must not
        drive the terminal or a CI log (JSON already escapes them, so it stays byte for byte).
        ``styled``: ``text`` was made printable already and carries diskbench's own colours."""
        sys.stdout.write(text if styled else printable(text, keep_newlines=True))
        sys.stdout.flush()

    @contextmanager
    def session(self) -> Iterator[None]:
        """Progress display for a whole run; jobs of several hosts show side by side."""
        if self.plain or self.quiet:
            yield
            return
        columns = (TextColumn("[bold]{task.description}"), BarColumn(),
                   TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(), TextColumn("eta"),
                   TimeRemainingColumn(), TextColumn("{task.fields[rate]}"))
        with Progress(*columns, console=self.err, transient=True) as progress:
            self.progress = progress
            try:
                yield
            finally:
                self.progress = None

    @contextmanager
    def job(self, index: int, total: int, label: str, expected_s: float,
            remaining_s: float) -> Iterator[JobTracker]:
        label = f"[{index}/{total}] {label}"
        eta = f" (about {human_seconds(remaining_s)} left in the run)" if remaining_s else ""
        progress = self.progress
        task = progress.add_task(label, total=100.0, rate="") if progress is not None else None
        if task is None:
            self.line(f"{label}: started, expected {human_seconds(expected_s)}{eta}")
        try:
            yield JobProgress(self, label, expected_s, task)
        finally:
            if progress is not None and task is not None:
                progress.remove_task(task)

    def job_done(self, tracker: JobTracker, summary: str) -> None:
        elapsed = human_seconds(time.monotonic() - tracker.started)
        self.line(f"{tracker.label}: {summary} ({elapsed})")
