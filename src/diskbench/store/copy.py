"""``diskbench store copy SRC DST``: a whole history from one store to another, counts checked.

Either way between SQLite and PostgreSQL (or between two of a kind): every run with its jobs,
results (histograms included), journal entries and kept raw outputs, each run in one
transaction of DST, in the order SRC has them, so that every report reads the same in DST. A run
DST has already is left as it is (a copy that stopped part way is simply run again); a run that
is still running is left out (copy it once it has finished). Result and journal ids are DST's
own; nothing diskbench shows depends on them. Afterwards the rows and raw outputs of every run
are counted on both sides: any difference is an error naming the runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .lock import alive

if TYPE_CHECKING:
    from .store import Store

TABLES = ("jobs", "results", "prepared", "segments")  # besides runs; each row belongs to one run (run_id)
_ORDER = {"jobs": "seq", "results": "id", "prepared": "id", "segments": "job_key, number"}
_OWN_ID = {"results", "prepared"}  # ids DST gives anew


@dataclass
class CopyOutcome:
    copied: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)  # already in DST, the same counts
    running: list[str] = field(default_factory=list)  # left out: still running
    counts: dict[str, int] = field(default_factory=dict)  # what was copied: table -> rows


def _counts(store: Store, table: str) -> dict[str, int]:
    return {r["run_id"]: int(r["n"]) for r in store.backend.rows(
        f"SELECT run_id, COUNT(*) AS n FROM {table} GROUP BY run_id")}


def _copy_run(src: Store, dst: Store, run: dict[str, Any], outcome: CopyOutcome) -> None:
    rid = run["id"]
    rows = {t: [dict(r) for r in src.backend.rows(f"SELECT * FROM {t} WHERE run_id = ? ORDER BY {_ORDER[t]}",
                                                      (rid,))] for t in TABLES}
    with dst._tx() as tx:
        cols = list(run)
        tx.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                   [run[c] for c in cols])
        for table in TABLES:
            if not rows[table]:
                continue
            cols = [c for c in rows[table][0] if not (table in _OWN_ID and c == "id")]
            tx.many(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                    [[_plain(r[c]) for c in cols] for r in rows[table]])
            outcome.counts[table] = outcome.counts.get(table, 0) + len(rows[table])
    for name in src.artifact_names(rid):  # after the rows: DST's artifacts table refers to the run
        dst.add_artifact(rid, name, src.read_artifact(rid, name))
        outcome.counts["raw outputs"] = outcome.counts.get("raw outputs", 0) + 1


def _plain(value: Any) -> Any:
    return bytes(value) if isinstance(value, memoryview) else value


def copy_store(src: Store, dst: Store, *, line: Callable[[str], None] | None = None) -> CopyOutcome:
    """Copy every run of ``src`` that ``dst`` lacks; raises ``StoreError`` when the counts of
    any run differ afterwards."""
    if src.location == dst.location:
        raise StoreError(f"{src.location} is both the source and the destination", hint="name two stores")
    outcome = CopyOutcome()
    there = {r["id"] for r in dst.backend.rows("SELECT id FROM runs")}
    runs = [dict(r) for r in src.backend.rows("SELECT * FROM runs ORDER BY started, id")]
    for n, run in enumerate(runs, 1):
        if run["id"] in there:
            outcome.present.append(run["id"])
        elif run["status"] == "running" and alive(run.get("pid"), run.get("hostname"), run.get("heartbeat")):
            outcome.running.append(run["id"])
        else:
            _copy_run(src, dst, run, outcome)
            outcome.copied.append(run["id"])
        if line is not None and n % 500 == 0:
            line(f"{n} of {len(runs)} runs")
    check(src, dst, outcome.copied + outcome.present)
    return outcome


def check(src: Store, dst: Store, run_ids: list[str]) -> None:
    """The same rows and raw outputs per run on both sides, or a ``StoreError`` naming the runs."""
    differ: dict[str, list[str]] = {}
    for table in TABLES:
        a, b = _counts(src, table), _counts(dst, table)
        for rid in run_ids:
            if a.get(rid, 0) != b.get(rid, 0):
                differ.setdefault(rid, []).append(f"{table} {a.get(rid, 0)} vs {b.get(rid, 0)}")
    a, b = src.artifact_counts(run_ids), dst.artifact_counts(run_ids)
    for rid in run_ids:
        if a[rid] != b[rid]:
            differ.setdefault(rid, []).append(f"raw outputs {a[rid]} vs {b[rid]}")
    if differ:
        some = "; ".join(f"{rid}: {', '.join(what)}" for rid, what in list(differ.items())[:5])
        raise StoreError(f"{len(differ)} run(s) differ between {src.location} and {dst.location}: {some}",
                         hint="a run both stores had before the copy was left as it was in the destination; "
                              "delete it there (`diskbench runs delete`) and copy again")
