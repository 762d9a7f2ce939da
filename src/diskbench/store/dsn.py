"""A PostgreSQL DSN as connection parameters: defaults that suit a long run, and a cloud's
sign-in token as the password (a store add-on, ``addons.py``).

A run keeps one connection for hours and may write nothing for minutes: TCP keepalives keep a
cloud's load balancer from dropping it silently, and a connect that cannot reach the server gives
up after 10 s instead of libpq's forever. A DSN that names an Azure Database for PostgreSQL
flexible server (``*.postgres.database.azure.com``) and carries no password (none in the DSN, no
``PGPASSWORD``) signs in with Microsoft Entra ID: a token from azure-identity's
``DefaultAzureCredential`` (``az login``, a managed identity, workload identity in CI) for the
scope of Azure's PostgreSQL servers is the password, fetched anew at every (re)connect, so a
token's expiry (about an hour) never ends a long run. The DSN's user is then the Entra principal's
name as the server knows it (``pgaadauth_create_principal``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import platformdirs

from ..errors import UsageError

DEFAULTS = {"connect_timeout": "10", "keepalives": "1", "keepalives_idle": "30", "keepalives_interval": "10",
            "keepalives_count": "3", "application_name": "diskbench"}


def parse(dsn: str) -> dict[str, str]:
    """The DSN's parameters (libpq's names: host, port, dbname, user, password, options, ...)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        return {k: str(v) for k, v in conninfo_to_dict(dsn).items() if v is not None}
    except Exception as exc:  # noqa: BLE001 - psycopg.ProgrammingError and friends: a typo in the DSN
        raise UsageError(f"the PostgreSQL DSN is not valid: {str(exc).splitlines()[0]}",
                         hint="postgresql://USER@HOST[:PORT]/DATABASE[?sslmode=require]") from None


def redacted(params: dict[str, str]) -> str:
    """The DSN for messages and listings: never its password."""
    user = f"{params['user']}@" if params.get("user") else ""
    host = params.get("host", "")
    port = f":{params['port']}" if params.get("port") else ""
    if host.startswith("/"):  # a unix socket folder
        host, extra = "", {"host": host}
    else:
        extra = {}
    extra |= {k: v for k, v in params.items() if k in ("options", "sslmode", "hostaddr")}
    query = "&".join(f"{k}={v}" for k, v in extra.items())
    return f"postgresql://{user}{host}{port}/{params.get('dbname', '')}" + (f"?{query}" if query else "")


def connect_params(params: dict[str, str], credential: Any, where: str) -> dict[str, Any]:
    """What ``psycopg.connect`` gets: the DSN's parameters over diskbench's defaults, and an
    Entra token as the password where that applies."""
    from .addons import first

    out: dict[str, Any] = {**DEFAULTS, **params}
    token = first(lambda addon: addon.password(params, credential, where))
    if token is not None:
        out["password"] = token
        out.setdefault("sslmode", "require")  # a cloud's server requires TLS; libpq would try without
    return out


def state_path(params: dict[str, str]) -> Path:
    """Where this machine keeps its part of a PostgreSQL store: known hosts, provider journals and
    the runs' raw outputs while they are written (``Store.path``'s folder)."""
    name = "-".join(p for p in (params.get("host", "local").strip("/").replace("/", "_"), params.get("port", ""),
                                params.get("dbname", ""), params.get("options", "").replace(" ", "")) if p)
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in name)[:120]
    return Path(platformdirs.user_data_dir("diskbench")).resolve() / "postgresql" / safe / "store"
