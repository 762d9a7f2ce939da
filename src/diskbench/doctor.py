"""What is installed, what is missing, and the command that fixes it."""

from __future__ import annotations

import platform
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .check import Check

if TYPE_CHECKING:
    from .executors.base import Executor


MIN_FREE = 2 * 1024**3  # the local profile's working set with room to spare




def checks(ex: Executor, db: str | None, online: bool = False) -> list[Check]:
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
    out += [_store(Path(db) if db else default_db_path()), *_space(host_platform.default_scratch_base(ex))]
    out += _ssh()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    out.append(Check("chromium", chromium is not None, chromium or "not found (the HTML report tests use it)",
                     "" if chromium else "apt-get install -y chromium", optional=True))
    for name in registry.providers.names():
        out += registry.providers.get(name).doctor(online)
    return out


def _store(path: Path) -> Check:
    """The store's schema version, read without migrating it (doctor changes nothing)."""
    import sqlite3

    from .store import SCHEMA_VERSION

    if not path.exists():
        return Check("store", True, f"{path} (not created yet; the first run creates it)")
    if not path.is_file():
        return Check("store", False, f"{path}: not a regular file", "pass --db with a file path")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            problems = [row[0] for row in db.execute("PRAGMA quick_check(5)").fetchall()]  # every page read
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc):
            return Check("store", False, f"{path}: not a diskbench store ({exc})", "use --db for another file")
        problems = [str(exc)]
    if problems != ["ok"]:
        return Check("store", False, f"{path}: damaged ({'; '.join(problems)[:200]})",
                     f"sqlite3 {path} .recover | sqlite3 recovered.sqlite, then use --db recovered.sqlite")
    if version > SCHEMA_VERSION:
        return Check("store", False, f"{path}: schema {version}, newer than this diskbench ({SCHEMA_VERSION})",
                     "upgrade diskbench")
    note = "" if version == SCHEMA_VERSION else f"; the next command migrates it to {SCHEMA_VERSION}"
    return Check("store", True, f"{path} (schema version {version}{note})")


def _space(base: str | None) -> list[Check]:
    """Free space where the default scratch directory goes (the `local` profile writes there)."""
    if not base:
        return []
    where = Path(base)
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    ok = free >= MIN_FREE
    return [Check("space", ok, f"{free / 1024**3:,.1f} GiB free at {where} (default target {base})",
                  "" if ok else "free some space or use --target DIR on a larger disk")]


def _ssh() -> list[Check]:
    """A key and an agent for SSH hosts (optional: only --host and cloud machines need them)."""
    import os

    keys = sorted(p.name for p in (Path.home() / ".ssh").glob("id_*") if not p.name.endswith(".pub")) \
        if (Path.home() / ".ssh").is_dir() else []
    sock = os.environ.get("SSH_AUTH_SOCK")
    agent = bool(sock) and Path(sock or "").exists()
    return [Check("ssh key", bool(keys), ", ".join(keys) if keys else "no ~/.ssh/id_* key",
                  "" if keys else "ssh-keygen -t ed25519 (or pass --key FILE)", optional=True),
            Check("ssh agent", agent, f"SSH_AUTH_SOCK={sock}" if agent else "no agent (SSH_AUTH_SOCK unset)",
                  "" if agent else 'eval "$(ssh-agent)" && ssh-add', optional=True)]
