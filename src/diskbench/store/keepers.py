"""Where a store keeps raw outputs so that every reader reaches them, not only the runner's disk.

The runner writes a unit's files (job file, engine output, logs) into a local folder while the
unit runs (``Store.run_artifacts``). A SQLite store's folder is beside its file, and that is
where they stay (readers of the file reach the folder). A shared store copies them, once the
unit's results are committed, to a keeper that every reader reaches:

- ``InDatabase``: in the store's ``artifacts`` table (the default of a PostgreSQL store);
- ``Folder``: a folder (a file share every machine mounts; ``DISKBENCH_ARTIFACTS=/path``);
- a cloud's object store, through a store add-on (``addon.py``, asked in ``addons.py``): the Azure
  provider's keeps them in a Blob container (``DISKBENCH_ARTIFACTS=https://ACCOUNT.blob.core.windows.net/CONTAINER[/PREFIX]``).

Every kept file has a row in ``artifacts`` (its name in the run, size, time, and where it is:
its bytes in the row, or the location of its copy), so a reader needs the store alone to find a
run's raw outputs, whatever keeper the runner used. Text files are gzip'd on the way (an engine
output that is gzip'd already goes as it is); readers get the original bytes back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class Keeper(Protocol):
    where: str  # for messages

    def put(self, run_id: str, name: str, data: bytes) -> str | None:
        """Keep ``data`` as ``name`` of ``run_id``; its location, or None when the bytes go in
        the store's row."""

    def get(self, location: str) -> bytes: ...

    def delete(self, location: str) -> None: ...


class InDatabase:
    """The bytes in the ``artifacts`` row itself: nothing else to set up, nothing else to reach."""

    where = "the database"

    def put(self, run_id: str, name: str, data: bytes) -> str | None:
        return None

    def get(self, location: str) -> bytes:
        raise AssertionError("bytes kept in the database are read with their row")

    def delete(self, location: str) -> None:
        """The row goes with the run (ON DELETE CASCADE)."""


class Folder:
    """A folder every reader mounts: ``ROOT/RUN_ID/NAME``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.where = str(root)

    def put(self, run_id: str, name: str, data: bytes) -> str | None:
        path = self.root / run_id / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".part")
        tmp.write_bytes(data)
        tmp.replace(path)
        return str(path)

    def get(self, location: str) -> bytes:
        return Path(location).read_bytes()

    def delete(self, location: str) -> None:
        Path(location).unlink(missing_ok=True)
