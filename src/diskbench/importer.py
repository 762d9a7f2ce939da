"""Bring engine output that someone ran by hand into the store, like a run.

The engine is recognized from the file itself (each engine says whether a text looks like its
output); a file no engine recognizes gets the default engine's own explanation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import registry
from .errors import DiskbenchError
from .model import GroupResult
from .store import Store, StoredResult, now_iso
from .store.raw import keep_copy

IMPORT_TARGET = "imported"


@dataclass
class Imported:
    run: dict[str, Any]
    results: list[StoredResult]
    errors: list[str]


def _read(path: Path) -> str:
    """The file as text: UTF-8, or UTF-16 with a byte-order mark (what PowerShell's ``>`` writes)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DiskbenchError(f"{path}: cannot read: {exc.strerror}") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def _rows(run_id: str, groups: list[GroupResult], host: str) -> list[StoredResult]:
    return [
        StoredResult(run_id=run_id, job_key=g.name, workload=g.name, target=IMPORT_TARGET,
                     host=",".join(g.hosts) or host, engine=g.engine,
                     engine_version=g.engine_version, jobs=g.jobs, result=d, errors=g.errors,
                     notes=g.notes)
        for g in groups for d in g.directions
    ]


def engine_for(text: str) -> str:
    """The engine whose output ``text`` looks like (the default engine when none claims it)."""
    for name in registry.engines.names():
        if registry.engines.get(name).sniff(text):
            return name
    return registry.default_engine()


def import_file(path: Path, *, store: Store | None, per_job: bool = False) -> Imported:
    text = _read(path)
    parsed = registry.engines.get(engine_for(text)).parse(text, source=str(path), per_job=per_job)
    groups = parsed.groups
    facts = {**parsed.facts, "source_file": str(path.resolve())}
    errors = [e for g in groups for e in g.errors]
    status = "partial" if errors else "completed"
    profile = f"import:{path.name}"
    if store is None:
        run = {"id": "-", "profile": profile, "origin": "import", "started": now_iso(),
               "finished": now_iso(), "status": status, "facts": facts, "options": {}}
        return Imported(run, _rows("-", groups, "imported"), errors)
    run_id = store.create_run(profile=profile, profile_path=str(path.resolve()), profile_text=None,
                              options={"per_job": per_job}, origin="import", facts=facts)
    keep_copy(path, store.run_artifacts(run_id))  # gzip'd, to re-parse later
    store.add_jobs(run_id, [{"key": g.name, "workload": g.name, "target": IMPORT_TARGET,
                             "host": ",".join(g.hosts) or "imported"} for g in groups])
    for g in groups:
        store.add_results(run_id, g.name, g, workload=g.name, target=IMPORT_TARGET,
                          host=",".join(g.hosts) or "imported")
        store.update_job(run_id, g.name, status="failed" if g.errors else "done",
                         finished=now_iso(), message="; ".join(g.errors) or None)
    store.finish_run(run_id, status)
    return Imported(store.get_run(run_id), store.get_results(run_id), errors)
