"""A run's raw outputs: written locally while it runs, kept where every reader reaches them.

The store's half of ``keepers``: which files of a run's local folder are new or changed since
they were last kept (size and mtime), keeping them (the upload happens outside any transaction;
one transaction then records them), and reading them back by name, whichever keeper holds them.
A SQLite store without ``DISKBENCH_ARTIFACTS`` keeps them in the folder beside its file, as it
always has: nothing is copied and reading is reading that folder.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from .addons import reader_for
from .backend import Backend, Tx
from .keepers import Keeper

PACK_LEVEL = 1  # raw.py's: fast, and json+ still shrinks about tenfold
_UPSERT = ("INSERT INTO artifacts (run_id, name, size, mtime_ns, packed, location, data) VALUES (?,?,?,?,?,?,?)"
           " ON CONFLICT (run_id, name) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,"
           " packed = excluded.packed, location = excluded.location, data = excluded.data")


def _files(folder: Path) -> Iterator[Path]:
    for dirpath, _, names in os.walk(folder):
        for name in sorted(names):
            if not name.endswith(".part"):
                yield Path(dirpath) / name


class ArtifactKeeping:
    """The store's raw outputs (a mixin of ``Store``)."""

    backend: Backend
    artifacts_root: Path
    keeper: Keeper | None
    _container: Any  # an object store client tests hand in

    def _tx(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def keep_artifacts(self, run_id: str, folder: Path | None = None) -> int:
        """Keep the files of ``folder`` (a unit's, or by default the whole run's local folder)
        where every reader of the store reaches them; how many were new or changed. Called when a
        unit's results are committed and when the run finishes; a file kept before and unchanged
        is not sent again."""
        if self.keeper is None:
            return 0
        root = self.artifacts_root / run_id
        folder = folder or root
        if not folder.is_dir():
            return 0
        known = {r["name"]: (r["size"], r["mtime_ns"]) for r in self.backend.rows(
            "SELECT name, size, mtime_ns FROM artifacts WHERE run_id = ?", (run_id,))}
        rows = []
        for path in _files(folder):
            stat = path.stat()
            name = path.relative_to(root).as_posix()
            if known.get(name) == (stat.st_size, stat.st_mtime_ns):
                continue
            data = path.read_bytes()
            packed = not name.endswith(".gz")
            body = gzip.compress(data, compresslevel=PACK_LEVEL, mtime=0) if packed else data
            location = self.keeper.put(run_id, name, body)
            rows.append((run_id, name, stat.st_size, stat.st_mtime_ns, int(packed), location,
                         body if location is None else None))
        if rows:
            with self._tx() as tx:
                tx.many(_UPSERT, rows)
        return len(rows)

    def _local(self, run_id: str) -> dict[str, Path]:
        root = self.artifacts_root / run_id
        return {p.relative_to(root).as_posix(): p for p in _files(root)} if root.is_dir() else {}

    def artifact_names(self, run_id: str) -> list[str]:
        """The names of a run's raw outputs (``NN-unit/output.json.gz``, ...), sorted: those kept
        for every reader, and those in this machine's folder of the run."""
        kept = {r["name"] for r in self.backend.rows("SELECT name FROM artifacts WHERE run_id = ?", (run_id,))}
        return sorted(kept | set(self._local(run_id)))

    def artifact_counts(self, run_ids: list[str]) -> dict[str, int]:
        """How many raw outputs each run has (``artifact_names``), with one query for all runs."""
        kept: dict[str, set[str]] = {}
        for r in self.backend.rows("SELECT run_id, name FROM artifacts"):
            kept.setdefault(r["run_id"], set()).add(r["name"])
        return {rid: len(kept.get(rid, set()) | set(self._local(rid))) for rid in run_ids}

    def read_artifact(self, run_id: str, name: str) -> bytes:
        """One raw output, as the runner wrote it: from this machine's folder of the run when it is
        there, else from where it was kept."""
        local = self.artifacts_root / run_id / name
        if local.is_file():
            return local.read_bytes()
        rows = self.backend.rows("SELECT packed, location, data FROM artifacts WHERE run_id = ? AND name = ?",
                                 (run_id, name))
        if not rows:
            raise FileNotFoundError(2, "no such raw output", f"{run_id}/{name}")
        row = rows[0]
        body = bytes(row["data"]) if row["location"] is None else self._reader(row["location"]).get(row["location"])
        return gzip.decompress(body) if row["packed"] else body

    def fetch_artifacts(self, run_id: str, dest: Path) -> list[Path]:
        """Write a run's kept raw outputs into ``dest`` (``dest/NN-unit/...``); the files written."""
        out = []
        for name in self.artifact_names(run_id):
            path = dest / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(self.read_artifact(run_id, name))
            out.append(path)
        return out

    def _reader(self, location: str) -> Keeper:
        return reader_for(location, self.keeper, self._container)

    def _forget_artifacts(self, run_id: str) -> None:
        """Delete the copies a keeper holds outside the database (the rows go with the run)."""
        for row in self.backend.rows("SELECT location FROM artifacts WHERE run_id = ? AND location IS NOT NULL",
                                     (run_id,)):
            self._reader(row["location"]).delete(row["location"])

    def add_artifact(self, run_id: str, name: str, data: bytes) -> None:
        """Keep ``data`` as the raw output ``name`` of ``run_id`` (``store copy`` brings a run's
        files this way): into the folder beside a SQLite store, else to the keeper."""
        if self.keeper is None:
            path = self.artifacts_root / run_id / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            return
        packed = not name.endswith(".gz")
        body = gzip.compress(data, compresslevel=PACK_LEVEL, mtime=0) if packed else data
        location = self.keeper.put(run_id, name, body)
        with self._tx() as tx:
            tx.execute(_UPSERT, (run_id, name, len(data), 0, int(packed), location, body if location is None else None))
