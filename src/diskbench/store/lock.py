"""A run belongs to the one process working on it: its pid, its host, and a heartbeat.

Two ``resume``s of one run used to run the same jobs at once on the same files. Now the process
that creates or resumes a run takes it (in the same transaction that checks nobody else has),
renews a heartbeat while it works and lets go when it finishes. A holder is alive when its
process exists on this machine, or, on another machine sharing the store, when its heartbeat is
recent; a holder that crashed or was killed is seen as gone and its run can be resumed. On a
PostgreSQL store the check and the take lock the run's row (``FOR UPDATE``): two machines that
resume one run at the same moment take turns, and the second sees the first as the holder.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Protocol

from ..errors import StoreError

if TYPE_CHECKING:
    from .backend import Backend, Tx

HEARTBEAT_S = 10.0  # how often a working process says it is alive
STALE_S = 60.0  # a heartbeat older than this is a dead holder's (six missed beats)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _age_s(stamp: str) -> float:
    try:
        return (_now() - datetime.fromisoformat(stamp)).total_seconds()
    except ValueError:
        return float("inf")


def alive(pid: int | None, hostname: str | None, heartbeat: str | None) -> bool:
    """Whether the holder (``pid`` on ``hostname``, last heard of at ``heartbeat``) still works."""
    if not pid:
        return False
    fresh = heartbeat is not None and _age_s(heartbeat) < STALE_S
    if hostname != os.uname().nodename:
        return fresh or heartbeat is None  # no heartbeat: a store from before heartbeats; assume so
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    return heartbeat is None or fresh  # a stale heartbeat with a live pid: the pid was reused


class RunLock:
    """The store's run lock (a mixin of ``Store``: it uses its connection and transactions)."""

    backend: Backend

    def _tx(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def lock_run(self, run_id: str) -> None:
        """Take ``run_id`` for this process; refused while a live process holds it."""
        me, host, now = os.getpid(), os.uname().nodename, _now().isoformat(timespec="seconds")
        with self._tx() as tx:
            rows = tx.rows(f"SELECT pid, hostname, heartbeat FROM runs WHERE id = ?{self.backend.for_update}",
                           (run_id,))
            row = rows[0] if rows else None
            if row is not None and alive(row["pid"], row["hostname"], row["heartbeat"]) \
                    and (row["pid"], row["hostname"]) != (me, host):
                seen = f", last heard of {_age_s(row['heartbeat']):.0f} s ago" if row["heartbeat"] else ""
                raise StoreError(f"run {run_id} is being worked on by process {row['pid']} on {row['hostname']}"
                                 f"{seen}", hint="wait for it to finish; a holder that is gone is noticed within "
                                                 f"{STALE_S:.0f} s")
            tx.execute("UPDATE runs SET pid = ?, hostname = ?, heartbeat = ?, status = 'running', finished = NULL"
                       " WHERE id = ?", (me, host, now, run_id))

    def renew_lock(self, run_id: str) -> bool:
        """The heartbeat of a run this process holds; False when it holds it no more."""
        with self._tx() as tx:
            held = tx.rows("UPDATE runs SET heartbeat = ? WHERE id = ? AND pid = ? AND hostname = ? RETURNING id",
                           (_now().isoformat(timespec="seconds"), run_id, os.getpid(), os.uname().nodename))
        return len(held) == 1


class Renews(Protocol):
    """What keeps a run's lock alive: the store (or a recorder without one, which has no lock)."""

    def renew_lock(self, run_id: str) -> bool: ...


class _Renewer(threading.Thread):
    def __init__(self, renew: Renews, run_id: str, every_s: float) -> None:
        super().__init__(name=f"heartbeat {run_id}", daemon=True)
        self.renew, self.run_id, self.every_s = renew, run_id, every_s
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(self.every_s):
            try:
                self.renew.renew_lock(self.run_id)
            except StoreError:
                continue  # a full disk for a moment; the next beat may get through


@contextmanager
def heartbeat(recorder: Renews, run_id: str, every_s: float = HEARTBEAT_S) -> Iterator[None]:
    """Renew ``run_id``'s lock every ``every_s`` seconds while the block runs."""
    beat = _Renewer(recorder, run_id, every_s)
    beat.start()
    try:
        yield
    finally:
        beat.stop.set()
        beat.join()
