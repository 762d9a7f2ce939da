"""Deleting runs from the store: by id, or failed and old ones, with their artifacts.

Failed attempts pile up (artifacts included); a store nobody can tidy ends up deleted whole,
baselines and all. So: a run that is still running is never touched; a completed run the gate
may compare against (accepted, with a testbed) stays unless ``force``; everything else goes
with its artifacts folder, and ``dry_run`` says what would go first.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from .store import Store

FAILED = ("failed", "partial", "interrupted")


@dataclass
class Decision:
    run: dict[str, Any]
    delete: bool
    why: str
    bytes: int = 0


def _size(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _is_baseline(store: Store, run: dict[str, Any]) -> bool:
    return (run["status"] == "completed" and run.get("accepted") != 0
            and any(j.get("testbed") for j in store.get_jobs(run["id"])))


def decide(store: Store, run: dict[str, Any], force: bool) -> Decision:
    folder = store.artifacts_root / run["id"]
    if run["status"] == "running":
        return Decision(run, False, f"still running (pid {run.get('pid')} on {run.get('hostname')})")
    if not force and _is_baseline(store, run):
        return Decision(run, False, "a gate baseline (--force deletes it)")
    return Decision(run, True, run["status"], _size(folder))


def select(store: Store, *, failed: bool, older_than_s: float | None, force: bool,
           now: datetime | None = None) -> list[Decision]:
    """Runs that match every filter given (failed, started before the cutoff), oldest first."""
    now = now or datetime.now(timezone.utc)
    cutoff = now - timedelta(seconds=older_than_s) if older_than_s is not None else None
    out = []
    for run in reversed(store.list_runs()):
        if failed and run["status"] not in FAILED:
            continue
        if cutoff is not None and datetime.fromisoformat(run["started"]) > cutoff:
            continue
        out.append(decide(store, run, force))
    return out


def apply(store: Store, decisions: list[Decision]) -> None:
    for d in decisions:
        if d.delete:
            store.delete_run(d.run["id"])
            shutil.rmtree(store.artifacts_root / d.run["id"], ignore_errors=True)
