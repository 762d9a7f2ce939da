"""A private PostgreSQL server from Debian's binaries, for the store's tests and the bench scripts.

``initdb`` and ``pg_ctl`` in a temporary folder (as the ``postgres`` user when this is root:
PostgreSQL refuses to run as root), listening on 127.0.0.1 at a free port and on a unix socket
in that folder; ``stop`` removes it all. The admin connects through the socket without a
password; ``add_login`` makes a role that signs in over TCP with a password, as a team's
server is reached.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

ROOTS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name), reverse=True)


def binaries() -> Path | None:
    """The newest Debian PostgreSQL's bin folder, or None when no server is installed."""
    for folder in ROOTS:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """One private server. ``durable=False`` (tests) turns fsync off: nothing survives it anyway."""

    def __init__(self, *, durable: bool = False) -> None:
        found = binaries()
        if found is None:
            raise RuntimeError("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin "
                               "(apt-get install postgresql)")
        self.bin = found
        self.root = Path(tempfile.mkdtemp(prefix="diskbench-pg-"))
        self.data, self.port = self.root / "data", _free_port()
        self.user = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self._as_owner([str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth-local=trust",
                        "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"])
        settings = [f"-c port={self.port}", "-c listen_addresses=127.0.0.1", f"-c unix_socket_directories={self.root}",
                    "-c max_connections=60", "-c shared_buffers=64MB"]
        if not durable:
            settings += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        self._as_owner([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-w",
                        "-t", "60", "-o", " ".join(settings), "start"])
        self.admin_dsn = f"postgresql://postgres@/postgres?host={quote(str(self.root))}&port={self.port}"

    def _as_owner(self, argv: list[str]) -> None:
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, cwd="/", check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed: {done.stdout}{done.stderr}")

    def sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]

    def add_login(self, name: str = "diskbench", password: str | None = None, database: str | None = None) -> str:
        """A role that signs in over TCP with a password, owning a database of its own; its DSN."""
        password = password or secrets.token_hex(8)
        database = database or name
        self.sql(f"CREATE ROLE {name} LOGIN PASSWORD '{password}'")
        self.sql(f"CREATE DATABASE {database} OWNER {name}")
        return f"postgresql://{name}:{password}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError):  # already down: a test stopped it
            self._as_owner([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"])
        shutil.rmtree(self.root, ignore_errors=True)
