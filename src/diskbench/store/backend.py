"""The seam between the store's logic and the database under it: SQLite or PostgreSQL.

``Store`` writes its SQL once, with ``?`` placeholders and rows read by column name; a backend
runs it (PostgreSQL's turns ``?`` into ``%s``), owns the connection and its thread lock, makes
transactions (SQLite: ``BEGIN IMMEDIATE``, one writer at a time; PostgreSQL: row locks, so
writers on several machines go side by side) and migrates the schema. What differs between the
two beyond that is a property here (``for_update``), never an ``if dialect`` in the store.

Which backend a store gets is decided by its location: ``postgresql://`` or ``postgres://``
opens PostgreSQL, anything else is a SQLite file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

SCHEMES = ("postgresql://", "postgres://")


def is_postgresql(location: str | Path | None) -> bool:
    """Whether ``location`` (``--db``, ``DISKBENCH_DB``) names a PostgreSQL database."""
    return isinstance(location, str) and location.startswith(SCHEMES)


class Row(Protocol):
    """One row, read by column name (``sqlite3.Row``, or a dict from psycopg)."""

    def __getitem__(self, key: str) -> Any: ...

    def keys(self) -> Iterable[str]: ...


class Tx(Protocol):
    """Statements inside one transaction; nothing is visible to others until it commits."""

    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        """Run ``sql`` (on PostgreSQL it may travel with the rest of the transaction: what must be
        known before the commit is read with ``rows``, e.g. ``UPDATE ... RETURNING``)."""

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[Row]: ...

    def insert(self, sql: str, args: Sequence[Any] = ()) -> int:
        """An ``INSERT ... RETURNING id``; the id."""

    def many(self, sql: str, args: Iterable[Sequence[Any]]) -> None:
        """``sql`` once per argument tuple, batched (one round trip on PostgreSQL)."""


class Backend(Protocol):
    dialect: str  # "sqlite" or "postgresql"
    location: str  # what messages name: the file, or the DSN without its password
    path: Path  # SQLite: the file; PostgreSQL: a file name in this machine's folder of the store
    for_update: str  # what locks the rows a transaction reads to change them (PostgreSQL)

    @property
    def connection(self) -> Any:
        """The driver's connection (``Store.db``), for tests and tools that need the database itself."""

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        """A read outside any transaction (each statement sees what is committed)."""

    def tx(self) -> AbstractContextManager[Tx]: ...

    def migrate(self) -> None: ...

    def close(self) -> None: ...

    def translate(self, exc: BaseException) -> Exception | None:
        """``exc`` as the user's problem (a ``StoreError`` with its way out), or None when it is
        not the database's."""


def first(rows: list[Row]) -> Row | None:
    return rows[0] if rows else None


def batched(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
