"""Text from profiles, arguments and engine outputs: control characters refused or escaped.

A value that reaches a job file or a command line is one line of plain text, or the consumer
reads something else than diskbench meant: a newline in a target path became a ``[global]``
section with ``exec_prerun`` in fio's job file. So control characters are refused where values
enter (profiles, ``--set``, arguments). What diskbench only prints (job names from an imported
file, a host's own messages) is escaped instead, so an ESC cannot move the cursor or recolour
the terminal and a newline cannot forge a table row.
"""

from __future__ import annotations

import math
import re
from typing import Any

# C0 controls, DEL, C1 controls, and the Unicode bidi overrides that reorder what a terminal shows
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_CONTROL_BUT_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_NAMES = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", "\x1b": "an escape (ESC)",
          "\x00": "a NUL byte"}


def control_char(text: str, *, lines_ok: bool = False) -> str | None:
    """The first control character in ``text`` named for a message (``a newline``), or None."""
    found = (_CONTROL_BUT_LINES if lines_ok else _CONTROL).search(text)
    if found is None:
        return None
    char = found.group()
    return _NAMES.get(char, f"the control character U+{ord(char):04X}")


def check_line(text: str, what: str) -> str:
    """``text`` when it is one line of plain text; ValueError naming ``what`` otherwise."""
    bad = control_char(text)
    if bad:
        raise ValueError(f"{what} contains {bad}; values must be one line of plain text")
    return text


MULTILINE_KEYS = ("description",)  # free text that may span lines: only ever written as comments


def first_unsafe(data: Any) -> tuple[list[Any], str] | None:
    """The key path and the problem of the first unsafe value in parsed data (any depth): a
    string or key with a control character (descriptions may span lines), a non-finite number."""
    stack: list[tuple[list[Any], Any]] = [([], data)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, str):
            bad = control_char(value, lines_ok=bool(loc) and loc[-1] in MULTILINE_KEYS)
            if bad:
                return loc, f"contains {bad}; values must be plain text"
        elif isinstance(value, float) and not math.isfinite(value):
            return loc, f"{value} is not a finite number"
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                if isinstance(key, str) and (bad := control_char(key)):
                    return [*loc, key], f"the key {key!r} contains {bad}"
                stack.append(([*loc, key], item))
        elif isinstance(value, (list, tuple)):
            stack.extend(([*loc, i], item) for i, item in reversed(list(enumerate(value))))
    return None


def plain_values(data: Any) -> Any:
    """``data`` when every value in it is plain (``first_unsafe``); ValueError naming the key
    otherwise: for pydantic models' before-validators."""
    found = first_unsafe(data) if isinstance(data, dict) else None
    if found is not None:
        loc, problem = found
        raise ValueError(f"{'.'.join(str(p) for p in loc)}: {problem}" if loc else problem)
    return data


def shown(value: Any) -> str:
    """A value as a message quotes it: its repr, cut short (a 5,000-character value is not quoted whole)."""
    text = repr(value)
    return text if len(text) <= 42 else text[:40] + "…"


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with control characters shown as escapes (``\\x1b``, ``\\n``), safe to print."""
    pattern = _CONTROL_BUT_LINES if keep_newlines else _CONTROL
    if pattern.search(text) is None:
        return text
    return pattern.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
