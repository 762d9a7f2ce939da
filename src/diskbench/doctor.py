"""What is installed, what is missing, and the command that fixes it."""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass

from .executor import Executor
from .facts import fio_version
from .store import default_db_path

MIN_FIO = (3, 1)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def checks(ex: Executor, db: str | None) -> list[Check]:
    py_ok = sys.version_info >= (3, 10)
    out = [Check("python", py_ok, f"{platform.python_version()} ({sys.executable})",
                 "" if py_ok else "install Python 3.10 or newer")]
    version = fio_version(ex)
    if version is None:
        out.append(Check("fio", False, "not found", "apt-get install -y fio"))
    else:
        new_enough = _version_tuple(version) >= MIN_FIO
        out.append(Check("fio", new_enough, f"{version} ({ex.which('fio')})",
                         "" if new_enough else "install fio 3.1 or newer (json+ latency bins)"))
    for tool, package in (("findmnt", "util-linux"), ("lsblk", "util-linux")):
        path = ex.which(tool)
        out.append(Check(tool, path is not None, path or "not found",
                         "" if path else f"apt-get install -y {package}"))
    out.append(Check("store", True, str(db or default_db_path())))
    return out
