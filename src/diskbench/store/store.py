"""The result store: runs, jobs and results, each committed the moment it exists.

One class for both databases: ``Store("results.sqlite")`` (or no argument: the default file) is
SQLite, ``Store("postgresql://...")`` is a PostgreSQL database several machines share. The SQL
here is written once; the backend (``sqlite.py``, ``postgresql.py``) runs it, and the schema is
one list of migrations (``schema.py``). Raw outputs are written beside the store while a run
works and kept where every reader reaches them (``artifacts.py``).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import platformdirs

from ..errors import StoreError, UnknownRun
from ..model import DirectionResult, GroupResult, Latency, Series
from .addons import keeper_for
from .artifacts import ArtifactKeeping
from .backend import Backend, Row, Tx, batched, is_postgresql
from .errors import guard_public
from .keepers import InDatabase, Keeper
from .lock import RunLock, alive
from .prepared import PreparedLog
from .schema import MIGRATIONS, SCHEMA_VERSION

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "TERMINAL", "Store", "StoredResult", "default_db_path", "default_location",
           "derive_status", "new_run_id", "now_iso"]

TERMINAL = ("completed", "partial", "failed", "interrupted")
_RESULT_COLUMNS = ("run_id, job_key, workload, target, host, engine, engine_version, direction, iops, bw_bytes_per_s,"
                   " ios, io_bytes, runtime_s, clat, clat_bins_z, jobs, errors, notes, created, repeat, bound,"
                   " warnings, series, stop")
# What a StoredResult is read from: every column but the histograms (a report reads them apart,
# with latency_bins; over a network they would be most of the bytes)
_RESULT_FIELDS = ("r.run_id, r.job_key, r.workload, r.target, r.host, r.engine, r.engine_version, r.direction, r.iops,"
                  " r.bw_bytes_per_s, r.ios, r.io_bytes, r.runtime_s, r.clat, r.jobs, r.errors, r.notes, r.repeat,"
                  " r.bound, r.warnings, r.series, r.stop, j.base_key AS base_key, j.params AS params,"
                  " j.testbed AS testbed")
_RESULT_ROW = f"SELECT {_RESULT_FIELDS} FROM results r"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def default_location() -> str:
    """``DISKBENCH_DB`` as given (a PostgreSQL DSN stays a DSN), else the default SQLite file."""
    env = os.environ.get("DISKBENCH_DB")
    return env if env and is_postgresql(env) else str(default_db_path())


def default_db_path() -> Path:
    """``DISKBENCH_DB``, else the user data folder; always absolute (fio runs in other folders)."""
    env = os.environ.get("DISKBENCH_DB")
    if env and not is_postgresql(env):
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir("diskbench")).resolve() / "diskbench.sqlite"


@dataclass
class StoredResult:
    run_id: str
    job_key: str
    workload: str
    target: str
    host: str
    engine: str
    engine_version: str
    jobs: int
    result: DirectionResult
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    repeat: int = 1
    base_key: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    testbed: str | None = None
    stop: dict[str, Any] | None = None  # how an adaptive stop ended the run (GroupResult.stop)

    @property
    def group_key(self) -> str:
        """The job this result belongs to, whatever repetition it is."""
        return self.base_key or self.job_key


def _open(location: str | Path, credential: Any) -> Backend:
    if is_postgresql(location):
        from .postgresql import PostgresBackend

        return PostgresBackend(str(location), credential)
    from .sqlite import SqliteBackend

    return SqliteBackend(Path(location).expanduser().resolve())


@guard_public
class Store(RunLock, PreparedLog, ArtifactKeeping):
    """The result database, and the folder beside it where runs write their raw outputs.

    ``location``: a SQLite file (created when new), a ``postgresql://`` DSN, or None for
    ``DISKBENCH_DB`` or the default file. ``credential``: the Azure credential that signs in to an
    Azure PostgreSQL server without a password, and to an Azure Blob keeper (default:
    ``DefaultAzureCredential``). ``artifacts``: where raw outputs are kept (default
    ``DISKBENCH_ARTIFACTS``; see ``keepers``)."""

    def __init__(self, path: Path | str | None = None, *, credential: Any = None, artifacts: str | None = None,
                 container: Any = None) -> None:
        self.backend = _open(path if path else default_location(), credential)
        self.location = self.backend.location  # what messages name (a DSN without its password)
        self.path: Path = self.backend.path  # SQLite: the file; PostgreSQL: a name in this machine's folder of it
        self.artifacts_root = self.path.parent / "artifacts"
        self._container = container
        try:
            self.backend.migrate()
            default: Keeper | None = InDatabase() if self.backend.dialect == "postgresql" else None
            self.keeper = keeper_for(artifacts or os.environ.get("DISKBENCH_ARTIFACTS"), default=default,
                                     client=container, credential=credential)
        except BaseException as exc:
            self.backend.close()
            translated = self.backend.translate(exc) if not isinstance(exc, StoreError) else None
            if translated is not None:
                raise translated from None
            raise

    @property
    def db(self) -> Any:
        """The driver's connection (sqlite3 or psycopg): for tests and tools, not for diskbench."""
        return self.backend.connection

    @property
    def dialect(self) -> str:
        return self.backend.dialect

    def close(self) -> None:
        self.backend.close()

    @contextmanager
    def _tx(self) -> Iterator[Tx]:
        with self.backend.tx() as tx:
            yield tx

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        return self.backend.rows(sql, args)

    def info(self) -> dict[str, Any]:
        """Where the store is, what it holds and where raw outputs are kept (``diskbench store``)."""
        counts = self._rows("SELECT (SELECT COUNT(*) FROM runs) AS runs, (SELECT COUNT(*) FROM results) AS results")[0]
        return {"schema": "diskbench.store/1", "location": self.location, "backend": self.dialect,
                "schema_version": SCHEMA_VERSION, "runs": int(counts["runs"]), "results": int(counts["results"]),
                "raw_outputs": self.keeper.where if self.keeper is not None else str(self.artifacts_root),
                "local_folder": str(self.path.parent)}

    def run_artifacts(self, run_id: str) -> Path:
        path = self.artifacts_root / run_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    # --- runs -----------------------------------------------------------------------------
    def create_run(self, *, profile: str, profile_path: str | None, profile_text: str | None,
                   options: dict[str, Any], origin: str = "run", run_id: str | None = None,
                   facts: dict[str, Any] | None = None) -> str:
        run_id = run_id or new_run_id()
        with self._tx() as tx:  # locked by this process from the start (RunLock)
            tx.execute(
                "INSERT INTO runs (id, profile, profile_path, profile_text, options, origin, started,"
                " status, facts, artifacts_dir, pid, hostname, heartbeat) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, profile, profile_path, profile_text, json.dumps(options), origin, now_iso(),
                 "running", json.dumps(facts or {}), str(self.artifacts_root / run_id), os.getpid(),
                 os.uname().nodename, now_iso()),
            )
        return run_id

    def update_run(self, run_id: str, **fields: Any) -> None:
        cols = {k: json.dumps(v) if k in ("facts", "options") else _value(v) for k, v in fields.items()}
        sets = ", ".join(f"{k} = ?" for k in cols)
        with self._tx() as tx:
            tx.execute(f"UPDATE runs SET {sets} WHERE id = ?", (*cols.values(), run_id))

    def _facts(self, tx: Tx, run_id: str) -> dict[str, Any]:
        """A run's facts, locked until the transaction ends (two machines' facts both stay)."""
        rows = tx.rows(f"SELECT facts FROM runs WHERE id = ?{self.backend.for_update}", (run_id,))
        return dict(json.loads(rows[0]["facts"] or "{}")) if rows else {}

    def add_host_facts(self, run_id: str, machine: str, facts: dict[str, Any]) -> None:
        """Record one machine's facts; a one-machine run also keeps them at the top level."""
        with self._tx() as tx:
            merged = self._facts(tx, run_id)
            hosts = merged.setdefault("hosts", {})
            hosts[machine] = facts
            if len(hosts) == 1:
                merged.update({k: v for k, v in facts.items() if k != "hosts"})
            else:  # several machines: per-host facts only, run-wide keys stay
                for key in set(hosts[next(iter(hosts))]) | set(facts):
                    if key != "hosts":
                        merged.pop(key, None)
            tx.execute("UPDATE runs SET facts = ? WHERE id = ?", (json.dumps(merged), run_id))

    def merge_facts(self, run_id: str, facts: dict[str, Any]) -> None:
        with self._tx() as tx:
            merged = {**self._facts(tx, run_id), **facts}
            tx.execute("UPDATE runs SET facts = ? WHERE id = ?", (json.dumps(merged), run_id))

    def finish_run(self, run_id: str, status: str | None = None) -> str:
        """End the run and release its lock. Its status is derived from its jobs (completed when
        every job is done, partial when some are, failed when none); the caller can only say
        ``interrupted`` (while some job is not done) or ``partial`` (an import whose jobs are done
        but reported errors). Returns the status. The run's raw outputs written on this machine
        are then kept where every reader of the store reaches them."""
        with self._tx() as tx:
            counts = {r["status"]: int(r["n"]) for r in tx.rows(
                "SELECT status, COUNT(*) AS n FROM jobs WHERE run_id = ? GROUP BY status", (run_id,))}
            derived = derive_status(counts, interrupted=status == "interrupted")
            derived = "partial" if status == "partial" and derived == "completed" else derived
            tx.execute("UPDATE runs SET status = ?, finished = ?, pid = NULL, heartbeat = NULL WHERE id = ?",
                       (derived, now_iso(), run_id))
        self.keep_artifacts(run_id)
        return derived

    def get_run(self, run_ref: str) -> dict[str, Any]:
        """A run by its id, a prefix of it, the end of it (its random part: ``97fe``), or ``last``
        and ``last~N`` (the N-th run before the last)."""
        back = re.fullmatch(r"(?:last|latest)(?:~(\d{1,6}))?", run_ref)
        if back:
            rows = self._rows("SELECT * FROM runs ORDER BY started DESC, id DESC LIMIT 1 OFFSET ?",
                              (int(back.group(1) or 0),))
        else:
            # a prefix as a range on the primary key (LIKE would read every run)
            rows = self._rows("SELECT * FROM runs WHERE id >= ? AND id < ? ORDER BY id",
                              (run_ref, run_ref + "\U0010ffff"))
            exact = [r for r in rows if r["id"] == run_ref]
            rows = exact or rows
            if not rows and re.fullmatch(r"[0-9a-z-]{2,20}", run_ref):  # the end of an id: one pass over the ids
                rows = self._rows("SELECT * FROM runs WHERE id LIKE ? ORDER BY id", ("%" + run_ref,))
        if not rows:
            raise UnknownRun(f"no run {run_ref!r} in {self.location}",
                             hint="see `diskbench runs`; last, last~1 or the end of an id (97fe) work too")
        if len(rows) > 1:
            ids = ", ".join(r["id"] for r in rows[:5])
            raise UnknownRun(f"run id {run_ref!r} is ambiguous: {ids}", hint="type more of it")
        return self._run_dicts(rows)[0]

    def list_runs(self, limit: int | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM runs ORDER BY started DESC, id DESC"
        return self._run_dicts(self._rows(sql + (f" LIMIT {int(limit)}" if limit else "")))

    def _run_dicts(self, rows: list[Row]) -> list[dict[str, Any]]:
        """Runs with their job counts and targets: two queries for any number of runs (a store
        across a network pays per round trip, not per row)."""
        ids = [r["id"] for r in rows]
        counts: dict[str, dict[str, int]] = {i: {} for i in ids}
        targets: dict[str, dict[str, Any]] = {i: {} for i in ids}
        for chunk in batched(ids, 500):
            marks = ",".join("?" * len(chunk))
            for r in self._rows(f"SELECT run_id, status, COUNT(*) AS n FROM jobs WHERE run_id IN ({marks})"
                                " GROUP BY run_id, status ORDER BY run_id, status", chunk):
                counts[r["run_id"]][r["status"]] = int(r["n"])
            for r in self._rows(f"SELECT run_id, host, target, facts FROM jobs WHERE run_id IN ({marks})"
                                " AND facts != '{}' ORDER BY run_id, seq", chunk):
                targets[r["run_id"]][f"{r['host']}/{r['target']}"] = json.loads(r["facts"])
        out = []
        for row in rows:
            run = dict(row)
            run["options"] = json.loads(run["options"] or "{}")
            run["facts"] = json.loads(run["facts"] or "{}")
            if run["status"] == "running" and not alive(run.get("pid"), run.get("hostname"), run.get("heartbeat")):
                run["status"] = "interrupted"  # the process that owned it is gone: crash or kill
            run["job_counts"] = counts[run["id"]]
            run["targets"] = targets[run["id"]]
            out.append(run)
        return out

    # --- jobs -----------------------------------------------------------------------------
    def add_jobs(self, run_id: str, jobs: list[dict[str, Any]]) -> None:
        """Jobs in ``pending``, numbered in the order given (or by their own ``seq``: a later round of
        automatic repeats comes after every job recorded before it)."""
        with self._tx() as tx:
            tx.many(
                "INSERT INTO jobs (run_id, key, seq, workload, target, host, rendered, base_key, repeat, params,"
                " testbed) VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (run_id, key) DO NOTHING",
                [(run_id, job["key"], job.get("seq", seq), job["workload"], job["target"], job["host"],
                  job.get("rendered"), job.get("base_key", job["key"]), job.get("repeat", 1),
                  json.dumps(job.get("params", {})), job.get("testbed")) for seq, job in enumerate(jobs)],
            )

    def update_job(self, run_id: str, key: str, **fields: Any) -> None:
        cols = {k: json.dumps(v) if k == "facts" else _value(v) for k, v in fields.items()}
        sets = ", ".join(f"{k} = ?" for k in cols)
        with self._tx() as tx:
            tx.execute(f"UPDATE jobs SET {sets} WHERE run_id = ? AND key = ?", (*cols.values(), run_id, key))

    def get_jobs(self, run_id: str) -> list[dict[str, Any]]:
        out = []
        for row in self._rows("SELECT * FROM jobs WHERE run_id = ? ORDER BY seq", (run_id,)):
            job = dict(row)
            job["facts"] = json.loads(job["facts"] or "{}")
            job["params"] = json.loads(job["params"] or "{}")
            out.append(job)
        return out

    # --- results --------------------------------------------------------------------------
    def add_results(self, run_id: str, job_key: str, group: GroupResult, *, workload: str,
                    target: str, host: str, repeat: int = 1) -> None:
        """Commit every direction of one parsed group in one transaction."""
        self.add_results_many(run_id, job_key, [(group, {"workload": workload, "target": target, "host": host,
                                                         "repeat": repeat})])

    def add_results_many(self, run_id: str, job_key: str, groups: list[tuple[GroupResult, dict[str, Any]]]) -> None:
        """Several groups of one unit (each client's and their merge) in one transaction: one commit,
        and on PostgreSQL one round trip for all its rows."""
        rows = [_result_row(run_id, job_key, group, d, **where) for group, where in groups for d in group.directions]
        with self._tx() as tx:
            tx.many(f"INSERT INTO results ({_RESULT_COLUMNS}) VALUES ({','.join('?' * 24)})", rows)

    def get_results(self, run_id: str) -> list[StoredResult]:
        rows = self._rows(f"{_RESULT_ROW} LEFT JOIN jobs j ON j.run_id = r.run_id AND j.key = r.job_key"
                          " WHERE r.run_id = ? ORDER BY COALESCE(j.seq, 0), r.id", (run_id,))
        return [_stored(row) for row in rows]

    def results_for_testbeds(self, testbeds: list[str]) -> dict[str, list[StoredResult]]:
        """Every stored result per testbed key, for baselines and history."""
        out: dict[str, list[StoredResult]] = {t: [] for t in testbeds}
        for chunk in batched(testbeds, 500):
            marks = ",".join("?" * len(chunk))
            rows = self._rows(f"{_RESULT_ROW} JOIN jobs j ON j.run_id = r.run_id AND j.key = r.job_key"
                              f" WHERE j.testbed IN ({marks}) ORDER BY r.run_id, r.id", chunk)
            for row in rows:
                out[row["testbed"]].append(_stored(row))
        return out

    def histograms(self, run_id: str) -> dict[int, dict[int, int]]:
        """Latency histograms (bin -> count) by result id: gzip'd JSON, or plain JSON in rows
        written before schema 4."""
        rows = self._rows("SELECT id, clat_bins, clat_bins_z FROM results WHERE run_id = ?"
                          " AND (clat_bins IS NOT NULL OR clat_bins_z IS NOT NULL)", (run_id,))
        return {r["id"]: {int(k): int(v) for k, v in json.loads(_bins_text(r["clat_bins"], r["clat_bins_z"])).items()}
                for r in rows}

    def baseline_results(self, run_id: str, testbed: str | None, since: str, until: str,
                         runs: int) -> list[tuple[str, list[StoredResult]]]:
        """The newest ``runs`` completed, not rejected runs of ``testbed`` between ``since`` and
        ``until`` (ISO times), newest first, each with its results of that testbed; selected in
        SQL through indexes, so the time does not grow with the store."""
        same = "j.testbed = ?" if testbed is not None else "j.testbed IS NULL"
        bed: tuple[str, ...] = (testbed,) if testbed is not None else ()
        picked = self._rows(
            "SELECT r.id FROM runs r WHERE r.id != ? AND r.status = 'completed'"
            " AND r.started >= ? AND r.started <= ? AND (r.accepted IS NULL OR r.accepted != 0)"
            f" AND EXISTS (SELECT 1 FROM jobs j WHERE {same} AND j.run_id = r.id)"
            " ORDER BY r.started DESC, r.id DESC LIMIT ?", (run_id, since, until, *bed, runs),
        )
        out = []
        for p in picked:
            rows = self._rows(
                f"SELECT {_RESULT_FIELDS} FROM jobs j JOIN results r ON r.run_id = j.run_id AND r.job_key = j.key"
                f" WHERE j.run_id = ? AND {same} ORDER BY j.seq, r.id", (p["id"], *bed),
            )
            out.append((p["id"], [_stored(row) for row in rows]))
        return out

    def job_seen(self, run_id: str, base_key: str, since: str, until: str) -> bool:
        """Whether a completed, not rejected run in the window has a job ``base_key`` (any testbed)."""
        return bool(self._rows(
            "SELECT 1 AS x FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.base_key = ? AND r.id != ?"
            " AND r.status = 'completed' AND r.started >= ? AND r.started <= ?"
            " AND (r.accepted IS NULL OR r.accepted != 0) LIMIT 1", (base_key, run_id, since, until)))

    def delete_run(self, run_id: str) -> None:
        """Remove a run with its jobs, results and kept raw outputs (the caller removes its local
        artifacts folder)."""
        self._forget_artifacts(run_id)
        with self._tx() as tx:
            tx.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def set_verdict(self, run_id: str, verdict: str, accepted: bool | None) -> None:
        self.update_run(run_id, verdict=verdict, accepted=None if accepted is None else int(accepted))

    def result_keys(self, run_id: str) -> set[str]:
        return {r["job_key"] for r in self._rows("SELECT DISTINCT job_key FROM results WHERE run_id = ?", (run_id,))}

    def complete_keys(self, run_id: str) -> set[str]:
        """Jobs with a result of their own machine: a client group's unit only with its total (a
        partial one, a client lost mid-job, holds only the other clients' rows)."""
        rows = self._rows("SELECT DISTINCT r.job_key FROM results r JOIN jobs j ON j.run_id = r.run_id"
                          " AND j.key = r.job_key WHERE r.run_id = ? AND r.host = j.host", (run_id,))
        return {r["job_key"] for r in rows}

    def drop_results(self, run_id: str, job_key: str) -> None:
        """A partial unit's rows, before it runs again (its raw outputs stay on disk)."""
        with self._tx() as tx:
            tx.execute("DELETE FROM results WHERE run_id = ? AND job_key = ?", (run_id, job_key))

    # --- segments -------------------------------------------------------------------------
    def add_segment(self, run_id: str, job_key: str, number: int, *, seconds: int, started: str, finished: str,
                    groups: list[dict[str, Any]]) -> None:
        """One segment of a segmented ``stop:`` job, the moment it is parsed (replacing a row of the same
        number an earlier attempt left)."""
        with self._tx() as tx:
            tx.execute("DELETE FROM segments WHERE run_id = ? AND job_key = ? AND number = ?",
                       (run_id, job_key, number))
            tx.execute("INSERT INTO segments (run_id, job_key, number, seconds, started, finished, parsed)"
                       " VALUES (?,?,?,?,?,?,?)", (run_id, job_key, number, seconds, started, finished,
                                                   json.dumps(groups, separators=(",", ":"))))

    def segments(self, run_id: str, job_key: str) -> list[dict[str, Any]]:
        """A job's stored segments in order, each with its groups as stored."""
        rows = self._rows("SELECT * FROM segments WHERE run_id = ? AND job_key = ? ORDER BY number", (run_id, job_key))
        return [{k: r[k] for k in ("job_key", "number", "seconds", "started", "finished")}
                | {"groups": json.loads(r["parsed"])} for r in rows]

    def latency_bins(self, run_id: str) -> dict[tuple[str, str, int], dict[int, int]]:
        """The engine's raw latency bins (engine units) per (job key, direction, repeat): the
        report's histograms; kept out of get_results, which every report reads."""
        rows = self._rows("SELECT job_key, direction, repeat, clat_bins, clat_bins_z FROM results"
                          " WHERE run_id = ? AND (clat_bins IS NOT NULL OR clat_bins_z IS NOT NULL)", (run_id,))
        return {(r["job_key"], r["direction"], r["repeat"]):
                {int(k): int(v) for k, v in json.loads(_bins_text(r["clat_bins"], r["clat_bins_z"])).items()}
                for r in rows}


def _value(value: Any) -> Any:
    """A column's value as both databases take it (PostgreSQL has no bool for an INTEGER column)."""
    return int(value) if isinstance(value, bool) else value


def _result_row(run_id: str, job_key: str, group: GroupResult, d: DirectionResult, *, workload: str, target: str,
                host: str, repeat: int = 1) -> tuple[Any, ...]:
    return (run_id, job_key, workload, target, host, group.engine, group.engine_version, d.direction, d.iops,
            d.bw_bytes_per_s, d.ios, d.io_bytes, d.runtime_s,
            json.dumps(d.clat.to_json(), separators=(",", ":")) if d.clat else None,
            _packed_bins(d.clat.bins) if d.clat and d.clat.bins else None,
            group.jobs, json.dumps(group.errors), json.dumps(group.notes), now_iso(), repeat,
            json.dumps(d.bound) if d.bound else None, json.dumps(d.warnings),  # attribution (schema 3)
            json.dumps(d.series.to_json()) if d.series else None,
            json.dumps(group.stop) if group.stop else None)  # the adaptive stop (schema 7)


def _bins_text(plain: str | None, packed: bytes | None) -> str:
    """A histogram's JSON: gzip'd (schema 4 on) or plain (rows written before)."""
    return gzip.decompress(packed).decode() if packed is not None else plain or "{}"


def _packed_bins(bins: dict[int, int]) -> bytes:
    """A histogram as gzip'd compact JSON: a tenth of its JSON text."""
    return gzip.compress(json.dumps(bins, separators=(",", ":")).encode(), compresslevel=6, mtime=0)


def _stored(row: Row) -> StoredResult:
    clat = Latency.from_json(json.loads(row["clat"])) if row["clat"] else None
    return StoredResult(
        run_id=row["run_id"], job_key=row["job_key"], workload=row["workload"],
        target=row["target"], host=row["host"], engine=row["engine"],
        engine_version=row["engine_version"], jobs=row["jobs"],
        result=DirectionResult(
            direction=row["direction"], iops=row["iops"], bw_bytes_per_s=row["bw_bytes_per_s"],
            ios=row["ios"], io_bytes=row["io_bytes"], runtime_s=row["runtime_s"], clat=clat,
            series=Series.from_json(json.loads(row["series"])) if _col(row, "series") else None,
            bound=json.loads(row["bound"]) if _col(row, "bound") else None,
            warnings=json.loads(_col(row, "warnings") or "[]"),
        ),
        errors=json.loads(row["errors"]), notes=json.loads(row["notes"]), repeat=row["repeat"],
        base_key=_col(row, "base_key") or row["job_key"], params=json.loads(_col(row, "params") or "{}"),
        testbed=_col(row, "testbed"), stop=json.loads(row["stop"]) if _col(row, "stop") else None,
    )


def _col(row: Row, name: str) -> Any:
    return row[name] if name in row.keys() else None  # noqa: SIM118 - sqlite3.Row: "in" checks values


def derive_status(counts: dict[str, int], *, interrupted: bool = False) -> str:
    """A finished run's status from its jobs' (``counts``: job status -> how many)."""
    done, total = counts.get("done", 0), sum(counts.values())
    if done == total:
        return "completed"
    if interrupted:
        return "interrupted"
    return "partial" if done else "failed"
