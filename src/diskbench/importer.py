"""Bring engine output that someone ran by hand into the store, like a run.

The engine is recognized from the file itself (each engine says whether a text looks like its
output); a file no engine recognizes gets the default engine's own explanation.

What is read is bounded before anything is parsed: a binary file (NUL bytes, or mostly not text,
in its first 64 KiB) is refused at once, whatever its size, and no file larger than
``WHOLE_LIMIT`` is read whole. fio's big ``--status-interval`` files are read from their end by
the fio engine (only the last document is the result), so they have no such limit. Text may be
UTF-8 or UTF-16 (PowerShell's ``>`` writes UTF-16 with a byte-order mark; without one, UTF-16
is recognized by its zero bytes).

An import is ``partial`` when any group has errors: a failed job, or a run the engine did not
finish (fio stopped by a signal, or a ``time_based`` fio job far short of its runtime). Its
figures are kept, as the engine printed them, and each error is a warning on stderr: they are
real measurements, of less than the run that was asked for, so they are neither dropped nor
passed off as a ``completed`` run (which compare and gate would take as one).
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import registry
from .errors import DiskbenchError, ParseError
from .model import GroupResult
from .store import Store, StoredResult, new_run_id, now_iso
from .store.raw import keep_copy

IMPORT_TARGET = "imported"
SNIFF_BYTES = 256 << 10  # enough of a file for an engine to recognize its output
BINARY_CHECK_BYTES = 64 << 10
# The largest file read (and decoded, and parsed) whole. Engine outputs are far smaller: a json+
# entry is 25-60 KB, so 1,000 ungrouped fio jobs make ~60 MB; DiskSpd's -D -L XML is ~250 bytes
# per second per thread and target, ~60 MB for 64 threads over an hour. Parsing holds about 9
# times the file in memory (measured: a 32 MiB DiskSpd XML, 291 MB peak RSS), so 128 MiB keeps
# an import near a gigabyte.
WHOLE_LIMIT = 128 << 20
# Text output of fio and DiskSpd is almost all ASCII (JSON keys, XML tags, tables); a file whose
# head is less than half ASCII text is not one (random bytes are ~39% ASCII text).
MIN_TEXT_SHARE = 0.5
_TEXT_BYTES = bytes(range(0x20, 0x7F)) + b"\t\n\r\f\v\x1b"


@dataclass
class Imported:
    run: dict[str, Any]
    results: list[StoredResult]
    errors: list[str]


def decode(data: bytes) -> str:
    """Text of an engine's output: UTF-8 (a BOM is dropped), or UTF-16 with a BOM or, without
    one, recognized by the zero byte of each ASCII character."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    if len(data) >= 4 and data[1:4:2] == b"\x00\x00" and data[0:3:2].count(0) == 0:
        return data.decode("utf-16-le", errors="replace")
    if len(data) >= 4 and data[0:4:2] == b"\x00\x00" and data[1:4:2].count(0) == 0:
        return data.decode("utf-16-be", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def binary_reason(head: bytes) -> str | None:
    """Why ``head`` (a file's first bytes) is not text, or None when it is."""
    text = decode(head[:BINARY_CHECK_BYTES])
    if "\x00" in text:
        return "it holds NUL bytes"
    ascii_part = text.encode("ascii", errors="ignore")
    text_chars = len(ascii_part) - len(ascii_part.translate(None, _TEXT_BYTES))
    if text and text_chars < MIN_TEXT_SHARE * len(text):
        return "it is mostly not text"
    return None


def _open_error(path: Path, exc: OSError) -> DiskbenchError:
    return DiskbenchError(f"{path}: cannot read: {exc.strerror}")


def _read(path: Path) -> str:
    """The whole file as text (see ``decode``), if it is no larger than ``WHOLE_LIMIT``."""
    try:
        size = path.stat().st_size
        if size > WHOLE_LIMIT:
            raise ParseError(f"{path} is {size / 2**20:,.0f} MiB, more than the {WHOLE_LIMIT >> 20} MiB "
                             "diskbench reads of a file whole (only a fio --status-interval file, whose "
                             "result is the last document at its end, may be bigger)")
        data = path.read_bytes()
    except OSError as exc:
        raise _open_error(path, exc) from None
    return decode(data)


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


def _head(path: Path) -> tuple[bytes, int]:
    """The file's first ``SNIFF_BYTES`` and its size; a binary file is an error here, before
    anything reads more of it."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
            size = os.fstat(fh.fileno()).st_size
    except OSError as exc:
        raise _open_error(path, exc) from None
    why = binary_reason(head)
    if why is not None:
        raise ParseError(f"{path} is a binary file, not fio or DiskSpd output ({why})")
    return head, size


def _copy_beside(path: Path, store: Store, run_id: str) -> Future[Path]:
    """The gzip'd copy of ``path`` kept with the run, made on another core."""
    pool = ThreadPoolExecutor(1)
    copying = pool.submit(keep_copy, path, store.run_artifacts(run_id))
    pool.shutdown(wait=False)  # its one thread ends with the copy
    return copying


def import_file(path: Path, *, store: Store | None, per_job: bool = False) -> Imported:
    run_id = new_run_id()
    head, size = _head(path)
    # A file read whole is copied while it is parsed; a bigger one (which only an engine that
    # reads its end can take) is copied once it parsed, so a refusal does not wait for the copy.
    copying = _copy_beside(path, store, run_id) if store is not None and size <= WHOLE_LIMIT else None
    try:
        # The engine reads the file itself: a big status-interval file need not be held whole.
        parsed = registry.engines.get(engine_for(decode(head))).parse_file(path, _read, per_job=per_job)
    except BaseException:
        if copying is not None and store is not None:
            copying.result()
            shutil.rmtree(store.run_artifacts(run_id), ignore_errors=True)
        raise
    if copying is None and store is not None:
        copying = _copy_beside(path, store, run_id)
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
