"""The SQLite backend: one file, nothing to set up; the default store.

One connection shared by the run's threads (every statement under one lock), WAL with
``synchronous=NORMAL`` (a commit is an append, not three fsyncs) and ``BEGIN IMMEDIATE``
transactions: one writer at a time, the others wait up to 30 s.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from ..errors import StoreError, UsageError
from .backend import Row
from .errors import store_error
from .schema import SCHEMA_VERSION, statements


class _SqliteTx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        self.db.execute(sql, args)

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        return cast(list[Row], self.db.execute(sql, args).fetchall())

    def insert(self, sql: str, args: Sequence[Any] = ()) -> int:
        return int(self.db.execute(sql, args).fetchone()["id"])

    def many(self, sql: str, args: Iterable[Sequence[Any]]) -> None:
        self.db.executemany(sql, args)


class SqliteBackend:
    dialect = "sqlite"
    for_update = ""  # BEGIN IMMEDIATE already holds the only write lock

    def __init__(self, path: Path) -> None:
        self.path = path
        self.location = str(path)
        if path.exists() and not path.is_file():
            raise UsageError(f"the result store {path} is not a regular file",
                             hint="pass --db with a file path (a new one is created)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open result store {path}: {exc}",
                             hint="pass --db PATH or set DISKBENCH_DB") from None
        self._lock = threading.RLock()
        self.db.row_factory = sqlite3.Row
        try:
            self.db.execute("PRAGMA foreign_keys = ON")
            # A power cut loses at most the last commits, whose raw outputs are in the artifacts.
            with contextlib.suppress(sqlite3.Error):  # a read-only store stays as it is (and junk
                self.db.execute("PRAGMA journal_mode = WAL")  # is reported by migrate)
                self.db.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            self.db.close()
            raise store_error(exc, path) from None

    @property
    def connection(self) -> sqlite3.Connection:
        return self.db

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        with self._lock:
            return cast(list[Row], self.db.execute(sql, args).fetchall())

    @contextmanager
    def tx(self) -> Iterator[_SqliteTx]:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteTx(self.db)
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def close(self) -> None:
        self.db.close()

    def translate(self, exc: BaseException) -> Exception | None:
        if isinstance(exc, sqlite3.Error):
            return store_error(exc, self.path)
        return None

    def migrate(self) -> None:
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            if "not a database" not in str(exc):
                raise
            raise StoreError(f"{self.path} is not a diskbench store: {exc}",
                             hint="pass --db with the path of a diskbench store, or of a new file") from None
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path} has schema version {version}; this diskbench knows {SCHEMA_VERSION}",
                             hint="upgrade diskbench")
        for index in range(version, SCHEMA_VERSION):
            with self.tx() as tx:
                # Another process may have migrated while this one waited for the write lock.
                if tx.rows("PRAGMA user_version")[0][0] > index:  # type: ignore[index]
                    continue
                for statement in statements(index, self.dialect):
                    tx.execute(statement)
                tx.execute(f"PRAGMA user_version = {index + 1}")
