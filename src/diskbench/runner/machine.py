"""One machine's part of a run: get it, learn what it is, prepare its targets, run its units.

Targets are prepared once per run and released at the end (unmounted, arrays stopped), also
when a unit fails; the host's workspace is removed and the connection closed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import registry
from ..engines.base import Engine, Place
from ..errors import DiskbenchError, ExecutionError
from ..executors.base import Executor
from ..model import GroupResult
from ..plan import LOCAL, Plan, PlannedJob
from ..platforms.base import Journal, Platform, Prepared, Preparer
from ..profile import writes
from ..providers.base import ProviderRun
from ..store import now_iso
from ..store.raw import compress
from ..units import human_bytes
from .attribute import Attributor
from .leftovers import journal, laid_out, recover
from .options import RunOptions, RunOutcome
from .recorder import unit_dir
from .testbed import testbed_key
from .unit import data_passes, drain_burst, run_engine, steady_rounds, summary

if TYPE_CHECKING:
    from ..attribution.drain import Verdict
    from ..attribution.limit import Limit
    from ..attribution.steady_state import SteadyState
    from ..executors.hostkeys import HostKeyTrust
    from ..profile.targets import TargetModel
    from .runner import Runner


class MachineWork:
    def __init__(self, runner: Runner, run_id: str, jobs: list[PlannedJob], plan: Plan, options: RunOptions,
                 total: int, outcome: RunOutcome) -> None:
        self.runner, self.run_id, self.jobs, self.plan = runner, run_id, jobs, plan
        self.options, self.total, self.outcome = options, total, outcome
        self.machine = jobs[0].machine
        self.store = runner.store
        self.ui = runner.ui
        self.prepared: dict[str, Prepared] = {}
        self.versions: dict[str, str | None] = {}
        self._target_facts: dict[str, dict[str, Any]] = {}
        self.laid_out: set[str] = set()  # targets whose files an engine has laid out this run
        self.before: dict[str, dict[str, Any]] = {}  # directory targets: the journal's "files" entry (detail)
        self.files_entry: dict[str, int] = {}
        self.workspace_entry = 0
        self.journal = Journal()
        self.prun: ProviderRun | None = None
        self.attributor = Attributor(self._limits)

    def _limits(self, target: TargetModel) -> list[Limit]:
        """What the cloud told the run of the target's limits, else the provider's tables."""
        entry = self.jobs[0].entry
        told = self.prun.limits(entry, target) if self.prun is not None else None
        return told if told is not None else registry.providers.get(self.jobs[0].provider).limits(entry, target)

    def acquire(self, prun: ProviderRun, trust: HostKeyTrust | None) -> Executor:
        self.prun = prun
        if self.jobs[0].provider == LOCAL:
            return self.runner.local_executor()
        assert trust is not None
        ex, first = prun.acquire(self.jobs[0], trust)
        self.jobs = [replace(j, host=first.host) for j in self.jobs]
        return ex

    def run(self, ex: Executor) -> None:
        platform = registry.platforms.get(ex.platform)
        self._ex, self._platform = ex, platform
        self.journal = journal(self.store, self.run_id, self.machine)
        try:
            self._learn(ex, platform)
            self._recover(ex, platform)
            root = ex.workspace_root(make=True)
            if root is not None:  # written down: a killed run's engines and files there can be found
                self.workspace_entry = self.journal.made("workspace", root)
            preparer = self._preparer(ex, platform)
            for index, job in enumerate(self.jobs):
                if self.runner.stopped:
                    return
                places = self._places(job, self.jobs[index:], preparer)
                if places is None:
                    continue
                ok = self._unit(ex, platform, job, places)
                self.runner.tally(self.outcome, ok)
        except DiskbenchError as exc:
            self.runner.fail_unfinished(self.run_id, self.jobs, exc, self.outcome)
        finally:
            try:
                self._remove_laid_out(ex, platform)
            except DiskbenchError as exc:  # never in the way of releasing the targets
                self.ui.line(f"{self.machine}: could not remove the data files it laid out: {exc}")
            for where in self.prepared.values():
                where.release()
            root = ex.workspace_root()
            if root is not None:  # a remote host: its copies of job files and outputs
                platform.remove_workspace(ex, root)
                self.journal.undone(self.workspace_entry)
            ex.close()

    # --- before the units -------------------------------------------------------------------
    def _recover(self, ex: Executor, platform: Platform) -> None:
        """What an earlier, killed attempt of this run left open on this host, undone before this
        attempt prepares anything (its mount, its array, its files are its own)."""
        entries = [e for e in self.journal.earlier if not e["released"]]
        if not entries:
            return
        self.ui.line(f"{self.machine}: undoing what an earlier attempt of this run left "
                     f"({', '.join(dict.fromkeys(e['kind'] for e in entries))})")
        folder = self.store.run_artifacts(self.run_id) if self.jobs[0].provider == LOCAL else None
        left = recover(ex, platform, entries, self.store, self.ui.line, folder)
        if left:
            what = ", ".join(f"{e['kind']} {e['what']}" for e in left)
            raise ExecutionError(f"{self.machine}: an earlier attempt of this run left {what}, which could not be "
                                 "undone", hint="see the lines above; `diskbench cleanup --provider hosts` retries")

    def _learn(self, ex: Executor, platform: Platform) -> None:
        """Engines present (installed where allowed), and the host's facts recorded."""
        host = self.jobs[0].host
        facts = platform.host_facts(ex)
        for name in dict.fromkeys(j.engine for j in self.jobs):
            engine = registry.engines.get(name)
            known = self.runner.local_versions.get(name) if self.jobs[0].provider == LOCAL else None
            version = known or engine.ensure(ex, platform, install=host.install_fio if host else False,
                                             host=self.machine, line=self.ui.line)
            self.versions[name] = version
            facts[f"{name}_version"] = version
        for provider in registry.providers.all():
            facts.update(provider.host_facts(ex))
        self.store.add_host_facts(self.run_id, self.machine, facts)
        self.attributor.cpus = facts.get("cpus") if isinstance(facts.get("cpus"), int) else None

    def _preparer(self, ex: Executor, platform: Platform) -> Preparer:
        host = self.jobs[0].host
        allowed = self.plan.destroy_data_on + (host.destroy_data_on if host else [])
        base = self.options.scratch_base if self.jobs[0].provider == LOCAL else None
        devices = registry.providers.get(self.jobs[0].provider).device_map()
        known = self.runner.provider_runs[self.jobs[0].provider].device_map(self.machine)
        if known is not None:
            devices = known.merged(devices)
        return platform.preparer(ex, devices=devices, allowed=allowed, name=self.machine, run_id=self.run_id,
                                 scratch_base=base or platform.default_scratch_base(ex), line=self.ui.line,
                                 journal=self.journal)

    def _places(self, job: PlannedJob, rest: list[PlannedJob], preparer: Preparer) -> list[Place] | None:
        """The job's targets prepared (once per run); None when one cannot be (its units fail)."""
        places = []
        for part in job.parts:
            label = part.target_label
            if label not in self.prepared:
                uses = [j for j in rest if label in [p.target_label for p in j.parts]]
                write = any(writes(p.workload.rw) for j in uses for p in j.parts if p.target_label == label)
                try:
                    self.prepared[label] = preparer.prepare(part.target, write)
                    directory = self.prepared[label].directory
                    if getattr(part.target, "dir", None) and directory:
                        self._files_before(label, directory, uses)
                except DiskbenchError as exc:
                    self.runner.fail(self.run_id, uses, exc, self.outcome)
                    self.prepared[label] = Prepared()  # nothing to run on
            where = self.prepared[label]
            if not where.usable:
                return None
            places.append(Place(part.workload, label, where.directory, where.filename))
        return places

    def _files_before(self, label: str, directory: str, uses: list[PlannedJob]) -> None:
        """A user's folder: what is in it before the engines lay out files, written down (so a killed
        run's data files can be told from the user's own and removed later)."""
        before = self._platform.list_files(self._ex, directory)
        if before is None:
            return
        detail = {"before": sorted(before), "engines": sorted({j.engine for j in uses}),
                  "workloads": sorted({p.workload.name for j in uses for p in j.parts if p.target_label == label})}
        self.before[label] = detail
        self.files_entry[label] = self.journal.made("files", directory, **detail)

    # --- one unit ---------------------------------------------------------------------------
    def _facts_of(self, ex: Executor, platform: Platform, path: str) -> dict[str, Any]:
        """Filesystem and disks of a target, looked up once per run (they do not change)."""
        if path not in self._target_facts:
            self._target_facts[path] = platform.target_facts(ex, path)
        return self._target_facts[path]

    def _unit(self, ex: Executor, platform: Platform, job: PlannedJob, places: list[Place]) -> bool:
        engine = registry.engines.get(job.engine)
        art = unit_dir(self.store, self.run_id, job)
        art.mkdir(parents=True, exist_ok=True)
        rendered = engine.render(job, places, purpose="measure")
        first = places[0]
        self.store.update_job(
            self.run_id, job.key, status="running", started=now_iso(), rendered=rendered, message=None,
            facts=self._facts_of(ex, platform, first.directory or first.filename or "/"),
            testbed=testbed_key(job, engine.testbed_text(rendered), engine.name, self.versions.get(engine.name)))
        label = f"{job.workload.name} on {job.target_label}" + ("" if job.machine == LOCAL else f" @ {job.machine}")
        index = self.runner.next_index()
        data_passes(ex, engine, job, places, art, label, self.ui.line, self.laid_out)
        drained = drain_burst(ex, engine, job, places, art, label, self.ui.line, lambda: self.runner.stopped,
                              self._unit_limits(job)) if job.workload.drain_burst else None
        state, rc = None, 130
        with self.ui.job(index, self.total, label, job.expected_s, 0.0) as tracker:
            if self.runner.stopped:  # while draining: the measured run never starts
                self.ui.line(f"{label}: stopped before measuring")
            elif job.workload.protocol == "steady_state":
                rc, state = steady_rounds(ex, engine, job, rendered, art, tracker, self.ui.line, label,
                                          lambda: self.runner.stopped)
            else:
                rc = run_engine(ex, engine, job, rendered, art, tracker)
        if self.runner.stopped:
            self.store.update_job(self.run_id, job.key, status="interrupted", finished=now_iso(), exit_code=rc)
            return False
        groups, message = engine.outcome(art, rc)
        stderr = art / "stderr.txt"
        self.attributor.unit(job, places, groups, stderr.read_text(errors="replace") if stderr.exists() else "")
        if state is not None:
            _steady_verdict(groups, state)
        if drained is not None:
            _drain_verdict(groups, drained)
        self._store(job, engine, groups, art)
        compress(art / engine.output_name)  # committed: the raw output is kept gzip'd
        ok = message is None
        self.store.update_job(self.run_id, job.key, status="done" if ok else "failed",
                              finished=now_iso(), exit_code=rc, message=message)
        if ok:
            self.ui.job_done(tracker, "done, " + summary(groups))
        else:
            self.ui.line(f"{tracker.label}: FAILED: {message}")
            with self.runner._lock:
                self.outcome.messages.append(f"{label}: {message}")
        return ok

    def _unit_limits(self, job: PlannedJob) -> list[Limit] | None:
        """The caps of the unit's targets (None when the provider cannot tell)."""
        try:
            return [lim for part in job.parts for lim in self._limits(part.target)]
        except DiskbenchError:
            return None

    def _store(self, job: PlannedJob, engine: Engine, groups: list[GroupResult], art: Any) -> None:
        """Commit the unit's results: one per group, and for sections one per job plus their merge."""
        if not job.sections:
            for group in groups:
                self.store.add_results(self.run_id, job.key, group, workload=job.workload.name,
                                       target=job.target_label, host=job.machine, repeat=job.repeat)
            return
        targets = {s.workload.name: s.target_label for s in job.sections}
        for group in groups:
            name = group.job_names[0] if group.job_names else group.name
            self.store.add_results(self.run_id, job.key, group, workload=f"{job.workload.name}/{name}",
                                   target=targets.get(name, job.target_label), host=job.machine, repeat=job.repeat)
        combined = engine.combine(art / engine.output_name) if len(groups) > 1 else None
        if combined is not None:
            self.store.add_results(self.run_id, job.key, combined, workload=job.workload.name,
                                   target=job.target_label, host=job.machine, repeat=job.repeat)

    # --- after the units --------------------------------------------------------------------
    def _remove_laid_out(self, ex: Executor, platform: Platform) -> None:
        """Data files the engine laid out in a user's directory: removed (or kept with --keep-files,
        and said so). Only files that were not there before the run and carry the engine's name
        for one of its workloads; a real profile leaves size x numjobs behind per workload."""
        for label, detail in self.before.items():
            directory = self.prepared[label].directory
            after = platform.list_files(ex, directory) if directory else None
            if after is None or directory is None:
                continue
            new = laid_out(after, detail)
            if new:
                size = human_bytes(sum(after[n] for n in new))
                if self.options.keep_files:
                    self.ui.line(f"{self.machine}: kept {len(new)} data file(s), {size}, in {directory} (--keep-files)")
                else:
                    platform.remove_files(ex, directory, new)
                    self.ui.line(f"{self.machine}: removed {len(new)} data file(s), {size}, that this run laid out "
                                 f"in {directory} (--keep-files keeps them)")
            self.journal.undone(self.files_entry[label])


def _steady_verdict(groups: list[GroupResult], state: SteadyState) -> None:
    """The steady-state determination goes with the result (the last round's): a note when achieved,
    a warning on every figure when not, so the last round never passes for a steady one."""
    for g in groups:
        g.notes.append(state.text())
        if not state.achieved:
            for d in g.directions:
                d.warnings.append(f"{state.text()}; precondition the target, or run longer rounds")


def _drain_verdict(groups: list[GroupResult], verdict: Verdict) -> None:
    """How draining ended goes with the result: a note when the burst was spent, a warning on every
    figure when the time allowed ran out first (the result may still be a burst)."""
    for g in groups:
        g.notes.append(f"burst drained before measuring: {verdict.why}" if verdict.drained
                       else f"drain_burst: {verdict.why}")
        if not verdict.drained:
            for d in g.directions:
                d.warnings.append(f"drain_burst: {verdict.why}")
