"""DiskSpd output (XML or text, Windows or diskspd-for-linux) -> diskbench results.

``sniff`` tells whether a file is DiskSpd output at all (also a truncated or broken one, so
that it gets DiskSpd's error and not fio's); ``parse_diskspd`` reads it. Every problem is a
one-line ``ParseError`` naming the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from diskbench.errors import ParseError
from diskbench.model import GroupResult

from .results import RunData, build_groups
from .text_result import RESULTS_RE, parse_text
from .xml_result import parse_xml

_XML_START = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?<Results\b")
_XML_MARKERS = ("<TestTimeSeconds>", "<ProcessorTopology", "<TimeSpans>", "<ComputerName>")
_TEXT_MARKERS = (
    RESULTS_RE,
    re.compile(r"^\s*Command Line: .*diskspd", re.IGNORECASE),
    re.compile(r"^\s*thread\s*\|\s*bytes\s*\|\s*I/Os\s*\|"),
    re.compile(r"^\s*(timespan|job):\s+\d+\s*$"),
)


@dataclass
class DiskspdOutput:
    """What one DiskSpd output file holds: results, and facts about the run and the machine."""

    groups: list[GroupResult]
    facts: dict[str, Any] = field(default_factory=dict)


def decode_output(data: bytes) -> str:
    """Text of a DiskSpd output file: UTF-8 (with or without BOM) or UTF-16 (PowerShell 5.1's ``>``)."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    if len(data) >= 4 and data[1:4:2] == b"\x00\x00" and data[0:1] != b"\x00":
        return data.decode("utf-16-le", errors="replace")  # UTF-16LE without BOM
    return data.decode("utf-8", errors="replace")


def _clean(text: str) -> tuple[str, list[str]]:
    """Undo what reading the file with the wrong codec did (a BOM, UTF-16 read as UTF-8)."""
    notes = []
    text = text.lstrip("\ufeff")
    if text.count("\x00") > len(text) // 4:
        text = text.replace("\x00", "").lstrip("\ufffd\ufeff\xff\xfe")
        notes.append("the file is UTF-16 but was read as UTF-8 (read it with decode_output); "
                     "non-ASCII characters may be lost")
    return text, notes


def _is_xml(text: str) -> bool:
    return bool(_XML_START.match(text)) or ("<Results>" in text and any(m in text for m in _XML_MARKERS))


def sniff(text: str) -> bool:
    """Whether ``text`` is DiskSpd output (XML or text, complete or not), rather than another engine's."""
    text, _ = _clean(text)
    if _is_xml(text):
        return True
    head = text[:200_000]
    return any(m.search(line) for line in head.splitlines() for m in _TEXT_MARKERS)


def _name(run: RunData) -> str:
    return "+".join(run.paths()) or "diskspd"


def parse_diskspd(text: str, *, source: str, per_target: bool = False) -> DiskspdOutput:
    """Results of DiskSpd output ``text`` (read from ``source``, which errors name).

    One GroupResult per run (named by its target paths), or with ``per_target`` one per target
    path of each run. Several runs in one file (timespans, or pasted text outputs) give one each.
    """
    text, notes = _clean(text)
    if not text.strip():
        raise ParseError(f"{source}: the file is empty (DiskSpd writes an empty file when it fails: see its stderr)")
    try:
        xml = _is_xml(text) or text.lstrip().startswith("<")
        runs, facts = parse_xml(text) if xml else parse_text(text)
        groups: list[GroupResult] = []
        for run in runs:
            run.notes[:0] = notes
            groups.extend(build_groups(run, per_target=per_target, name=_name(run)))
    except ParseError as exc:
        raise ParseError(f"{source}: {exc.message}") from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:  # the last line of defence
        raise ParseError(f"{source}: unexpected DiskSpd output layout ({exc})") from None
    _unique_names(groups)
    return DiskspdOutput(groups=groups, facts={**facts, "source_file": source})


def _unique_names(groups: list[GroupResult]) -> None:
    seen: dict[str, int] = {}
    for g in groups:
        seen[g.name] = seen.get(g.name, 0) + 1
        if seen[g.name] > 1:
            g.name = f"{g.name} #{seen[g.name]}"
