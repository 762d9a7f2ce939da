"""plan -> results: run each job through an Executor, parse it, and commit it at once.

The store sees every step (run created, job started, result committed, run finished), so an
interrupted run can be shown and resumed, and raw outputs are always kept beside it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from .errors import DiskbenchError, ExecutionError
from .executor import Executor, LocalExecutor
from .facts import host_facts, target_facts
from .model import GroupResult
from .parse import parse_fio_output
from .plan import Plan, PlannedJob, build_plan
from .profile import LoadedProfile, parse_profile
from .render import render_fio
from .store import Store, now_iso
from .ui import UI, JobProgress
from .units import human_bytes

FIO_ARGS = ["--output-format=json+", "--eta=always", "--eta-interval=1s"]
_PCT_RE = re.compile(r"\]\[(\d+(?:\.\d+)?)%\]")
_ETA_RE = re.compile(r"\[eta (?:(\d+)d:)?(?:(\d+)h:)?(\d+)m:(\d+)s\]")
_RATE_RE = re.compile(r"\]\[([rwt]=[^\]]*IOPS)\]")


class Interrupted(DiskbenchError):
    exit_code = 130


class FioStatus:
    """Turns fio's ``Jobs: 1 (f=1): [w(1)][45.5%][w=1MiB/s][w=256 IOPS][eta 00m:06s]`` into updates."""

    def __init__(self, progress: JobProgress) -> None:
        self.progress = progress
        self.buffer = ""

    def feed(self, text: str) -> None:
        self.buffer += text
        *lines, self.buffer = re.split(r"[\r\n]", self.buffer)
        for line in lines:
            self._line(line)

    def _line(self, line: str) -> None:
        if not line.startswith("Jobs:"):
            return
        pct = _PCT_RE.search(line)
        eta = _ETA_RE.search(line)
        rate = _RATE_RE.search(line)
        eta_s = None
        if eta:
            d, h, m, s = (int(x) if x else 0 for x in eta.groups())
            eta_s = float(((d * 24 + h) * 60 + m) * 60 + s)
        self.progress.update(float(pct.group(1)) if pct else None, eta_s,
                             rate.group(1) if rate else "")


@dataclass
class RunOptions:
    target_dir: str | None = None
    scratch_base: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"target_dir": self.target_dir, "scratch_base": self.scratch_base}


@dataclass
class RunOutcome:
    run_id: str
    status: str
    done: int
    failed: int
    messages: list[str] = field(default_factory=list)


class Runner:
    def __init__(self, store: Store, ui: UI, executor: Executor | None = None) -> None:
        self.store = store
        self.ui = ui
        self.ex = executor or LocalExecutor()

    def start(self, plan: Plan, options: RunOptions) -> RunOutcome:
        plan.require_local()
        self._require_fio()
        loaded = plan.profile
        run_id = self.store.create_run(
            profile=loaded.profile.name, profile_path=loaded.path, profile_text=loaded.text,
            options=options.to_json(),
        )
        self.store.add_jobs(run_id, [
            {"key": j.key, "workload": j.workload.name, "target": j.target_label, "host": j.machine}
            for j in plan.jobs
        ])
        return self._execute(run_id, plan, plan.jobs, options)

    def resume(self, run_ref: str) -> RunOutcome:
        run = self.store.get_run(run_ref)
        if run["origin"] != "run" or not run["profile_text"]:
            raise DiskbenchError(f"run {run['id']} was imported, not run; there is nothing to resume")
        options = RunOptions(**run["options"])
        profile = parse_profile(run["profile_text"], run["profile_path"] or run["profile"])
        loaded = LoadedProfile(profile=profile, path=run["profile_path"] or "", text=run["profile_text"])
        plan = build_plan(loaded, target_dir=options.target_dir)
        plan.require_local()
        done = self.store.result_keys(run["id"])
        todo = [j for j in plan.jobs if j.key not in done]
        if not todo:
            self.ui.line(f"run {run['id']}: every job has a result; nothing to resume")
        self._require_fio()
        self.store.update_run(run["id"], status="running", finished=None, pid=os.getpid())
        return self._execute(run["id"], plan, todo, options)

    def _require_fio(self) -> None:
        if not self.ex.which("fio"):
            raise ExecutionError("fio is not installed on this machine",
                                 hint="install it with `apt-get install -y fio`, then run again")

    # -------------------------------------------------------------------------------------
    def _execute(self, run_id: str, plan: Plan, todo: list[PlannedJob],
                 options: RunOptions) -> RunOutcome:
        facts = host_facts(self.ex)
        self.store.update_run(run_id, facts=facts)
        self.ui.line(f"run {run_id}: profile {plan.profile.profile.name}, {len(todo)} job(s) on "
                     f"{facts.get('hostname', self.ex.name)}, fio {facts.get('fio_version')}")
        scratch: dict[str, str] = {}
        outcome = RunOutcome(run_id, "running", 0, 0)
        current: PlannedJob | None = None
        try:
            remaining = sum(j.expected_s for j in todo)
            for index, job in enumerate(todo, 1):
                current = job
                directory = self._directory(job, scratch, options)
                ok = self._run_job(run_id, job, directory, index, len(todo), remaining, outcome)
                outcome.done += ok
                outcome.failed += not ok
                remaining -= job.expected_s
                current = None
        except KeyboardInterrupt:
            if current is not None:
                self.store.update_job(run_id, current.key, status="interrupted", finished=now_iso())
            self.store.finish_run(run_id, "interrupted")
            raise Interrupted(
                f"interrupted: run {run_id} keeps its {outcome.done} finished job(s)",
                hint=f"`diskbench resume {run_id}` runs the rest",
            ) from None
        except BaseException:
            self.store.finish_run(run_id, self._status(run_id))
            raise
        finally:
            for path in scratch.values():
                self.ex.remove_tree(path)
        outcome.status = self._status(run_id)
        self.store.finish_run(run_id, outcome.status)
        return outcome

    def _status(self, run_id: str) -> str:
        jobs = self.store.get_jobs(run_id)
        done = sum(j["status"] == "done" for j in jobs)
        if done == len(jobs):
            return "completed"
        return "failed" if done == 0 else "partial"

    def _directory(self, job: PlannedJob, scratch: dict[str, str], options: RunOptions) -> str:
        target = job.target
        if target.kind == "scratch":
            if "scratch" not in scratch:
                base = options.scratch_base or platformdirs.user_cache_dir("diskbench")
                scratch["scratch"] = self.ex.make_scratch_dir(base)
            return scratch["scratch"]
        if target.kind == "dir" and target.dir:
            if not self.ex.is_dir(target.dir):
                raise ExecutionError(f"target directory {target.dir} does not exist",
                                     hint="create it, or pass an existing directory to --target")
            return target.dir
        raise ExecutionError(f"target {target.label} needs the SSH host support of a later diskbench")

    def _run_job(self, run_id: str, job: PlannedJob, directory: str, index: int, total: int,
                 remaining: float, outcome: RunOutcome) -> bool:
        art = self.store.run_artifacts(run_id) / f"{job.seq:02d}-{job.slug}"
        art.mkdir(parents=True, exist_ok=True)
        rendered = render_fio(job, directory)
        (art / "job.fio").write_text(rendered, encoding="utf-8")
        work = self.ex.workspace(art)
        jobfile, output = f"{work}/job.fio", f"{work}/output.json"
        self.ex.write_text(jobfile, rendered)
        self.store.update_job(run_id, job.key, status="running", started=now_iso(), rendered=rendered,
                              facts=target_facts(self.ex, directory), message=None)
        label = f"{job.workload.name} on {job.target_label}"
        with self.ui.job(index, total, label, job.expected_s, remaining) as tracker:
            status = FioStatus(tracker)
            rc = self.ex.stream(["fio", *FIO_ARGS, f"--output={output}", jobfile],
                                on_output=status.feed, timeout=job.expected_s * 3 + 120,
                                stdout_path=art / "stdout.txt", stderr_path=art / "stderr.txt")
        (art / "exit_code").write_text(f"{rc}\n")
        self.ex.fetch(output, art / "output.json")
        groups, message = self._parse(art, rc)
        for group in groups:
            self.store.add_results(run_id, job.key, group, workload=job.workload.name,
                                   target=job.target_label, host=job.machine)
        ok = message is None
        self.store.update_job(run_id, job.key, status="done" if ok else "failed",
                              finished=now_iso(), exit_code=rc, message=message)
        if ok:
            self.ui.job_done(tracker, "done, " + _summary(groups))
        else:
            self.ui.line(f"{tracker.label}: FAILED: {message}")
            outcome.messages.append(f"{label}: {message}")
        return ok

    def _parse(self, art: Path, rc: int) -> tuple[list[GroupResult], str | None]:
        out_file = art / "output.json"
        text = out_file.read_text(errors="replace") if out_file.exists() else ""
        stderr = (art / "stderr.txt").read_text(errors="replace")
        try:
            groups = parse_fio_output(text, source=str(out_file))
        except DiskbenchError as exc:
            return [], _fio_failure(rc, stderr) or exc.message
        errors = [e for g in groups for e in g.errors]
        if errors:
            return groups, "; ".join(errors) + _stderr_hint(stderr)
        if rc != 0:
            return groups, _fio_failure(rc, stderr) or f"fio exited with code {rc}"
        return groups, None


def _fio_failure(rc: int, stderr: str) -> str | None:
    if rc == 0:
        return None
    if rc < 0 or rc == 137:
        return f"fio did not finish in time and was stopped (exit {rc})"
    return f"fio exited with code {rc}{_stderr_hint(stderr)}"


def _stderr_hint(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return f": {lines[0]}" if lines else ""


def _summary(groups: list[GroupResult]) -> str:
    parts = []
    for g in groups:
        for d in g.directions:
            p99 = d.clat.percentiles.get("p99") if d.clat else None
            lat = f", p99 {p99:.0f} µs" if p99 is not None else ""
            parts.append(f"{d.direction} {d.iops:,.0f} IOPS {human_bytes(d.bw_bytes_per_s)}/s{lat}")
    return "; ".join(parts)
