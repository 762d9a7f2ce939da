"""The store's schema: one list of migrations for SQLite and PostgreSQL alike.

Migrations 1-5 were written for SQLite and are never edited; PostgreSQL runs the same text through
``for_postgresql``, which changes only what SQLite's loose typing lets it write differently:
8-byte integers and floats (SQLite's INTEGER and REAL are 8 bytes, PostgreSQL's are 4), BYTEA for
BLOB, an identity column for AUTOINCREMENT, and the "C" collation on every text column, so that
ids, times and prefixes sort byte by byte as in SQLite (``get_run``'s prefix range, ``ORDER BY
started, id``). A migration that must differ per dialect is a ``Dialects`` pair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Dialects:
    """A migration whose SQL differs between the two databases."""

    sqlite: str
    postgresql: str


def _view(clat: str, text_field: str, started: str) -> str:
    """The results view: one row per result with its tags (what a dashboard groups and filters by)
    and its figures in plain columns. ``clat``: how to read one key of a JSON column in this dialect;
    ``text_field`` the same for a text value; ``started``: the run's start as this dialect's time."""
    pct = ", ".join(f"{clat.format(col='r.clat', key=key)} AS clat_{name}_us" for key, name in
                    (("mean", "mean"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99.9", "p99_9"),
                     ("p99.99", "p99_99"), ("max", "max")))
    return f"""
    CREATE VIEW results_view AS
    SELECT r.id AS result_id, r.run_id, {started} AS run_started, ru.status AS run_status, ru.profile,
           ru.origin, ru.verdict, ru.accepted, ru.hostname AS controller,
           COALESCE(j.base_key, r.job_key) AS job, r.job_key, r.repeat, r.workload, r.target, r.host,
           r.direction, r.engine, r.engine_version, j.testbed, j.params,
           r.iops, r.bw_bytes_per_s, r.bw_bytes_per_s / 1048576.0 AS mib_per_s, r.ios, r.io_bytes, r.runtime_s,
           {pct},
           {text_field.format(col='r.bound', key='kind')} AS bound_kind,
           {clat.format(col='r.bound', key='ratio')} AS bound_ratio
    FROM results r
    JOIN runs ru ON ru.id = r.run_id
    LEFT JOIN jobs j ON j.run_id = r.run_id AND j.key = r.job_key
    """


# Each entry migrates the schema from version i to i + 1; never edit a released entry.
MIGRATIONS: list[str | Dialects] = [
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
    # 6: a store several machines share (issue 27): raw outputs kept where every reader reaches
    # them (in the database, or an object store this table points at), and a view of results with
    # their tags for dashboards
    Dialects(
        sqlite="""
        CREATE TABLE artifacts (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            packed INTEGER NOT NULL DEFAULT 0,
            location TEXT,
            data BLOB,
            PRIMARY KEY (run_id, name)
        );
        """ + _view("json_extract({col}, '$.\"{key}\"')", "json_extract({col}, '$.\"{key}\"')", "ru.started"),
        postgresql="""
        CREATE TABLE artifacts (
            run_id TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            name TEXT COLLATE "C" NOT NULL,
            size BIGINT NOT NULL,
            mtime_ns BIGINT NOT NULL,
            packed BIGINT NOT NULL DEFAULT 0,
            location TEXT COLLATE "C",
            data BYTEA,
            PRIMARY KEY (run_id, name)
        );
        """ + _view("({col}::json ->> '{key}')::float8", "({col}::json ->> '{key}')", "ru.started::timestamptz"),
    ),
    # 7: how an adaptive stop (a workload's stop:) ended the run: reason, seconds, the interval reached
    """
    ALTER TABLE results ADD COLUMN stop TEXT;
    """,
    # 8: the segments of a stop: job an engine runs as short runs (DiskSpd), each kept as it ends, so
    # that what was measured survives an interruption and resume goes on from it
    """
    CREATE TABLE segments (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        job_key TEXT NOT NULL,
        number INTEGER NOT NULL,
        seconds INTEGER NOT NULL,
        started TEXT NOT NULL,
        finished TEXT NOT NULL,
        parsed TEXT NOT NULL,
        PRIMARY KEY (run_id, job_key, number)
    );
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)

_PG_TYPES = [
    (re.compile(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b"), "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
    (re.compile(r"\bINTEGER\b"), "BIGINT"),
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
    (re.compile(r"\bBLOB\b"), "BYTEA"),
    (re.compile(r"\bTEXT\b"), 'TEXT COLLATE "C"'),
]


def for_postgresql(sql: str) -> str:
    """A migration written for SQLite, as PostgreSQL DDL of the same meaning."""
    for pattern, replacement in _PG_TYPES:
        sql = pattern.sub(replacement, sql)
    return sql


def statements(index: int, dialect: str) -> list[str]:
    """Migration ``index`` (0-based) for ``dialect``, one statement each."""
    entry = MIGRATIONS[index]
    if isinstance(entry, Dialects):
        sql = entry.postgresql if dialect == "postgresql" else entry.sqlite
    else:
        sql = for_postgresql(entry) if dialect == "postgresql" else entry
    return [s for s in sql.split(";") if s.strip()]
