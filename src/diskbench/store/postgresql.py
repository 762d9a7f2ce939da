"""The PostgreSQL backend: a store that several machines and people share.

Access layer: psycopg 3 running the store's own SQL (see docs/store.md for why not SQLAlchemy).
One connection per store object, in autocommit mode, so no transaction is ever left open between
two statements (a run holds no lock while its jobs run); a transaction is ``BEGIN ... COMMIT``
around the few statements of one step, and what it reads to change it is locked with
``FOR UPDATE`` (the run lock, a run's facts) rather than the whole database: several runners
write at once. A lock wait gives up after 30 s (``lock_timeout``) as SQLite's busy timeout does.

A commit does not wait for the server's disk flush (``synchronous_commit = off`` for diskbench's
session): the trade SQLite's store makes with WAL and ``synchronous=NORMAL``. Nothing can be
corrupted, a crash of diskbench loses nothing, and a crash of the server's machine at most the
last fraction of a second of commits, whose raw outputs the runner still has. A DSN with
``options=-csynchronous_commit=on`` keeps the server's durable default (a commit then costs the
server disk's flush, 2-4 ms on a cloud disk).

The connection is made again when it was lost (a server restart, a dropped idle connection):
a read is simply retried once; a transaction is retried only when its ``BEGIN`` failed, before
anything of it was sent. The schema is migrated in one transaction under an advisory lock, so
two processes opening a new store at once migrate it once.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..errors import StoreError
from . import dsn as dsnlib
from .backend import Row
from .pg_errors import connect_error, session_error
from .schema import SCHEMA_VERSION, statements

if TYPE_CHECKING:
    import psycopg

MIGRATION_LOCK = 0x6469736B62656E63  # "diskbenc": the advisory lock of schema migrations
LOCK_TIMEOUT = "30s"
RECENT_S = 15.0  # a connection that answered this recently is taken to be alive (see tx)
_PLACEHOLDERS: dict[str, str] = {}


def pg_sql(sql: str) -> str:
    """The store's SQL (``?`` placeholders) for psycopg (``%s``); no SQL of the store has a ``?``
    or ``%`` of its own."""
    done = _PLACEHOLDERS.get(sql)
    if done is None:
        done = _PLACEHOLDERS[sql] = sql.replace("?", "%s")
    return done


def pg_args(args: Sequence[Any]) -> Sequence[Any] | None:
    """Arguments as PostgreSQL takes them: its text cannot hold NUL, which an engine's stderr or a
    job's message may (SQLite keeps it); U+FFFD stands in for it."""
    if not args:
        return None
    if any(isinstance(a, str) and "\x00" in a for a in args):
        return [a.replace("\x00", "\ufffd") if isinstance(a, str) else a for a in args]
    return args


def _readable(conn: psycopg.Connection[Any]) -> bool:
    """Whether an idle connection has something to read: only a server that ends it (its FATAL
    message, or the end of the stream) sends anything unasked. One system call, no round trip."""
    import select

    try:
        return bool(select.select([conn.fileno()], [], [], 0)[0])
    except (OSError, ValueError):
        return True


class _PgTx:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        self.conn.execute(pg_sql(sql), pg_args(args))

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        return cast(list[Row], self.conn.execute(pg_sql(sql), args or None).fetchall())

    def insert(self, sql: str, args: Sequence[Any] = ()) -> int:
        row = self.conn.execute(pg_sql(sql), pg_args(args)).fetchone()
        assert row is not None
        return int(row["id"])

    def many(self, sql: str, args: Iterable[Sequence[Any]]) -> None:
        batch = [pg_args(a) or () for a in args]
        if batch:
            with self.conn.cursor() as cur:
                cur.executemany(pg_sql(sql), batch)


class PostgresBackend:
    dialect = "postgresql"
    for_update = " FOR UPDATE"

    def __init__(self, dsn: str, credential: Any = None) -> None:
        try:
            import psycopg  # noqa: F401 - only to say what is missing
        except ImportError:
            raise StoreError("a PostgreSQL store needs psycopg, which is not installed",
                             hint="pip install 'psycopg[binary]' (diskbench's own dependencies include it)") from None
        self.params = dsnlib.parse(dsn)
        self.location = dsnlib.redacted(self.params)
        self.path: Path = dsnlib.state_path(self.params)
        with contextlib.suppress(OSError):  # known hosts and provider journals go there, as beside a file
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.credential = credential
        self._lock = threading.RLock()
        self._conn: psycopg.Connection[Any] | None = None
        self._used = 0.0  # when the connection last answered (time.monotonic)
        self._connect()

    # --- the connection -------------------------------------------------------------------
    def _connect(self) -> psycopg.Connection[Any]:
        import psycopg
        from psycopg.rows import dict_row

        params = dsnlib.connect_params(self.params, self.credential, self.location)
        try:
            conn = psycopg.connect(autocommit=True, row_factory=dict_row, **params)
        except psycopg.Error as exc:
            raise connect_error(exc, self.location, str(params.get("user", ""))) from None
        try:
            conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
            if "synchronous_commit" not in self.params.get("options", ""):
                conn.execute("SET synchronous_commit = off")
        except psycopg.Error:
            conn.close()
            raise
        self._conn = conn
        return conn

    def _live(self) -> psycopg.Connection[Any]:
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                conn.close()
            conn = self._connect()
        return conn

    @property
    def connection(self) -> psycopg.Connection[Any]:
        with self._lock:
            return self._live()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __del__(self) -> None:
        # A store is dropped unclosed as freely as a SQLite one (the library's open_store, the CLI):
        # its connection goes with it, as sqlite3's does, rather than at the garbage collector's
        # leisure with psycopg's warning.
        conn = self.__dict__.get("_conn")
        if conn is not None and not conn.closed:
            conn.close()

    # --- statements -----------------------------------------------------------------------
    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        import psycopg

        with self._lock:
            for attempt in (1, 2):
                conn = self._live()
                try:
                    found = cast(list[Row], conn.execute(pg_sql(sql), args or None).fetchall())
                    self._used = time.monotonic()
                    return found
                except psycopg.OperationalError:
                    if attempt == 2 or not conn.broken:
                        raise
            raise AssertionError("unreachable")

    @contextmanager
    def tx(self) -> Iterator[_PgTx]:
        """One transaction, pipelined: BEGIN, the writes and COMMIT travel together (one round trip
        for a result's rows; a read inside waits for what was sent before it). A connection idle
        for a while, or with something to read while idle (a server that closed it says so), may
        have been dropped: its BEGIN goes alone first, and is sent again on a new connection when
        the old one turns out lost, before anything of the transaction was sent."""
        import psycopg
        from psycopg.pq import TransactionStatus

        with self._lock:
            conn = self._live()
            recent = time.monotonic() - self._used < RECENT_S and not _readable(conn)
            if not recent:
                try:
                    conn.execute("BEGIN")
                except psycopg.OperationalError:
                    if not conn.broken:
                        raise
                    conn = self._live()
                    conn.execute("BEGIN")
            try:
                with conn.pipeline():
                    if recent:
                        conn.execute("BEGIN")
                    yield _PgTx(conn)
                    conn.execute("COMMIT")
            except BaseException:
                if not conn.broken and conn.info.transaction_status in (TransactionStatus.INTRANS,
                                                                        TransactionStatus.INERROR):
                    conn.execute("ROLLBACK")
                raise
            self._used = time.monotonic()

    def translate(self, exc: BaseException) -> Exception | None:
        return session_error(exc, self.location)

    # --- the schema -----------------------------------------------------------------------
    def version(self) -> int:
        """The schema version; 0 for an empty database (refused when it holds another's tables)."""
        found = self.rows("SELECT to_regclass('diskbench_schema') IS NOT NULL AS ours,"
                          " to_regclass('runs') IS NOT NULL AS runs")[0]
        if found["ours"]:
            return int(self.rows("SELECT version FROM diskbench_schema")[0]["version"])
        if found["runs"]:
            raise StoreError(f"{self.location} is not a diskbench store: it has a table runs of something else",
                             hint="give diskbench a database of its own, or a schema of its own "
                                  "(?options=-csearch_path%3Ddiskbench)")
        return 0

    def migrate(self) -> None:
        version = self.version()
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.location} has schema version {version}; this diskbench knows {SCHEMA_VERSION}",
                             hint="upgrade diskbench")
        if version == SCHEMA_VERSION:
            return
        with self.tx() as tx:
            tx.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
            tx.execute("CREATE TABLE IF NOT EXISTS diskbench_schema (version INTEGER NOT NULL)")
            rows = tx.rows("SELECT version FROM diskbench_schema")
            if not rows:
                tx.execute("INSERT INTO diskbench_schema (version) VALUES (0)")
            version = int(rows[0]["version"]) if rows else 0  # another process may have done it meanwhile
            for index in range(version, SCHEMA_VERSION):
                for statement in statements(index, self.dialect):
                    tx.execute(statement)
            tx.execute("UPDATE diskbench_schema SET version = ?", (max(version, SCHEMA_VERSION),))
