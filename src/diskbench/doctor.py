"""What is installed, what is missing, and the command that fixes it."""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .executors.base import Executor


@dataclass
class Check:
    """One line of ``diskbench doctor``."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


def checks(ex: Executor, db: str | None) -> list[Check]:
    from . import registry
    from .store import default_db_path

    py_ok = sys.version_info >= (3, 10)
    out = [Check("python", py_ok, f"{platform.python_version()} ({sys.executable})",
                 "" if py_ok else "install Python 3.10 or newer")]
    host_platform = registry.platforms.get(ex.platform)
    for name in registry.engines.names():
        engine = registry.engines.get(name)
        if ex.platform in engine.platforms:
            out += engine.doctor(ex, host_platform)
    out += host_platform.doctor(ex)
    out.append(Check("store", True, str(db or default_db_path())))
    return out
