"""The runs diskbench started on OpenStack, written before anything is created (JSON lines).

The cloud itself is the main memory (names, tags, metadata); the journal adds which cloud a run
went to, so ``cleanup`` knows where to look, and which runs never finished their teardown.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, event: str, **fields: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), "event": event,
                 "provider": "openstack", **fields}
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
            fh.flush()

    def open_runs(self) -> dict[str, dict[str, Any]]:
        """Runs that were (being) created and whose teardown has not finished: run id -> first entry."""
        out: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return out
        for text in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(text)
            except ValueError:
                continue
            if entry.get("provider") != "openstack":
                continue
            if entry.get("event") == "creating":
                out.setdefault(entry["run"], entry)
            elif entry.get("event") == "deleted":
                out.pop(entry["run"], None)
        return out
