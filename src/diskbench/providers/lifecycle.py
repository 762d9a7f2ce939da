"""What every cloud provider does with what it creates: label it, journal it first, find it again.

A run's resources carry the same labels in every cloud (Azure tags, Nova and Cinder metadata):
the marker, the run, when it was created, when it expires and who made it. A JSON-lines journal
beside the store is written *before* anything is created, so no resource can exist that
diskbench does not know about, and ``cleanup`` finds what a crash left from the labels, the
journal, or both.
"""

from __future__ import annotations

import getpass
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..version import __version__

MARKER = "diskbench"
DEFAULT_LIFETIME = timedelta(hours=6)
OWNER_MAX = 64  # Nova and Cinder metadata values take 255 characters; a user name needs far fewer


def labels(run_id: str, *, lifetime: timedelta = DEFAULT_LIFETIME, now: datetime | None = None) -> dict[str, str]:
    """The labels of every resource of a run: ``cleanup`` needs nothing else to find and judge it."""
    now = now or datetime.now(timezone.utc)
    return {MARKER: "true", "diskbench-run": run_id, "diskbench-created": now.isoformat(timespec="seconds"),
            "diskbench-expires": (now + lifetime).isoformat(timespec="seconds"),
            "diskbench-owner": getpass.getuser()[:OWNER_MAX], "diskbench-version": __version__}


def when(text: str | None) -> datetime | None:
    """A label's time, or None when it is missing or not a time (labels can be edited by hand)."""
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def stale(created: datetime | None, expires: datetime | None, now: datetime,
          older_than: timedelta | None = None) -> str | None:
    """Why ``cleanup`` would delete a run's resources without being named the run: past its
    expiry, or older than the age the user gave; None when neither."""
    if expires is not None and expires <= now:
        return "expired"
    if older_than is not None and created is not None and now - created >= older_than:
        return f"older than {older_than}"
    return None


class Journal:
    """The journal of one provider's runs (several providers may share the file)."""

    def __init__(self, path: Path, provider: str, *, owns_unnamed: bool = False) -> None:
        self.path = path
        self.provider = provider
        self.owns_unnamed = owns_unnamed  # entries written before the file was shared carry no provider

    def write(self, event: str, **fields: Any) -> None:
        """One line, flushed before the cloud is asked for anything."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), "event": event,
                 "provider": self.provider, **fields}
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
            fh.flush()

    def still_open(self, opened: str, closed: str, key: str) -> dict[str, dict[str, Any]]:
        """What an ``opened`` entry started and no ``closed`` entry ended: ``key`` -> first entry.

        Entries without a provider belong to the journal that ``owns_unnamed`` (the first provider
        to journal, before the file was shared).
        """
        out: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return out
        for text in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(text)
            except ValueError:
                continue  # a line cut short by a crash: the ones around it still count
            if not isinstance(entry, dict) or key not in entry or \
                    entry.get("provider", self.provider if self.owns_unnamed else None) != self.provider:
                continue
            if entry.get("event") == opened:
                out.setdefault(entry[key], entry)
            elif entry.get("event") == closed:
                out.pop(entry[key], None)
        return out
