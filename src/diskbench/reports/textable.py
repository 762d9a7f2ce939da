"""Plain-text tables that fit the terminal they are printed on.

A storage engineer reads numbers: a table that cuts ``16,734`` to ``16,7…`` is worse than no
table. So the width is met in this order: drop optional columns, lowest priority first (the
caller decides, e.g. p95 before p90 before p99.99), and say which were dropped; then shorten
text columns (names, labels) with an ellipsis; numbers are never cut, even if the line then
overflows. Rows that share a machine and target are grouped under one line instead of
repeating them on every row.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..text import printable

GAP = "  "
INDENT = "  "  # rows under a group line
ELLIPSIS = "…"
SOFT_WIDTH = 16  # text columns shorten to this before optional columns are dropped


@dataclass
class Col:
    """One column: ``right`` for numbers; ``shrink`` lets text shorten; ``drop`` > 0 is optional
    (the highest value is dropped first when the table does not fit)."""

    head: str
    right: bool = False
    shrink: bool = False
    drop: int = 0
    min_width: int = 6


@dataclass
class _Row:
    cells: list[str] | None = None
    group: str | None = None


@dataclass
class TextTable:
    columns: list[Col]
    title: str = ""
    caption: list[str] = field(default_factory=list)
    rows: list[_Row] = field(default_factory=list)
    more: str = "a wider terminal shows them"  # where the dropped columns can be seen

    def add_row(self, *cells: Any) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(_Row(cells=[printable(str(c)) for c in cells]))  # names may come from any file

    def add_group(self, label: str) -> None:
        """A line that names what the rows below it share (machine, target, storage)."""
        self.rows.append(_Row(group=printable(label)))

    @property
    def grouped(self) -> bool:
        return any(r.group is not None for r in self.rows)

    def layout(self, width: int) -> tuple[list[int], list[int]]:
        """(indexes of the columns shown, their widths) for ``width`` characters."""
        shown = list(range(len(self.columns)))
        cells = [r.cells for r in self.rows if r.cells is not None]
        natural = [max([len(c.head)] + [len(row[i]) for row in cells]) for i, c in enumerate(self.columns)]
        indent = len(INDENT) if self.grouped else 0

        def total(idx: list[int], widths: dict[int, int]) -> int:
            return indent + sum(widths[i] for i in idx) + len(GAP) * (len(idx) - 1)

        widths = dict(enumerate(natural))

        def shorten(floor: int) -> None:
            """Shorten text columns, the widest first, one character at a time, down to ``floor``."""
            while total(shown, widths) > width:
                text = [i for i in shown if self.columns[i].shrink
                        and widths[i] > max(floor, self.columns[i].min_width)]
                if not text:
                    return
                widths[max(text, key=lambda i: widths[i])] -= 1

        shorten(SOFT_WIDTH)  # long names give way before any column is dropped
        while total(shown, widths) > width:
            optional = [i for i in shown if self.columns[i].drop > 0]
            if not optional:
                break
            shown.remove(max(optional, key=lambda i: (self.columns[i].drop, i)))
        shorten(0)
        return shown, [widths[i] for i in shown]

    def dropped(self, width: int) -> list[str]:
        shown = set(self.layout(width)[0])
        gone = [i for i in range(len(self.columns)) if i not in shown]
        return [self.columns[i].head for i in sorted(gone, key=lambda i: (-self.columns[i].drop, -i))]

    def lines(self, width: int) -> list[str]:
        shown, widths = self.layout(width)
        indent = INDENT if self.grouped else ""
        out: list[str] = []
        if self.title:
            out += textwrap.wrap(printable(self.title), width, break_long_words=False, break_on_hyphens=False) or [""]

        def fmt(cells: Sequence[str]) -> str:
            parts = []
            for i, w in zip(shown, widths, strict=True):
                col, text = self.columns[i], cells[i]
                if len(text) > w:
                    text = text[: max(w - 1, 0)] + ELLIPSIS
                parts.append(text.rjust(w) if col.right else text.ljust(w))
            return (indent + GAP.join(parts)).rstrip()

        header = fmt([c.head for c in self.columns])
        out += [header, "─" * min(len(header), width)]
        for row in self.rows:
            if row.group is not None:
                out += textwrap.wrap(row.group, width, subsequent_indent="    ", break_on_hyphens=False)
            elif row.cells is not None:
                out.append(fmt(row.cells))
        notes = list(self.caption)
        dropped = self.dropped(width)
        if dropped:
            notes.append(f"not shown at {width} columns: {', '.join(dropped)} ({self.more})")
        for note in map(printable, notes):  # a warning's ("! ...") next lines stand under its text
            out += textwrap.wrap(note, width, subsequent_indent="  " if note.startswith("! ") else "",
                                 break_long_words=False, break_on_hyphens=False) or [""]
        return out

    def render(self, width: int = 80) -> str:
        return "\n".join(self.lines(width)) + "\n"

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.segment import Segment

        for line in self.lines(options.max_width):
            yield Segment(line)
            yield Segment.line()


def count(value: float | None, digits: int = 0) -> str:
    """IOPS and MiB/s: full digits with thousands separators, never abbreviated."""
    return "-" if value is None else f"{value:,.{digits}f}"


def percent(fraction: float | None, digits: int = 1) -> str:
    return "-" if fraction is None else f"{100 * fraction:.{digits}f}%"
