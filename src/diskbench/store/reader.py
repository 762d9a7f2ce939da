"""A read-only role for a PostgreSQL store: dashboards (Grafana) and people who only look.

``diskbench store grant-read ROLE`` makes the group role ``diskbench_reader`` (no login of its
own) with SELECT on every table and view of the store's schema, now and later (default
privileges of the role that runs the migrations), and grants it to ROLE, a login role that must
exist (``CREATE ROLE grafana LOGIN PASSWORD ...``; on Azure an Entra principal made with
``pgaadauth_create_principal``). Such a role can run ``runs``, ``show``, ``report``, ``compare``
and ``history``, and a dashboard can read ``results_view``; it can write nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import StoreError, UsageError

if TYPE_CHECKING:
    from .store import Store

GROUP = "diskbench_reader"


def _ident(name: str) -> str:
    from psycopg import sql

    return sql.Identifier(name).as_string(None)


def grant_statements(schema: str, database: str, role: str) -> list[str]:
    """The SQL that lets ``role`` read the store in ``schema`` of ``database``."""
    s, d, r, g = _ident(schema), _ident(database), _ident(role), _ident(GROUP)
    return [
        f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{GROUP}') THEN "
        f"CREATE ROLE {g} NOLOGIN; END IF; END $$",
        f"GRANT CONNECT ON DATABASE {d} TO {g}",
        f"GRANT USAGE ON SCHEMA {s} TO {g}",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {g}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {s} GRANT SELECT ON TABLES TO {g}",
        f"GRANT {g} TO {r}",
    ]


def grant_read(store: Store, role: str, *, apply: bool = True) -> list[str]:
    """Let ``role`` read ``store``; the statements (run when ``apply``)."""
    if store.dialect != "postgresql":
        raise UsageError("a SQLite store is a file: whoever may read the file reads the store",
                         hint="chmod/chgrp the store's file and its artifacts folder; grant-read is for "
                              "PostgreSQL stores")
    here = store.backend.rows("SELECT current_schema() AS s, current_database() AS d,"
                              " EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ?) AS known", (role,))[0]
    statements = grant_statements(str(here["s"]), str(here["d"]), role)
    if not apply:
        return statements
    if not here["known"]:
        raise StoreError(f"there is no role {role!r} at {store.location}",
                         hint=f"create it first: CREATE ROLE {_ident(role)} LOGIN PASSWORD '...'; on Azure with "
                              f"Entra: SELECT * FROM pgaadauth_create_principal('{role}', false, false)")
    with store._tx() as tx:
        for statement in statements:
            tx.execute(statement)
    return statements
