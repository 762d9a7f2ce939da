"""What the runner tells about a run as it goes: the store, or memory when there is no store.

The runner commits every step (run created, job started, result parsed, run finished) through
this interface, so with the SQLite store nothing measured is lost; a library user who passes
``store=None`` gets the same results kept in memory (raw outputs in a temporary folder).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..model import GroupResult
from ..store import StoredResult, new_run_id, now_iso
from ..store.store import derive_status

if TYPE_CHECKING:
    from ..plan import Unit


class Recorder(Protocol):
    path: Path  # the store's file; its folder holds known hosts, journals and keys

    def create_run(self, *, profile: str, profile_path: str | None, profile_text: str | None,
                   options: dict[str, Any], origin: str = "run", run_id: str | None = None,
                   facts: dict[str, Any] | None = None) -> str: ...

    def update_run(self, run_id: str, **fields: Any) -> None: ...

    def finish_run(self, run_id: str, status: str | None = None) -> str: ...

    def lock_run(self, run_id: str) -> None: ...

    def delete_run(self, run_id: str) -> None: ...

    def renew_lock(self, run_id: str) -> bool: ...

    def add_prepared(self, run_id: str, host: str, kind: str, what: str, detail: dict[str, Any]) -> int: ...

    def release_prepared(self, entry: int) -> None: ...

    def prepared(self, run_id: str | None = None, host: str | None = None, *,
                 open_only: bool = False) -> list[dict[str, Any]]: ...

    def get_run(self, run_ref: str) -> dict[str, Any]: ...

    def add_host_facts(self, run_id: str, machine: str, facts: dict[str, Any]) -> None: ...

    def merge_facts(self, run_id: str, facts: dict[str, Any]) -> None: ...

    def add_jobs(self, run_id: str, jobs: list[dict[str, Any]]) -> None: ...

    def update_job(self, run_id: str, key: str, **fields: Any) -> None: ...

    def get_jobs(self, run_id: str) -> list[dict[str, Any]]: ...

    def add_results(self, run_id: str, job_key: str, group: GroupResult, *, workload: str, target: str,
                    host: str, repeat: int = 1) -> None: ...

    def add_results_many(self, run_id: str, job_key: str,
                         groups: list[tuple[GroupResult, dict[str, Any]]]) -> None: ...

    def get_results(self, run_id: str) -> list[StoredResult]: ...

    def result_keys(self, run_id: str) -> set[str]: ...

    def complete_keys(self, run_id: str) -> set[str]: ...

    def drop_results(self, run_id: str, job_key: str) -> None: ...

    def add_segment(self, run_id: str, job_key: str, number: int, *, seconds: int, started: str, finished: str,
                    groups: list[dict[str, Any]]) -> None: ...

    def segments(self, run_id: str, job_key: str) -> list[dict[str, Any]]: ...

    def run_artifacts(self, run_id: str) -> Path: ...

    def keep_artifacts(self, run_id: str, folder: Path | None = None) -> int:
        """A unit's folder is final (its results committed, its output gzip'd): keep its files
        where every reader of the store reaches them (a shared store's database or object store)."""


def unit_dir(store: Recorder, run_id: str, job: Unit) -> Path:
    """Where a unit's job files, raw outputs and logs are kept."""
    return store.run_artifacts(run_id) / f"{job.seq:02d}-{job.slug}"


class MemoryRecorder:
    """A Recorder without a database: one run's record and results in memory."""

    def __init__(self, folder: Path | None = None) -> None:
        self._tmp = None if folder else tempfile.TemporaryDirectory(prefix="diskbench-")
        self.root = folder or Path(self._tmp.name)  # type: ignore[union-attr]
        self.path = self.root / "memory.sqlite"  # never created; its folder is the state folder
        self.runs: dict[str, dict[str, Any]] = {}
        self.jobs: dict[str, dict[str, dict[str, Any]]] = {}
        self.results: dict[str, list[StoredResult]] = {}
        self.entries: list[dict[str, Any]] = []  # what runs prepared on hosts (see store.prepared)
        self.kept_segments: dict[str, list[dict[str, Any]]] = {}  # a segmented stop: job's runs, per run

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    def create_run(self, *, profile: str, profile_path: str | None, profile_text: str | None,
                   options: dict[str, Any], origin: str = "run", run_id: str | None = None,
                   facts: dict[str, Any] | None = None) -> str:
        run_id = run_id or new_run_id()
        self.runs[run_id] = {"id": run_id, "profile": profile, "profile_path": profile_path,
                             "profile_text": profile_text, "options": options, "origin": origin,
                             "started": now_iso(), "finished": None, "status": "running",
                             "facts": dict(facts or {}), "artifacts_dir": str(self.root / run_id), "targets": {}}
        self.jobs[run_id], self.results[run_id] = {}, []
        return run_id

    def update_run(self, run_id: str, **fields: Any) -> None:
        self.runs[run_id].update(fields)

    def finish_run(self, run_id: str, status: str | None = None) -> str:
        counts: dict[str, int] = {}
        for job in self.jobs[run_id].values():
            counts[job["status"]] = counts.get(job["status"], 0) + 1
        derived = derive_status(counts, interrupted=status == "interrupted")
        derived = "partial" if status == "partial" and derived == "completed" else derived
        self.update_run(run_id, status=derived, finished=now_iso())
        return derived

    def lock_run(self, run_id: str) -> None:
        """A run in memory belongs to this process alone."""

    def delete_run(self, run_id: str) -> None:
        for table in (self.runs, self.jobs, self.results):
            table.pop(run_id, None)
        self.kept_segments.pop(run_id, None)

    def renew_lock(self, run_id: str) -> bool:
        return True

    def add_prepared(self, run_id: str, host: str, kind: str, what: str, detail: dict[str, Any]) -> int:
        self.entries.append({"id": len(self.entries) + 1, "run_id": run_id, "host": host, "kind": kind,
                             "what": what, "detail": detail, "created": now_iso(), "released": None})
        return len(self.entries)

    def release_prepared(self, entry: int) -> None:
        self.entries[entry - 1]["released"] = now_iso()

    def prepared(self, run_id: str | None = None, host: str | None = None, *,
                 open_only: bool = False) -> list[dict[str, Any]]:
        return [dict(e) for e in self.entries if run_id in (None, e["run_id"]) and host in (None, e["host"])
                and not (open_only and e["released"])]

    def get_run(self, run_ref: str) -> dict[str, Any]:
        run = self.runs[run_ref]
        counts: dict[str, int] = {}
        for job in self.jobs[run_ref].values():
            counts[job["status"]] = counts.get(job["status"], 0) + 1
        targets = {f"{j['host']}/{j['target']}": j["facts"] for j in self.jobs[run_ref].values() if j["facts"]}
        return {**run, "job_counts": counts, "targets": targets}

    def add_host_facts(self, run_id: str, machine: str, facts: dict[str, Any]) -> None:
        merged = self.runs[run_id]["facts"]
        hosts = merged.setdefault("hosts", {})
        hosts[machine] = facts
        if len(hosts) == 1:
            merged.update({k: v for k, v in facts.items() if k != "hosts"})

    def merge_facts(self, run_id: str, facts: dict[str, Any]) -> None:
        self.runs[run_id]["facts"].update(facts)

    def add_jobs(self, run_id: str, jobs: list[dict[str, Any]]) -> None:
        for seq, job in enumerate(jobs):
            self.jobs[run_id].setdefault(job["key"], {
                "run_id": run_id, "seq": job.get("seq", seq), "status": "pending", "rendered": None, "started": None,
                "finished": None, "exit_code": None, "message": None, "facts": {}, "testbed": None,
                "base_key": job.get("base_key", job["key"]), "repeat": job.get("repeat", 1),
                "params": job.get("params", {}), **job})

    def update_job(self, run_id: str, key: str, **fields: Any) -> None:
        self.jobs[run_id][key].update(fields)

    def get_jobs(self, run_id: str) -> list[dict[str, Any]]:
        return sorted(self.jobs[run_id].values(), key=lambda j: int(j["seq"]))

    def add_results_many(self, run_id: str, job_key: str,
                         groups: list[tuple[GroupResult, dict[str, Any]]]) -> None:
        for group, where in groups:
            self.add_results(run_id, job_key, group, **where)

    def add_results(self, run_id: str, job_key: str, group: GroupResult, *, workload: str, target: str,
                    host: str, repeat: int = 1) -> None:
        job = self.jobs[run_id].get(job_key, {})
        for d in group.directions:
            self.results[run_id].append(StoredResult(
                run_id=run_id, job_key=job_key, workload=workload, target=target, host=host,
                engine=group.engine, engine_version=group.engine_version, jobs=group.jobs, result=d,
                errors=list(group.errors), notes=list(group.notes), repeat=repeat,
                base_key=job.get("base_key", job_key), params=job.get("params", {}), testbed=job.get("testbed"),
                stop=group.stop))

    def get_results(self, run_id: str) -> list[StoredResult]:
        return list(self.results[run_id])

    def result_keys(self, run_id: str) -> set[str]:
        return {r.job_key for r in self.results[run_id]}

    def complete_keys(self, run_id: str) -> set[str]:
        jobs = self.jobs[run_id]
        return {r.job_key for r in self.results[run_id] if r.host == jobs.get(r.job_key, {}).get("host")}

    def drop_results(self, run_id: str, job_key: str) -> None:
        self.results[run_id] = [r for r in self.results[run_id] if r.job_key != job_key]

    def add_segment(self, run_id: str, job_key: str, number: int, *, seconds: int, started: str, finished: str,
                    groups: list[dict[str, Any]]) -> None:
        kept = [s for s in self.kept_segments.get(run_id, []) if (s["job_key"], s["number"]) != (job_key, number)]
        self.kept_segments[run_id] = [*kept, {"run_id": run_id, "job_key": job_key, "number": number,
                                              "seconds": seconds, "started": started, "finished": finished,
                                              "groups": groups}]

    def segments(self, run_id: str, job_key: str) -> list[dict[str, Any]]:
        return sorted((s for s in self.kept_segments.get(run_id, []) if s["job_key"] == job_key),
                      key=lambda s: int(s["number"]))

    def run_artifacts(self, run_id: str) -> Path:
        path = self.root / run_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    def keep_artifacts(self, run_id: str, folder: Path | None = None) -> int:
        """Raw outputs in memory's temporary folder are read from there."""
        return 0
