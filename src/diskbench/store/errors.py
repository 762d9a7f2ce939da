"""SQLite's errors as the user's problem and its way out: a full disk, a damaged file, a busy store.

Every public method of the store goes through ``guarded``: a store on a full file system or with
damaged pages is an environment problem with a fix, never an internal error, and whatever was
committed before stays committed (the database rolls the failed transaction back). The backend
says what its driver's errors mean (``Backend.translate``; PostgreSQL's are in ``pg_errors``).
"""

from __future__ import annotations

import functools
import inspect
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import StoreError

F = TypeVar("F", bound=Callable[..., Any])
_DAMAGED = ("malformed", "not a database", "file is encrypted")
NEARLY_FULL = 1 << 20  # free bytes below which an I/O error of SQLite's is the disk being full


def store_error(exc: sqlite3.Error | OSError, path: Path) -> StoreError:
    """The message and the fix for a failure of the store at ``path``."""
    text = str(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)
    low = text.lower()
    if "full" in low or "no space" in low or "quota" in low or ("i/o error" in low and _nearly_full(path)):
        return StoreError(f"the result store's file system is full ({path}): {text}",
                          hint="free space there (or move the store with --db), then `diskbench resume RUN` "
                               "finishes an interrupted run; what was stored is kept")
    if any(word in low for word in _DAMAGED):
        return StoreError(f"the result store {path} is damaged: {text}",
                          hint=f"`diskbench doctor` checks it; keep what can be read with `sqlite3 {path} .recover "
                               "| sqlite3 recovered.sqlite` (Debian: apt-get install sqlite3) and use "
                               "--db recovered.sqlite, or move it aside to start a new store")
    if "i/o error" in low:
        return StoreError(f"the disk under the result store {path} failed: {text}",
                          hint="check the disk (dmesg), or move the store with --db")
    if "locked" in low or "busy" in low:
        return StoreError(f"the result store {path} is busy: {text}",
                          hint="another diskbench holds it; try again when it has finished")
    if "readonly" in low or "read-only" in low or "permission" in low or "unable to open" in low:
        return StoreError(f"cannot write the result store {path}: {text}",
                          hint="check the permissions of the file and its folder, or pass --db PATH")
    return StoreError(f"the result store {path} failed: {text}")


def _nearly_full(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.parent).free < NEARLY_FULL
    except OSError:
        return False


def guarded(method: F) -> F:
    """``method`` with the database's errors (and the disk's, for the artifacts beside the store)
    turned into ``StoreError``."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except StoreError:
            raise
        except OSError as exc:
            if exc.errno is None:
                raise
            raise store_error(exc, Path(exc.filename or self.path)) from None
        except Exception as exc:
            translated = self.backend.translate(exc)
            if translated is None:
                raise
            raise translated from None

    return wrapper  # type: ignore[return-value]


def guard_public(cls: type) -> type:
    """Every public method of ``cls`` and of its mixins ``guarded`` (a class decorator: no method
    can forget it)."""
    done: set[str] = set()
    for klass in cls.__mro__[:-1]:
        for name, value in list(vars(klass).items()):
            if name.startswith("_") or name in done or not inspect.isfunction(value):
                continue
            done.add(name)
            setattr(cls, name, guarded(value))
    return cls
