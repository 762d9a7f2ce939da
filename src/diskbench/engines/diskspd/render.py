"""DiskSpd jobs as XML profiles (``diskspd -X profile.xml``), and the command lines that run them.

A profile always measures latency (-L) and the per-second series (-D): diskbench's results
need both. Results are asked for as XML on the command line (``-Rxml``; ``-Rpxml`` validates the
profile on the host without any I/O). Elements come in the order DiskSpd itself writes a
profile (what ``-Rpxml`` prints), which its schema accepts.

Creating the file (``-c``) is a property of the target, not of the workload: DiskSpd recreates
a file every time it is given a size, so the caller sets ``create_size`` only for the run that
prepares the target, and measured runs reuse the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jinja2

from diskbench.errors import ProfileError
from diskbench.resources import environment
from diskbench.units import parse_size

from .options import resolve

TEMPLATE = "profile.xml.j2"  # in templates/diskspd/
DEFAULT_EXE = "diskspd"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class UnsupportedOptions(ProfileError):
    """Workload options DiskSpd cannot honour; ``problems`` holds each (key, why)."""

    def __init__(self, problems: list[tuple[str, str]], *, where: str = "workload") -> None:
        self.problems = problems
        text = "; ".join(f"{key}: {why}" for key, why in problems)
        super().__init__(f"{where}: DiskSpd cannot run this: {text}")


@dataclass(frozen=True)
class DiskspdTarget:
    """A file, ``#<disk number>`` or ``<drive letter>:`` that DiskSpd works on.

    ``create_size`` makes DiskSpd (re)create the file at that size first (``-c``, in the profile
    ``<FileSize>``): give it only for the run that prepares the target.
    """

    path: str
    create_size: str | int | None = None


@dataclass(frozen=True)
class _TargetView:
    path: str
    create_bytes: int | None


def _target(t: DiskspdTarget | str) -> _TargetView:
    target = DiskspdTarget(t) if isinstance(t, str) else t
    if not target.path or target.path != target.path.strip() or _CONTROL.search(target.path):
        raise ProfileError(f"DiskSpd target {target.path!r}: a path must be non-empty, without control characters "
                           "or surrounding spaces")
    if target.create_size is None:
        return _TargetView(target.path, None)
    try:
        size = parse_size(target.create_size)
    except ValueError:
        size = 0
    if size <= 0:
        raise ProfileError(f"DiskSpd target {target.path}: create_size {target.create_size!r} is not a size above 0")
    return _TargetView(target.path, size)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """One per process, so the template is compiled once; escaped: paths may hold & < > ' "."""
    env = environment("diskspd", escape=True)
    env.filters["xml_bool"] = lambda v: "true" if v else "false"
    return env


def _comment(text: str) -> str:
    """Text safe inside an XML comment ('--' is not allowed there)."""
    text = _CONTROL.sub(" ", text)
    while "--" in text:
        text = text.replace("--", "- -")
    return text.rstrip("-")


def render_profile(workload: Mapping[str, Any], targets: Sequence[DiskspdTarget | str], *,
                   title: str | None = None) -> str:
    """The DiskSpd XML profile that runs ``workload`` on ``targets`` (same input, same bytes).

    Raises :class:`UnsupportedOptions` naming every key DiskSpd cannot honour (see
    :func:`check_workload`), and ``ProfileError`` for a bad target.
    """
    if not targets:
        raise ProfileError("a DiskSpd profile needs at least one target")
    views = [_target(t) for t in targets]
    ts, io, problems = resolve(workload)
    if problems:
        raise UnsupportedOptions(problems, where=str(workload.get("name") or "workload"))
    name = title or str(workload.get("name") or "workload")
    return _environment().get_template(TEMPLATE).render(
        comment=_comment(f"diskbench: DiskSpd profile for {name}"), ts=ts, io=io, targets=views)


def command(profile_path: str, *, validate: bool, exe: str = DEFAULT_EXE) -> list[str]:
    """argv that runs the profile with XML results; ``validate`` checks it on the host, without I/O."""
    if not profile_path or _CONTROL.search(profile_path) or profile_path != profile_path.strip():
        raise ProfileError(f"DiskSpd profile path {profile_path!r} is empty, or has control characters or "
                           "surrounding spaces")
    return [exe, "-Rpxml" if validate else "-Rxml", f"-X{profile_path}"]
