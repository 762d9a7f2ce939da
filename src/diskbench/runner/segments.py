"""A ``stop:`` job on an engine that cannot end a job early: short runs until the answer is known.

The job runs segment after segment (``engines/segments.py`` says how long each is and why), each
one engine run of its own inside the unit: rendered, run, parsed, its files set aside in
``segment-NN/`` (the raw output gzip'd) and stored (``SegmentLog``) the moment it is parsed, then
handed to the stop rule as one interval. It stops after the segment that makes the rule
confident, or once the segments add up to ``max``; the unit's result is the engine's merge of all
of them, with the rule's decision on it as a fio job's.

A run that is interrupted keeps its segments in the store: ``resume`` runs the unit again, and it
goes on from them (the rule sees every segment measured so far; the first segment of the new
attempt warms up again, as the first did).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..attribution.stop_rule import Watcher
from ..engines.base import Engine, Place
from ..engines.segments import Segments, lengths
from ..executors.base import Executor
from ..model import DirectionResult, GroupResult, Latency, Series
from ..plan import Unit
from ..store import now_iso
from .progress import JobTracker
from .recorder import Recorder
from .unit import run_engine, set_run_aside


@dataclass
class SegmentLog:
    """Where a run's segments are kept: the store (or memory) of the run."""

    store: Recorder
    run_id: str

    def add(self, job: Unit, number: int, seconds: int, started: str, groups: list[GroupResult]) -> None:
        self.store.add_segment(self.run_id, job.key, number, seconds=seconds, started=started, finished=now_iso(),
                               groups=[group_json(g) for g in groups])

    def earlier(self, job: Unit) -> list[tuple[int, list[GroupResult]]]:
        """The segments an earlier attempt of the run stored for ``job``: (seconds asked, groups)."""
        return [(int(s["seconds"]), [group_from_json(g) for g in s["groups"]])
                for s in self.store.segments(self.run_id, job.key)]


@dataclass
class Segmented:
    """How a segmented job ended: the last segment's exit code, the merged result (empty when no
    segment gave one), why it failed (None: it did not) and how many segments it took."""

    rc: int
    groups: list[GroupResult]
    message: str | None
    count: int


def run_segments(ex: Executor, engine: Engine, segments: Segments, job: Unit, places: list[Place], art: Path,
                 tracker: JobTracker, watcher: Watcher, log: SegmentLog, line: Callable[[str], None], label: str,
                 stopped: Callable[[], bool]) -> Segmented:
    """Run ``job`` segment by segment until ``watcher`` is confident or ``max`` is reached."""
    parts: list[list[GroupResult]] = []
    asked = 0
    for seconds, groups in log.earlier(job):
        parts.append(groups)
        asked += seconds
        watcher.add(segments.sample(groups))
    if parts:
        line(f"{label}: going on from {len(parts)} segment(s) an earlier attempt measured")
    plan = lengths(watcher.rule)
    total = sum(plan)
    rc, first = 0, True
    done = bool(parts) and bool(watcher.judge().reason)
    while asked < total and not done:
        number, seconds = len(parts) + 1, min(plan[0], total - asked)
        at = [Place(segments.workload(p.workload, seconds, first=first), p.target_label, p.directory, p.filename)
              for p in places]
        rendered = engine.render(job, at, purpose="measure")
        started = now_iso()
        rc = run_engine(ex, engine, job, rendered, art, tracker)
        if stopped():  # Ctrl-C: the unit is interrupted; the stored segments stay for resume
            return Segmented(rc, [], None, len(parts))
        groups, message = engine.outcome(art, rc)
        folder = set_run_aside(art, engine, rendered, f"segment-{number:02d}")
        if message is not None:
            return Segmented(rc, [], f"segment {number}: {message}; see {folder}", len(parts))
        log.add(job, number, seconds, started, groups)
        parts.append(groups)
        asked += seconds
        first = False
        watcher.add(segments.sample(groups))
        done = bool(watcher.judge().reason)
        line(f"{label}: segment {number} ({seconds} s): " + _rates(groups))
    return Segmented(rc, segments.merge(parts) if parts else [], None if parts else "no segment ran", len(parts))


def _rates(groups: list[GroupResult]) -> str:
    return "; ".join(f"{d.direction} {d.iops:,.0f} IOPS" for g in groups for d in g.directions)


def group_json(g: GroupResult) -> dict[str, Any]:
    """A parsed group as a segment's row keeps it (everything the merge reads)."""
    return {"name": g.name, "job_names": g.job_names, "jobs": g.jobs, "engine": g.engine,
            "engine_version": g.engine_version, "hosts": g.hosts, "errors": g.errors, "notes": g.notes,
            "declared": g.declared, "cpu_pct": g.cpu_pct,
            "directions": [{"direction": d.direction, "iops": d.iops, "bw_bytes_per_s": d.bw_bytes_per_s,
                            "ios": d.ios, "io_bytes": d.io_bytes, "runtime_s": d.runtime_s,
                            "clat": d.clat.to_json() if d.clat else None,
                            "series": d.series.to_json() if d.series else None, "warnings": d.warnings}
                           for d in g.directions]}


def group_from_json(data: dict[str, Any]) -> GroupResult:
    """A group as ``group_json`` kept it."""
    directions = [DirectionResult(direction=d["direction"], iops=d["iops"], bw_bytes_per_s=d["bw_bytes_per_s"],
                                  ios=d["ios"], io_bytes=d["io_bytes"], runtime_s=d["runtime_s"],
                                  clat=Latency.from_json(d["clat"]) if d["clat"] else None,
                                  series=Series.from_json(d["series"]) if d["series"] else None,
                                  warnings=list(d["warnings"])) for d in data["directions"]]
    return GroupResult(name=data["name"], job_names=list(data["job_names"]), jobs=data["jobs"],
                       engine=data["engine"], engine_version=data["engine_version"], directions=directions,
                       hosts=list(data["hosts"]), errors=list(data["errors"]), notes=list(data["notes"]),
                       declared=dict(data["declared"]), cpu_pct=data["cpu_pct"])
