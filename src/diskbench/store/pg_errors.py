"""PostgreSQL's errors as the user's problem and its way out, one line each.

A server that cannot be reached, a wrong password, a database that does not exist, a full disk,
a role without rights, a connection lost mid-run: each is a ``StoreError`` (exit 1) naming the
server (never the password) and the fix. Errors of connecting carry no SQLSTATE (the server has
not said anything, or said it before the session existed), so those are told by libpq's words.
"""

from __future__ import annotations

from ..errors import StoreError

_RETRY = "try again; `diskbench resume RUN` finishes a run that stopped, and what was stored is kept"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    for prefix in ("connection failed: ",):
        text = text.removeprefix(prefix)
    return " ".join(text.split("\n")[0].split()) or type(exc).__name__


def connect_error(exc: BaseException, where: str, user: str) -> StoreError:
    """Why a connection to ``where`` failed, and what to do."""
    text = _first_line(exc)
    low = text.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        return StoreError(f"PostgreSQL at {where} refused the password of user {user!r}",
                          hint="check the password in the DSN or PGPASSWORD (or ~/.pgpass); an Azure server "
                               "signs in with an Entra token when no password is given")
    from .addons import addons

    if "pam authentication failed" in low or any(addon.refused(low) for addon in addons()):
        return StoreError(f"PostgreSQL at {where} refused the Entra token of {user!r}: {text}",
                          hint="the DSN's user must be the Entra principal's name as the server knows it "
                               "(pgaadauth_create_principal), and `az login` must be that principal")
    if "does not exist" in low and "database" in low:
        return StoreError(f"PostgreSQL at {where}: {text}",
                          hint="create it (`createdb NAME`, or CREATE DATABASE as an administrator)")
    if "does not exist" in low and "role" in low:
        return StoreError(f"PostgreSQL at {where}: {text}", hint="check the DSN's user, or create the role")
    if "no pg_hba.conf entry" in low:
        return StoreError(f"PostgreSQL at {where} does not let this machine in: {text}",
                          hint="add a pg_hba.conf line for it (Azure: a firewall rule for this address), "
                               "or add ?sslmode=require when the server needs TLS")
    if "too many" in low and "connection" in low:
        return StoreError(f"PostgreSQL at {where} has no connection left: {text}",
                          hint="raise max_connections, or wait for other clients to finish")
    if "starting up" in low or "shutting down" in low or "recovery" in low:
        return StoreError(f"PostgreSQL at {where} is not accepting connections now: {text}",
                          hint="wait until the server is up, then " + _RETRY)
    if "resolve" in low or "translate host name" in low or "name or service not known" in low:
        return StoreError(f"cannot find the PostgreSQL server of {where}: {text}",
                          hint="check the host name in the DSN (--db or DISKBENCH_DB)")
    return StoreError(f"cannot reach PostgreSQL at {where}: {text}",
                      hint="check that the server runs and that its host and port in the DSN are right "
                           "(a firewall between?); then " + _RETRY)


def session_error(exc: BaseException, where: str) -> StoreError | None:
    """An error of a statement, by its SQLSTATE class; None when it is no database problem
    (a bug in diskbench: the caller lets it through)."""
    import psycopg

    if not isinstance(exc, psycopg.Error):
        return None
    state = getattr(exc, "sqlstate", None) or ""
    text = _first_line(exc)
    if state == "53100" or "no space left" in text.lower():
        return StoreError(f"the PostgreSQL server at {where} is out of disk space: {text}",
                          hint="free or add space on the server, then " + _RETRY)
    if state.startswith("53"):
        return StoreError(f"the PostgreSQL server at {where} is out of resources: {text}", hint=_RETRY)
    if state in ("42501",) or state.startswith("28"):
        return StoreError(f"PostgreSQL at {where} does not let this user do that: {text}",
                          hint="a read-only role can read the store but not run or import into it; use a "
                               "role that owns the store's tables")
    if state == "25006":
        return StoreError(f"PostgreSQL at {where} is read-only here: {text}",
                          hint="point --db at the primary server, not a replica")
    if state in ("55P03", "40001", "40P01", "57014"):
        return StoreError(f"the result store at {where} is busy: {text}",
                          hint="another diskbench holds what this one needs; " + _RETRY)
    if state.startswith(("57P", "08")) or isinstance(exc, psycopg.OperationalError):
        return StoreError(f"lost the connection to PostgreSQL at {where}: {text}", hint=_RETRY)
    if state in ("42P01", "42703"):
        return StoreError(f"the database at {where} is not a diskbench store (or a newer one): {text}",
                          hint="point --db at a diskbench store, or upgrade diskbench")
    if isinstance(exc, psycopg.DataError):
        return StoreError(f"PostgreSQL at {where} refused a value: {text}")
    return None
