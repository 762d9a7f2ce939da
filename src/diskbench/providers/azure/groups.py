"""One resource group per run: tagged, journaled before it exists, deleted at the end.

The journal (a JSON-lines file beside the store) is written before anything is created, so no
resource group can exist that diskbench does not know about; ``cleanup`` reads the journal and
the tags to find what is left.
"""

from __future__ import annotations

import getpass
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from ... import __version__
from ...errors import DiskbenchError
from .session import AzureSession

MARKER = "diskbench"
DEFAULT_LIFETIME = timedelta(hours=6)


def group_name(run_id: str) -> str:
    return f"diskbench-{run_id}"


def tags(run_id: str, *, lifetime: timedelta = DEFAULT_LIFETIME, now: datetime | None = None) -> dict[str, str]:
    now = now or datetime.now(timezone.utc)
    return {MARKER: "true", "diskbench-run": run_id, "diskbench-created": now.isoformat(timespec="seconds"),
            "diskbench-expires": (now + lifetime).isoformat(timespec="seconds"),
            "diskbench-owner": getpass.getuser(), "diskbench-version": __version__}


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, event: str, **fields: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), "event": event, **fields}
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
            fh.flush()

    def open_groups(self) -> dict[str, dict[str, Any]]:
        """Groups the journal says were (being) created and not yet deleted."""
        out: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return out
        for line in self.path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") == "creating-group":
                out[entry["group"]] = entry
            elif entry.get("event") == "deleted-group":
                out.pop(entry["group"], None)
        return out


def create_group(session: AzureSession, journal: Journal, run_id: str, region: str,
                 lifetime: timedelta = DEFAULT_LIFETIME) -> str:
    name = group_name(run_id)
    journal.write("creating-group", group=name, run=run_id, region=region, subscription=session.subscription_id)
    body = {"location": region, "tags": tags(run_id, lifetime=lifetime)}
    session.resources.resource_groups.create_or_update(name, body)
    return name


def delete_group(session: AzureSession, journal: Journal, name: str) -> None:
    try:
        session.resources.resource_groups.begin_delete(name).result()
    except ResourceNotFoundError:
        pass
    except HttpResponseError as exc:
        raise DiskbenchError(f"deleting resource group {name} failed: {exc.message}",
                             hint=f"delete it with `az group delete -n {name}`") from None
    journal.write("deleted-group", group=name)


@dataclass
class Leftover:
    name: str
    run: str | None
    expires: datetime | None
    created: datetime | None
    reason: str


def find_leftovers(session: AzureSession, journal: Journal, *, older_than: timedelta | None = None,
                   run_id: str | None = None, now: datetime | None = None) -> list[Leftover]:
    """diskbench's groups past their expiry (or older than ``older_than``), or listed in the journal."""
    now = now or datetime.now(timezone.utc)
    found: dict[str, Leftover] = {}
    for group in session.resources.resource_groups.list(filter=f"tagName eq '{MARKER}' and tagValue eq 'true'"):
        t = group.tags or {}
        created, expires = _when(t.get("diskbench-created")), _when(t.get("diskbench-expires"))
        run = t.get("diskbench-run")
        if run_id is not None:
            if run == run_id:
                found[group.name] = Leftover(group.name, run, expires, created, f"run {run_id}")
            continue
        if older_than is not None and created is not None and now - created >= older_than:
            found[group.name] = Leftover(group.name, run, expires, created, f"older than {older_than}")
        elif expires is not None and expires <= now:
            found[group.name] = Leftover(group.name, run, expires, created, "expired")
    for name, entry in journal.open_groups().items():
        if entry.get("subscription") not in (None, session.subscription_id) or name in found:
            continue
        if run_id is None or entry.get("run") == run_id:
            try:
                session.resources.resource_groups.get(name)
            except ResourceNotFoundError:
                journal.write("deleted-group", group=name)  # gone already: close the entry
                continue
            found[name] = Leftover(name, entry.get("run"), None, _when(entry.get("time")), "in the journal")
    return list(found.values())


def _when(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None
