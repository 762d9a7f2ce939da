"""The store's tests run twice: on SQLite and on a real PostgreSQL server, with the same assertions.

The server is ``DISKBENCH_TEST_PG_DSN`` (an administrator's DSN; ``.ci/run`` starts Debian's
server and sets it), else a private cluster this session starts from Debian's binaries
(``pgcluster.py``) and removes at the end. Each test gets a schema of its own in a database of
a login role that signs in over TCP with a password, as a team's server is reached. The
PostgreSQL runs are skipped only when no server binaries are installed.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from .pgcluster import Cluster, binaries

BACKENDS = ["sqlite", "postgresql"]


@dataclass
class Server:
    admin_dsn: str
    host: str
    port: int
    role: str
    password: str
    database: str
    cluster: Cluster | None = None

    def dsn(self, schema: str | None = None, *, user: str | None = None, password: str | None = None) -> str:
        options = f"?options={quote(f'-csearch_path={schema}')}" if schema else ""
        return (f"postgresql://{user or self.role}:{password or self.password}@{self.host}:{self.port}/"
                f"{self.database}{options}")

    def admin(self, statement: str, database: str | None = None) -> list[Any]:
        import psycopg
        from psycopg.conninfo import make_conninfo

        conninfo = make_conninfo(self.admin_dsn, dbname=database) if database else self.admin_dsn
        with psycopg.connect(conninfo, autocommit=True) as conn:
            cur = conn.execute(statement)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    from psycopg.conninfo import conninfo_to_dict

    given = os.environ.get("DISKBENCH_TEST_PG_DSN")
    cluster = None
    if given:
        admin = given
        params = conninfo_to_dict(given)
        host, port = str(params.get("host") or "127.0.0.1"), int(params.get("port") or 5432)
    else:
        if binaries() is None:
            pytest.skip("no PostgreSQL server binaries (apt-get install postgresql) and no DISKBENCH_TEST_PG_DSN")
        cluster = Cluster()
        admin, host, port = cluster.admin_dsn, "127.0.0.1", cluster.port
    tag = secrets.token_hex(4)
    server = Server(admin, host, port, f"dbt_{tag}", secrets.token_hex(8), f"dbt_{tag}", cluster)
    server.admin(f"CREATE ROLE {server.role} LOGIN CREATEROLE PASSWORD '{server.password}'")
    server.admin(f"CREATE DATABASE {server.database} OWNER {server.role}")
    try:
        yield server
    finally:
        if cluster is not None:
            cluster.stop()
        else:
            server.admin(f"DROP DATABASE IF EXISTS {server.database} WITH (FORCE)")
            for row in server.admin(f"SELECT rolname FROM pg_roles WHERE rolname LIKE '{server.role}%'"):
                server.admin(f"DROP ROLE IF EXISTS {row[0]}")


@pytest.fixture
def local_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This machine's folder of a PostgreSQL store (platformdirs' data folder) inside the test."""
    home = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.delenv("DISKBENCH_ARTIFACTS", raising=False)
    return home


@pytest.fixture
def pg_schema(request: pytest.FixtureRequest, local_state: Path) -> Iterator[str]:
    """A DSN of a fresh, empty schema (dropped at the end)."""
    server: Server = request.getfixturevalue("pg_server")
    schema = f"t_{secrets.token_hex(6)}"
    server.admin(f"CREATE SCHEMA {schema} AUTHORIZATION {server.role}", server.database)
    try:
        yield server.dsn(schema)
    finally:
        server.admin(f"DROP SCHEMA {schema} CASCADE", server.database)


@pytest.fixture(params=BACKENDS)
def store_at(request: pytest.FixtureRequest, tmp_path: Path, local_state: Path) -> str:
    """Where the store of this test is: a new SQLite file, or a new PostgreSQL schema."""
    if request.param == "sqlite":
        return str(tmp_path / "store" / "db.sqlite")
    return str(request.getfixturevalue("pg_schema"))


def scalar(store: Any, sql: str) -> Any:
    """One value of a query on the store's own connection (either driver)."""
    row = store.db.execute(sql).fetchone()
    return row[0] if not isinstance(row, dict) else next(iter(row.values()))
