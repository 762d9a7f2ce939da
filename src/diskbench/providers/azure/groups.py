"""One resource group per run: tagged, journaled before it exists, deleted at the end.

The journal (a JSON-lines file beside the store) is written before anything is created, so no
resource group can exist that diskbench does not know about; ``cleanup`` reads the journal and
the tags to find what is left.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from ...errors import DiskbenchError
from .. import lifecycle
from ..lifecycle import DEFAULT_LIFETIME, MARKER, when
from .session import AzureSession

__all__ = ["DEFAULT_LIFETIME", "MARKER", "Journal", "Leftover", "create_group", "delete_group", "find_leftovers",
           "group_name", "tags"]


def group_name(run_id: str) -> str:
    return f"diskbench-{run_id}"


def tags(run_id: str, *, lifetime: timedelta = DEFAULT_LIFETIME, now: datetime | None = None) -> dict[str, str]:
    return lifecycle.labels(run_id, lifetime=lifetime, now=now)


class Journal(lifecycle.Journal):
    def __init__(self, path: Path) -> None:
        super().__init__(path, "azure", owns_unnamed=True)

    def open_groups(self) -> dict[str, dict[str, Any]]:
        """Groups the journal says were (being) created and not yet deleted."""
        return self.still_open("creating-group", "deleted-group", "group")


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
        created, expires = when(t.get("diskbench-created")), when(t.get("diskbench-expires"))
        run = t.get("diskbench-run")
        if run_id is not None:
            if run == run_id:
                found[group.name] = Leftover(group.name, run, expires, created, f"run {run_id}")
            continue
        reason = lifecycle.stale(created, expires, now, older_than)
        if reason is not None:
            found[group.name] = Leftover(group.name, run, expires, created, reason)
    for name, entry in journal.open_groups().items():
        if entry.get("subscription") not in (None, session.subscription_id) or name in found:
            continue
        if run_id is None or entry.get("run") == run_id:
            try:
                session.resources.resource_groups.get(name)
            except ResourceNotFoundError:
                journal.write("deleted-group", group=name)  # gone already: close the entry
                continue
            found[name] = Leftover(name, entry.get("run"), None, when(entry.get("time")), "in the journal")
    return list(found.values())
