"""What a run prepared on its hosts: mounts, arrays, file systems, scratch folders, data files.

Each is written down the moment it exists and marked released when diskbench undoes it. A run
killed with SIGKILL leaves its entries open: ``resume`` then knows the mount, the array and the
file system on its device are its own (and carries on instead of refusing its own disk), and
``cleanup`` knows what a dead run left on a host and removes exactly that.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backend import Backend, Tx

KINDS = ("scratch", "filesystem", "array", "mount", "files", "workspace")


class PreparedLog:
    """The store's record of prepared things (a mixin of ``Store``)."""

    backend: Backend

    def _tx(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def add_prepared(self, run_id: str, host: str, kind: str, what: str, detail: dict[str, Any]) -> int:
        """Record that ``run_id`` made ``what`` (a ``kind`` of thing) on ``host``; its entry id."""
        assert kind in KINDS, kind
        with self._tx() as tx:
            return tx.insert("INSERT INTO prepared (run_id, host, kind, what, detail, created) VALUES (?,?,?,?,?,?)"
                             " RETURNING id", (run_id, host, kind, what, json.dumps(detail),
                                               datetime.now(timezone.utc).isoformat(timespec="seconds")))

    def release_prepared(self, entry: int) -> None:
        """The thing of ``entry`` is undone (unmounted, stopped, removed)."""
        with self._tx() as tx:
            tx.execute("UPDATE prepared SET released = ? WHERE id = ?",
                       (datetime.now(timezone.utc).isoformat(timespec="seconds"), entry))

    def prepared(self, run_id: str | None = None, host: str | None = None, *,
                 open_only: bool = False) -> list[dict[str, Any]]:
        """Entries, oldest first: of one run and host, or (``run_id`` None) of every run."""
        sql, args = "SELECT * FROM prepared WHERE 1 = 1", list[str]()
        if run_id is not None:
            sql, args = sql + " AND run_id = ?", [*args, run_id]
        if host is not None:
            sql, args = sql + " AND host = ?", [*args, host]
        if open_only:
            sql += " AND released IS NULL"
        rows = self.backend.rows(sql + " ORDER BY id", args)
        return [{**dict(r), "detail": json.loads(r["detail"] or "{}")} for r in rows]
