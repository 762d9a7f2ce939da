"""The runs diskbench started on OpenStack, written before anything is created (JSON lines).

The cloud itself is the main memory (names, tags, metadata); the journal adds which cloud a run
went to, so ``cleanup`` knows where to look, and which runs never finished their teardown. A
machine given back while its run went on has a ``released`` entry (its machine and the ids deleted),
written once the cloud confirmed them gone; its run stays open until the teardown's ``deleted``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import lifecycle


class Journal(lifecycle.Journal):
    def __init__(self, path: Path) -> None:
        super().__init__(path, "openstack")

    def open_runs(self) -> dict[str, dict[str, Any]]:
        """Runs that were (being) created and whose teardown has not finished: run id -> first entry."""
        return self.still_open("creating", "deleted", "run")
