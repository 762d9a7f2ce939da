"""SQLite result store with a versioned schema; each result is committed the moment it exists."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import platformdirs

from ..errors import StoreError, UnknownRun, UsageError
from ..model import DirectionResult, GroupResult, Latency, Series
from .errors import guard_public, store_error
from .lock import RunLock, alive
from .prepared import PreparedLog

# Each entry migrates the schema from version i to i + 1; never edit a released entry.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        profile TEXT NOT NULL,
        profile_path TEXT,
        profile_text TEXT,
        options TEXT NOT NULL DEFAULT '{}',
        origin TEXT NOT NULL DEFAULT 'run',
        started TEXT NOT NULL,
        finished TEXT,
        status TEXT NOT NULL,
        facts TEXT NOT NULL DEFAULT '{}',
        artifacts_dir TEXT,
        pid INTEGER,
        hostname TEXT
    );
    CREATE TABLE jobs (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        seq INTEGER NOT NULL,
        workload TEXT NOT NULL,
        target TEXT NOT NULL,
        host TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        rendered TEXT,
        started TEXT,
        finished TEXT,
        exit_code INTEGER,
        message TEXT,
        facts TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (run_id, key)
    );
    CREATE TABLE results (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        job_key TEXT NOT NULL,
        workload TEXT NOT NULL,
        target TEXT NOT NULL,
        host TEXT NOT NULL,
        engine TEXT NOT NULL,
        engine_version TEXT NOT NULL,
        direction TEXT NOT NULL,
        iops REAL NOT NULL,
        bw_bytes_per_s REAL NOT NULL,
        ios INTEGER NOT NULL,
        io_bytes INTEGER NOT NULL,
        runtime_s REAL NOT NULL,
        clat TEXT,
        clat_bins TEXT,
        jobs INTEGER NOT NULL DEFAULT 1,
        errors TEXT NOT NULL DEFAULT '[]',
        notes TEXT NOT NULL DEFAULT '[]',
        created TEXT NOT NULL
    );
    CREATE INDEX results_run ON results(run_id, job_key);
    """,
    # 2: repeats, sweeps and the CI gate
    """
    ALTER TABLE jobs ADD COLUMN base_key TEXT;
    ALTER TABLE jobs ADD COLUMN repeat INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE jobs ADD COLUMN params TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE jobs ADD COLUMN testbed TEXT;
    ALTER TABLE results ADD COLUMN repeat INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE runs ADD COLUMN verdict TEXT;
    ALTER TABLE runs ADD COLUMN accepted INTEGER;
    UPDATE jobs SET base_key = key;
    CREATE INDEX jobs_testbed ON jobs(testbed);
    """,
    # 3: attribution - the limit that bound a result, its pitfalls, its per-second series
    """
    ALTER TABLE results ADD COLUMN bound TEXT;
    ALTER TABLE results ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE results ADD COLUMN series TEXT;
    """,
    # 4: baselines selected in SQL (gate, history); latency histograms gzip-compressed (new rows
    # fill clat_bins_z and leave clat_bins NULL; older rows keep their JSON and stay readable)
    """
    CREATE INDEX runs_started ON runs(status, started, id);
    CREATE INDEX runs_newest ON runs(started, id);
    CREATE INDEX jobs_testbed_run ON jobs(testbed, run_id);
    CREATE INDEX jobs_base_key ON jobs(base_key, run_id);
    ALTER TABLE results ADD COLUMN clat_bins_z BLOB;
    """,
    # 5: a run is locked by the process working on it (pid, host, and a heartbeat that tells a live
    # holder on another machine from a dead one); what a run prepared on its hosts, so resume knows
    # its own file systems and arrays and cleanup can remove what a killed run left
    """
    ALTER TABLE runs ADD COLUMN heartbeat TEXT;
    CREATE TABLE prepared (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        host TEXT NOT NULL,
        kind TEXT NOT NULL,
        what TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '{}',
        created TEXT NOT NULL,
        released TEXT
    );
    CREATE INDEX prepared_run ON prepared(run_id, host);
    CREATE INDEX prepared_open ON prepared(released, run_id);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)
TERMINAL = ("completed", "partial", "failed", "interrupted")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def default_db_path() -> Path:
    """``DISKBENCH_DB``, else the user data folder; always absolute (fio runs in other folders)."""
    env = os.environ.get("DISKBENCH_DB")
    if env:
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

    @property
    def group_key(self) -> str:
        """The job this result belongs to, whatever repetition it is."""
        return self.base_key or self.job_key


@guard_public
class Store(RunLock, PreparedLog):
    """The result database plus an artifacts folder beside it (raw outputs, job files)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path).expanduser().resolve() if path else default_db_path()
        self.artifacts_root = self.path.parent / "artifacts"
        if self.path.exists() and not self.path.is_file():
            raise UsageError(f"the result store {self.path} is not a regular file",
                             hint="pass --db with a file path (a new one is created)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Hosts run in parallel threads; every statement goes through self._lock.
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                      check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open result store {self.path}: {exc}",
                             hint="pass --db PATH or set DISKBENCH_DB") from None
        self._lock = threading.RLock()
        self.db.row_factory = sqlite3.Row
        try:
            self.db.execute("PRAGMA foreign_keys = ON")
            # A run commits a few times per job: in WAL mode with synchronous=NORMAL a commit is an
            # append, not three fsyncs (a crash of diskbench loses nothing; a power cut at most the
            # last commits, whose raw outputs are in the artifacts).
            with contextlib.suppress(sqlite3.Error):  # a read-only store stays as it is (and junk
                self.db.execute("PRAGMA journal_mode = WAL")  # is reported by _migrate)
                self.db.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except sqlite3.Error as exc:
            self.db.close()
            raise store_error(exc, self.path) from None
        except StoreError:
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _migrate(self) -> None:
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            if "not a database" not in str(exc):
                raise
            raise StoreError(f"{self.path} is not a diskbench store: {exc}",
                             hint="pass --db with the path of a diskbench store, or of a new file") from None
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}; this diskbench knows {SCHEMA_VERSION}",
                hint="upgrade diskbench",
            )
        for index in range(version, SCHEMA_VERSION):
            with self._tx() as db:
                # Another process may have migrated while this one waited for the write lock.
                if db.execute("PRAGMA user_version").fetchone()[0] > index:
                    continue
                for statement in MIGRATIONS[index].split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {index + 1}")

    def run_artifacts(self, run_id: str) -> Path:
        path = self.artifacts_root / run_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    # --- runs -----------------------------------------------------------------------------
    def create_run(self, *, profile: str, profile_path: str | None, profile_text: str | None,
                   options: dict[str, Any], origin: str = "run", run_id: str | None = None,
                   facts: dict[str, Any] | None = None) -> str:
        run_id = run_id or new_run_id()
        with self._tx() as db:  # locked by this process from the start (RunLock)
            db.execute(
                "INSERT INTO runs (id, profile, profile_path, profile_text, options, origin, started,"
                " status, facts, artifacts_dir, pid, hostname, heartbeat) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, profile, profile_path, profile_text, json.dumps(options), origin, now_iso(),
                 "running", json.dumps(facts or {}), str(self.artifacts_root / run_id), os.getpid(),
                 os.uname().nodename, now_iso()),
            )
        return run_id

    def update_run(self, run_id: str, **fields: Any) -> None:
        cols = {k: json.dumps(v) if k in ("facts", "options") else v for k, v in fields.items()}
        sets = ", ".join(f"{k} = ?" for k in cols)
        with self._tx() as db:
            db.execute(f"UPDATE runs SET {sets} WHERE id = ?", (*cols.values(), run_id))

    def add_host_facts(self, run_id: str, machine: str, facts: dict[str, Any]) -> None:
        """Record one machine's facts; a one-machine run also keeps them at the top level."""
        with self._tx() as db:
            row = db.execute("SELECT facts FROM runs WHERE id = ?", (run_id,)).fetchone()
            merged = json.loads(row[0] or "{}")
            hosts = merged.setdefault("hosts", {})
            hosts[machine] = facts
            if len(hosts) == 1:
                merged.update({k: v for k, v in facts.items() if k != "hosts"})
            else:  # several machines: per-host facts only, run-wide keys stay
                for key in set(hosts[next(iter(hosts))]) | set(facts):
                    if key != "hosts":
                        merged.pop(key, None)
            db.execute("UPDATE runs SET facts = ? WHERE id = ?", (json.dumps(merged), run_id))

    def merge_facts(self, run_id: str, facts: dict[str, Any]) -> None:
        with self._tx() as db:
            row = db.execute("SELECT facts FROM runs WHERE id = ?", (run_id,)).fetchone()
            merged = {**json.loads(row[0] or "{}"), **facts}
            db.execute("UPDATE runs SET facts = ? WHERE id = ?", (json.dumps(merged), run_id))

    def finish_run(self, run_id: str, status: str | None = None) -> str:
        """End the run and release its lock. Its status is derived from its jobs (completed when
        every job is done, partial when some are, failed when none); the caller can only say
        ``interrupted`` (while some job is not done) or ``partial`` (an import whose jobs are done
        but reported errors). Returns the status."""
        with self._tx() as db:
            counts = dict(db.execute("SELECT status, COUNT(*) FROM jobs WHERE run_id = ? GROUP BY status",
                                     (run_id,)).fetchall())
            derived = derive_status(counts, interrupted=status == "interrupted")
            derived = "partial" if status == "partial" and derived == "completed" else derived
            db.execute("UPDATE runs SET status = ?, finished = ?, pid = NULL, heartbeat = NULL WHERE id = ?",
                       (derived, now_iso(), run_id))
        return derived

    def get_run(self, run_ref: str) -> dict[str, Any]:
        if run_ref in ("last", "latest"):
            rows = self.db.execute("SELECT * FROM runs ORDER BY started DESC, id DESC LIMIT 1").fetchall()
        else:
            # a prefix as a range on the primary key (LIKE would read every run)
            rows = self.db.execute(
                "SELECT * FROM runs WHERE id >= ? AND id < ? ORDER BY id", (run_ref, run_ref + "\U0010ffff")
            ).fetchall()
            exact = [r for r in rows if r["id"] == run_ref]
            rows = exact or rows
        if not rows:
            raise UnknownRun(f"no run {run_ref!r} in {self.path}", hint="see `diskbench runs`")
        if len(rows) > 1:
            ids = ", ".join(r["id"] for r in rows[:5])
            raise UnknownRun(f"run id {run_ref!r} is ambiguous: {ids}", hint="type more of it")
        return self._run_dict(rows[0])

    def list_runs(self, limit: int | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM runs ORDER BY started DESC, id DESC"
        rows = self.db.execute(sql + (f" LIMIT {int(limit)}" if limit else "")).fetchall()
        return [self._run_dict(r) for r in rows]

    def _run_dict(self, row: sqlite3.Row) -> dict[str, Any]:
        run = dict(row)
        run["options"] = json.loads(run["options"] or "{}")
        run["facts"] = json.loads(run["facts"] or "{}")
        if run["status"] == "running" and not alive(run.get("pid"), run.get("hostname"), run.get("heartbeat")):
            run["status"] = "interrupted"  # the process that owned it is gone: crash or kill
        counts = self.db.execute(
            "SELECT status, COUNT(*) FROM jobs WHERE run_id = ? GROUP BY status", (run["id"],)
        ).fetchall()
        run["job_counts"] = {s: n for s, n in counts}
        targets = self.db.execute(
            "SELECT host, target, facts FROM jobs WHERE run_id = ? AND facts != '{}' ORDER BY seq",
            (run["id"],),
        ).fetchall()
        run["targets"] = {f"{h}/{t}": json.loads(f) for h, t, f in targets}
        return run

    # --- jobs -----------------------------------------------------------------------------
    def add_jobs(self, run_id: str, jobs: list[dict[str, Any]]) -> None:
        with self._tx() as db:
            for seq, job in enumerate(jobs):
                db.execute(
                    "INSERT OR IGNORE INTO jobs (run_id, key, seq, workload, target, host, rendered,"
                    " base_key, repeat, params, testbed) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (run_id, job["key"], seq, job["workload"], job["target"], job["host"],
                     job.get("rendered"), job.get("base_key", job["key"]), job.get("repeat", 1),
                     json.dumps(job.get("params", {})), job.get("testbed")),
                )

    def update_job(self, run_id: str, key: str, **fields: Any) -> None:
        cols = {k: json.dumps(v) if k == "facts" else v for k, v in fields.items()}
        sets = ", ".join(f"{k} = ?" for k in cols)
        with self._tx() as db:
            db.execute(f"UPDATE jobs SET {sets} WHERE run_id = ? AND key = ?",
                       (*cols.values(), run_id, key))

    def get_jobs(self, run_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT * FROM jobs WHERE run_id = ? ORDER BY seq", (run_id,))
        out = []
        for row in rows.fetchall():
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
        """Several groups of one unit (each client's and their merge) in one transaction: one commit."""
        with self._tx() as db:
            for group, where in groups:
                self._insert_group(db, run_id, job_key, group, **where)

    def _insert_group(self, db: sqlite3.Connection, run_id: str, job_key: str, group: GroupResult, *,
                      workload: str, target: str, host: str, repeat: int = 1) -> None:
        for d in group.directions:
            db.execute(
                "INSERT INTO results (run_id, job_key, workload, target, host, engine,"
                " engine_version, direction, iops, bw_bytes_per_s, ios, io_bytes, runtime_s,"
                " clat, clat_bins_z, jobs, errors, notes, created, repeat)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, job_key, workload, target, host, group.engine, group.engine_version,
                 d.direction, d.iops, d.bw_bytes_per_s, d.ios, d.io_bytes, d.runtime_s,
                 json.dumps(d.clat.to_json(), separators=(",", ":")) if d.clat else None,
                 _packed_bins(d.clat.bins) if d.clat and d.clat.bins else None,
                 group.jobs, json.dumps(group.errors), json.dumps(group.notes), now_iso(), repeat),
            )
            if d.bound or d.warnings or d.series:  # attribution (schema 3), in the row just written
                db.execute("UPDATE results SET bound = ?, warnings = ?, series = ? WHERE id = last_insert_rowid()",
                           (json.dumps(d.bound) if d.bound else None, json.dumps(d.warnings),
                            json.dumps(d.series.to_json()) if d.series else None))

    def get_results(self, run_id: str) -> list[StoredResult]:
        rows = self.db.execute(
            "SELECT r.*, j.base_key AS base_key, j.params AS params, j.testbed AS testbed"
            " FROM results r LEFT JOIN jobs j ON j.run_id = r.run_id AND j.key = r.job_key"
            " WHERE r.run_id = ? ORDER BY COALESCE(j.seq, 0), r.id", (run_id,)
        ).fetchall()
        return [_stored(row) for row in rows]

    def results_for_testbeds(self, testbeds: list[str]) -> dict[str, list[StoredResult]]:
        """Every stored result per testbed key, for baselines and history."""
        out: dict[str, list[StoredResult]] = {t: [] for t in testbeds}
        if not testbeds:
            return out
        marks = ",".join("?" * len(testbeds))
        rows = self.db.execute(
            "SELECT r.*, j.base_key AS base_key, j.params AS params, j.testbed AS testbed"
            " FROM results r JOIN jobs j ON j.run_id = r.run_id AND j.key = r.job_key"
            f" WHERE j.testbed IN ({marks}) ORDER BY r.run_id, r.id", testbeds,
        ).fetchall()
        for row in rows:
            out[row["testbed"]].append(_stored(row))
        return out

    def histograms(self, run_id: str) -> dict[int, dict[int, int]]:
        """Latency histograms (bin -> count) by result id: gzip'd JSON, or plain JSON in rows
        written before schema 4."""
        rows = self.db.execute("SELECT id, clat_bins, clat_bins_z FROM results WHERE run_id = ?"
                               " AND (clat_bins IS NOT NULL OR clat_bins_z IS NOT NULL)", (run_id,))
        return {rid: {int(k): int(v) for k, v in json.loads(_bins_text(plain, packed)).items()}
                for rid, plain, packed in rows.fetchall()}

    def baseline_results(self, run_id: str, testbed: str | None, since: str, until: str,
                         runs: int) -> list[tuple[str, list[StoredResult]]]:
        """The newest ``runs`` completed, not rejected runs of ``testbed`` between ``since`` and
        ``until`` (ISO times), newest first, each with its results of that testbed; selected in
        SQL through indexes, so the time does not grow with the store."""
        picked = self.db.execute(
            "SELECT r.id FROM runs r WHERE r.id != ? AND r.status = 'completed'"
            " AND r.started >= ? AND r.started <= ? AND (r.accepted IS NULL OR r.accepted != 0)"
            " AND EXISTS (SELECT 1 FROM jobs j WHERE j.testbed IS ? AND j.run_id = r.id)"
            " ORDER BY r.started DESC, r.id DESC LIMIT ?", (run_id, since, until, testbed, runs),
        ).fetchall()
        out = []
        for (rid,) in picked:
            rows = self.db.execute(
                "SELECT r.*, j.base_key AS base_key, j.params AS params, j.testbed AS testbed"
                " FROM jobs j JOIN results r ON r.run_id = j.run_id AND r.job_key = j.key"
                " WHERE j.run_id = ? AND j.testbed IS ? ORDER BY j.seq, r.id", (rid, testbed),
            ).fetchall()
            out.append((rid, [_stored(row) for row in rows]))
        return out

    def job_seen(self, run_id: str, base_key: str, since: str, until: str) -> bool:
        """Whether a completed, not rejected run in the window has a job ``base_key`` (any testbed)."""
        return self.db.execute(
            "SELECT 1 FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.base_key = ? AND r.id != ?"
            " AND r.status = 'completed' AND r.started >= ? AND r.started <= ?"
            " AND (r.accepted IS NULL OR r.accepted != 0) LIMIT 1", (base_key, run_id, since, until),
        ).fetchone() is not None

    def delete_run(self, run_id: str) -> None:
        """Remove a run with its jobs and results (the caller removes its artifacts folder)."""
        with self._tx() as db:
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def set_verdict(self, run_id: str, verdict: str, accepted: bool | None) -> None:
        self.update_run(run_id, verdict=verdict, accepted=None if accepted is None else int(accepted))

    def result_keys(self, run_id: str) -> set[str]:
        rows = self.db.execute("SELECT DISTINCT job_key FROM results WHERE run_id = ?", (run_id,))
        return {r[0] for r in rows.fetchall()}

    def complete_keys(self, run_id: str) -> set[str]:
        """Jobs with a result of their own machine: a client group's unit only with its total (a
        partial one, a client lost mid-job, holds only the other clients' rows)."""
        rows = self.db.execute("SELECT DISTINCT r.job_key FROM results r JOIN jobs j ON j.run_id = r.run_id"
                               " AND j.key = r.job_key WHERE r.run_id = ? AND r.host = j.host", (run_id,))
        return {r[0] for r in rows.fetchall()}

    def drop_results(self, run_id: str, job_key: str) -> None:
        """A partial unit's rows, before it runs again (its raw outputs stay on disk)."""
        with self._tx() as db:
            db.execute("DELETE FROM results WHERE run_id = ? AND job_key = ?", (run_id, job_key))

    def latency_bins(self, run_id: str) -> dict[tuple[str, str, int], dict[int, int]]:
        """The engine's raw latency bins (engine units) per (job key, direction, repeat): the
        report's histograms; kept out of get_results, which every report reads."""
        rows = self.db.execute("SELECT job_key, direction, repeat, clat_bins, clat_bins_z FROM results"
                               " WHERE run_id = ? AND (clat_bins IS NOT NULL OR clat_bins_z IS NOT NULL)",
                               (run_id,)).fetchall()
        return {(r[0], r[1], r[2]): {int(k): int(v) for k, v in json.loads(_bins_text(r[3], r[4])).items()}
                for r in rows}


def _bins_text(plain: str | None, packed: bytes | None) -> str:
    """A histogram's JSON: gzip'd (schema 4 on) or plain (rows written before)."""
    return gzip.decompress(packed).decode() if packed is not None else plain or "{}"


def _packed_bins(bins: dict[int, int]) -> bytes:
    """A histogram as gzip'd compact JSON: a tenth of its JSON text."""
    return gzip.compress(json.dumps(bins, separators=(",", ":")).encode(), compresslevel=6, mtime=0)


def _stored(row: sqlite3.Row) -> StoredResult:
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
        testbed=_col(row, "testbed"),
    )


def _col(row: sqlite3.Row, name: str) -> Any:
    return row[name] if name in row.keys() else None  # noqa: SIM118 - sqlite3.Row: "in" checks values


def derive_status(counts: dict[str, int], *, interrupted: bool = False) -> str:
    """A finished run's status from its jobs' (``counts``: job status -> how many)."""
    done, total = counts.get("done", 0), sum(counts.values())
    if done == total:
        return "completed"
    if interrupted:
        return "interrupted"
    return "partial" if done else "failed"
