"""Bring engine output that someone ran by hand into the store, like a run.

The engine is recognized from the file itself (each engine says whether a text looks like its
output); a file no engine recognizes gets the default engine's own explanation.
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import registry
from .errors import DiskbenchError
from .model import GroupResult
from .store import Store, StoredResult, new_run_id, now_iso
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
    default = registry.default_engine()  # asked first: the others need not even be imported
    for name in sorted(registry.engines.names(), key=lambda n: n != default):
        if registry.engines.get(name).sniff(text):
            return name
    return registry.default_engine()


def _head(path: Path) -> str:
    """The first 256 KiB, decoded like ``_read``: enough for an engine to recognize its output."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(256 << 10)
    except OSError as exc:
        raise DiskbenchError(f"{path}: cannot read: {exc.strerror}") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def import_file(path: Path, *, store: Store | None, per_job: bool = False) -> Imported:
    run_id = new_run_id()
    copying = None
    if store is not None:  # the gzip'd copy is made on another core while the file is parsed
        pool = ThreadPoolExecutor(1)
        copying = pool.submit(keep_copy, path, store.run_artifacts(run_id))
        pool.shutdown(wait=False)  # its one thread ends with the copy
    try:
        # The engine reads the file itself: a big status-interval file need not be held whole.
        parsed = registry.engines.get(engine_for(_head(path))).parse_file(path, _read, per_job=per_job)
    except BaseException:
        if copying is not None and store is not None:
            copying.result()
            shutil.rmtree(store.run_artifacts(run_id), ignore_errors=True)
        raise
    groups = parsed.groups
    facts = {**parsed.facts, "source_file": str(path.resolve())}
    errors = [e for g in groups for e in g.errors]
    status = "partial" if errors else "completed"
    profile = f"import:{path.name}"
    if store is None:
        run = {"id": "-", "profile": profile, "origin": "import", "started": now_iso(),
               "finished": now_iso(), "status": status, "facts": facts, "options": {}}
        return Imported(run, _rows("-", groups, "imported"), errors)
    store.create_run(profile=profile, profile_path=str(path.resolve()), profile_text=None,
                     options={"per_job": per_job}, origin="import", facts=facts, run_id=run_id)
    store.add_jobs(run_id, [{"key": g.name, "workload": g.name, "target": IMPORT_TARGET,
                             "host": ",".join(g.hosts) or "imported", "params": g.declared} for g in groups])
    for g in groups:
        store.add_results(run_id, g.name, g, workload=g.name, target=IMPORT_TARGET,
                          host=",".join(g.hosts) or "imported")
        # a group with results is done even when one of its fio jobs failed (the run stays partial)
        store.update_job(run_id, g.name, status="done" if g.directions else "failed",
                         finished=now_iso(), message="; ".join(g.errors) or None)
    assert copying is not None
    copying.result()  # kept (gzip'd) before the run counts as finished, to re-parse later
    store.finish_run(run_id, status)
    return Imported(store.get_run(run_id), store.get_results(run_id), errors)
