"""plan -> results: the runner orchestrates, and only that.

It asks the plan for units of work and the providers for their part of the run, gives each
machine (or client group) a thread of its own with the run's shared state (``RunState``, never
the runner), and commits the run's start and end to the recorder; a machine's part prepares
its targets and sends each unit down the one unit path (``pipeline``). Machines run in
parallel, the units of one machine one after another; one failing machine does not stop the
others. An interrupted run can be shown and resumed, and raw outputs are always kept.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from .. import registry
from ..errors import DiskbenchError, Interrupted, Unavailable, UsageError
from ..executors.base import Executor
from ..plan import LOCAL, Plan, Unit
from ..planning import plan_for
from ..profile import LoadedProfile, parse_profile
from ..profile.targets import NfsTarget
from ..providers.base import MachineUse, ProviderRun, RunContext
from ..reports.gate import Policy
from ..store import new_run_id
from ..store.lock import heartbeat
from ..units import dollars
from .auto_repeats import Repeater
from .group import GroupWork
from .leftovers import stop_local_engines
from .machine import MachineWork
from .options import RunOptions, RunOutcome
from .progress import NullProgress, Progress
from .recorder import Recorder, unit_dir
from .shared_volume import SharedVolume
from .state import RunState

if TYPE_CHECKING:
    from ..executors.hostkeys import HostKeyTrust

__all__ = ["Interrupted", "RunOptions", "RunOutcome", "Runner"]

NOT_RUN = "not run"  # no machine was reached: the run was forgotten


class Runner:
    def __init__(self, store: Recorder, ui: Progress | None = None, executor: Executor | None = None) -> None:
        self.store = store
        self.ui: Progress = ui or NullProgress()
        self.local = executor
        self.provider_runs: dict[str, ProviderRun] = {}
        self.local_versions: dict[str, str | None] = {}  # engines found on this machine by _check_local

    # --- entry points -----------------------------------------------------------------------
    def start(self, plan: Plan, options: RunOptions) -> RunOutcome:
        policy = _policy(plan, options)  # a policy that does not load stops the run before anything exists
        self._check_local(plan.units, options)
        loaded = plan.profile
        run_id = new_run_id()
        # Log in and pre-flight against the clouds before anything is recorded: an unreachable
        # cloud or a quota problem leaves no failed run behind.
        self._start_providers(run_id, plan, options)
        with self._torn_down_on_error(options):
            facts = self._begin_providers(plan.units)
            self.store.create_run(profile=loaded.profile.name, profile_path=loaded.path,
                                  profile_text=loaded.text, options=options.to_json(), run_id=run_id, facts=facts)
            self.store.add_jobs(run_id, [
                {"key": j.key, "workload": j.workload.name, "target": j.target_label, "host": j.machine,
                 "base_key": j.base_key, "repeat": j.repeat, "params": j.params()}
                for j in plan.units
            ])
        repeater = None if plan.auto is None or policy is None else Repeater(self.store, run_id, plan.auto, policy,
                                                                             self.ui)
        return self._execute(run_id, plan, plan.units, options, fresh=True, repeater=repeater)

    def resume(self, run_ref: str, options: RunOptions | None = None) -> RunOutcome:
        run = self.store.get_run(run_ref)
        if run["origin"] != "run" or not run["profile_text"]:
            raise DiskbenchError(f"run {run['id']} was imported, not run; there is nothing to resume")
        known = {f.name for f in fields(RunOptions)} - {"accept_new_host_key", "keep", "allow_exec"}
        saved = RunOptions(**{k: v for k, v in run["options"].items() if k in known})
        if options is not None:
            saved.accept_new_host_key, saved.allow_exec = options.accept_new_host_key, options.allow_exec
        profile = parse_profile(run["profile_text"], run["profile_path"] or run["profile"])
        loaded = LoadedProfile(profile=profile, path=run["profile_path"] or "", text=run["profile_text"])
        plan = plan_for(loaded, saved)
        policy = _policy(plan, saved)
        self.store.lock_run(run["id"])  # before anything of the run is touched: one process at a time
        repeater = None
        try:
            done = self.store.complete_keys(run["id"])
            units = plan.units + self._earlier_rounds(run["id"], plan)
            todo = [j for j in units if j.key not in done]
            if any(j.provider == LOCAL for j in todo):  # a killed attempt's engine may still be running
                stop_local_engines(self.store.run_artifacts(run["id"]), self.ui.line)
            self._set_aside(run["id"], todo)
            if plan.auto is not None and policy is not None:
                repeater = Repeater(self.store, run["id"], plan.auto, policy, self.ui)
                repeater.restore(run["facts"])
                todo += self._next_rounds(repeater, units, todo)
            if not todo:
                self.ui.line(f"run {run['id']}: every job has a result; nothing to resume")
            self._check_local(todo, saved)
            self._start_providers(run["id"], plan, saved)
            with self._torn_down_on_error(saved):
                facts = self._begin_providers(todo)
                if facts:
                    self.store.merge_facts(run["id"], facts)
        except BaseException:
            self.store.finish_run(run["id"], "interrupted")  # let go: it can be resumed again
            raise
        return self._execute(run["id"], plan, todo, saved, repeater=repeater)

    def _earlier_rounds(self, run_id: str, plan: Plan) -> list[Unit]:
        """The units automatic repeats added to the run after the plan's (recorded in the store before
        they ran), made again from the plan's unit of the same job."""
        if plan.auto is None:
            return []
        planned = {u.key for u in plan.units}
        template = {u.base_key: u for u in plan.units}
        out = []
        for row in self.store.get_jobs(run_id):
            base = row["base_key"] or row["key"]
            if row["key"] not in planned and base in template:
                out.append(replace(template[base], seq=int(row["seq"]), repeat=int(row["repeat"])))
        return out

    @staticmethod
    def _next_rounds(repeater: Repeater, units: list[Unit], todo: list[Unit]) -> list[Unit]:
        """Resuming: the next round of each job whose repeats so far all ran but that was not decided
        (the earlier attempt stopped in between)."""
        waiting, open_ = {u.base_key for u in todo}, set(repeater.open_jobs(units))
        ready = [u for u in units if u.base_key in open_ - waiting]
        return repeater.next_round(ready) if ready else []

    def _set_aside(self, run_id: str, todo: list[Unit]) -> None:
        """Units that run again keep what their earlier attempt wrote: its folder moves to
        ``NN-job.attempt-N`` (an interrupted fio still wrote what it measured; ``import`` reads it),
        and a partial unit's rows (a client lost mid-job) make way for the whole unit's."""
        partial = self.store.result_keys(run_id)
        for job in todo:
            art = unit_dir(self.store, run_id, job)
            earlier = art.exists() and any(art.iterdir())
            if not earlier and job.key not in partial:
                continue
            what = "partial" if job.key in partial else "interrupted or failed"
            if job.key in partial:
                self.store.drop_results(run_id, job.key)
            kept = ""
            if earlier:
                folder = next(f for i in range(1, 1000) if not (f := art.with_name(f"{art.name}.attempt-{i}")).exists())
                art.rename(folder)
                kept = f" (its files are kept in {folder})"
            self.ui.line(f"{job.workload.name} on {job.target_label} @ {job.machine}: the earlier attempt was "
                         f"{what}; it runs again{kept}")

    @contextmanager
    def _torn_down_on_error(self, options: RunOptions) -> Iterator[None]:
        """Whatever providers created before the run is under way goes again if starting fails."""
        try:
            yield
        except BaseException:
            self._teardown(options)
            raise

    def _check_local(self, jobs: list[Unit], options: RunOptions) -> None:
        """This machine's engine and target directories, checked before a run is recorded."""
        local = [j for j in jobs if j.provider == LOCAL]
        if not local:
            return
        ex = self.local_executor()
        platform = registry.platforms.get(ex.platform)
        for name in dict.fromkeys(j.engine for j in local):
            engine = registry.engines.get(name)
            self.local_versions[name] = version = engine.version(ex)  # asked once per run
            if not version:
                raise Unavailable(f"{engine.name} is not installed on this machine",
                                     hint=f"install it with `apt-get install -y {engine.name}`, then run again")
        for job in local:  # a typo in --target is caught before a run is recorded
            for part in job.jobs:
                path = str(part.target.value) if part.target.kind == "dir" else None
                if path and not platform.is_dir(ex, path):
                    raise UsageError(f"target directory {path} does not exist",
                                     hint="create it, or pass an existing directory to --target")

    def local_executor(self) -> Executor:
        if self.local is None:
            from ..executors.local import LocalExecutor

            self.local = LocalExecutor()
        return self.local

    def _start_providers(self, run_id: str, plan: Plan, options: RunOptions) -> None:
        ctx = RunContext(run_id, self.store.path.parent, self.ui.line, options.provider_options)
        for name in plan.providers():
            if name not in self.provider_runs:
                self.provider_runs[name] = registry.providers.get(name).start(ctx)

    # --- the run ----------------------------------------------------------------------------
    def _execute(self, run_id: str, plan: Plan, todo: list[Unit], options: RunOptions, *,
                 fresh: bool = False, repeater: Repeater | None = None) -> RunOutcome:
        """Every machine's part at once; ``fresh``: a new run on hosts, forgotten again when none
        could be reached (nothing ran: a record would only say "failed" and suggest a resume);
        ``repeater``: the rounds of automatic repeats each part asks for after its units."""
        outcome = RunOutcome(run_id, "running")
        by_machine: dict[str, list[Unit]] = {}
        for job in todo:
            by_machine.setdefault(job.machine, []).append(job)
        self.ui.line(f"run {run_id}: profile {plan.profile.profile.name}, {len(todo)} job(s) on "
                     f"{len(by_machine)} machine(s): {', '.join(by_machine)}")
        trust = self._trust(todo, options)
        if plan.auto is not None:
            self.ui.line(f"automatic repeats: {plan.auto.minimum} of each job, then more while INCONCLUSIVE, "
                         f"up to {plan.auto.limit}")
        state = RunState(run_id, self.store, self.ui, len(todo), outcome, self.provider_runs)
        state.repeater = repeater
        state.shared = self._shared_volume(plan, todo)
        state.count_parts(list(by_machine.values()))
        # Only where reaching a machine is connecting to it: a cloud's failed creation has left
        # resources to account for, and its run stays on record with what became of each.
        fresh = fresh and not any(registry.providers.get(name).creates_machines for name in plan.providers())
        state.quiet_failures = fresh and len(by_machine) == 1
        try:
            with heartbeat(self.store, run_id), self.ui.session(), \
                    ThreadPoolExecutor(max_workers=max(1, len(by_machine))) as pool:
                futures = [pool.submit(self._part, state, jobs, plan, options, trust) for jobs in by_machine.values()]
                try:
                    pending = set(futures)
                    while pending:
                        _, pending = wait(pending, timeout=0.2)
                except KeyboardInterrupt:
                    self._interrupt(state)
                    self._teardown(options)  # at once: a cloud cancels what is still being created
                    wait(futures)
                    self.store.finish_run(run_id, "interrupted")
                    kept = sum(j["status"] == "done" for j in self.store.get_jobs(run_id))  # knee steps too
                    raise Interrupted(
                        f"interrupted: run {run_id} keeps its {kept} finished job(s)",
                        hint=f"`diskbench resume {run_id}` runs the rest") from None
                for future in futures:
                    future.result()  # re-raise what a machine thread could not handle
        except Interrupted:
            raise
        except KeyboardInterrupt:
            self.store.finish_run(run_id, "interrupted")
            raise Interrupted(f"interrupted: run {run_id}", hint=f"`diskbench resume {run_id}` runs the rest") from None
        except BaseException:
            self.store.finish_run(run_id)
            raise
        else:  # finished before teardown: a cloud that fails to delete does not leave the run "running"
            if fresh and state.nothing_ran:
                self._forget(run_id)
                outcome.status = NOT_RUN
                return outcome
            if trust is not None and trust.seen:
                self.store.update_run(run_id, options={**options.to_json(), "host_keys": trust.seen})
            outcome.status = self.store.finish_run(run_id)
        finally:
            self._teardown(options)
            self._account(run_id)
            if outcome.status == NOT_RUN:
                raise _not_run(outcome, len(by_machine))
        return outcome

    def _forget(self, run_id: str) -> None:
        """A run that reached no machine leaves no record: its row and its (empty) artifacts folder."""
        import shutil

        self.store.delete_run(run_id)
        shutil.rmtree(self.store.run_artifacts(run_id), ignore_errors=True)

    def _trust(self, todo: list[Unit], options: RunOptions) -> HostKeyTrust | None:
        """Known host keys, for runs that reach machines over SSH (a local run needs none)."""
        if all(j.provider == LOCAL for j in todo):
            return None
        from ..executors.hostkeys import HostKeyTrust

        return HostKeyTrust(known_hosts=options.known_hosts, accept_new=options.accept_new_host_key,
                            diskbench_known_hosts=self.store.path.parent / "known_hosts")

    def _begin_providers(self, todo: list[Unit]) -> dict[str, Any]:
        """Pre-flight and shared resources of each provider; what they learnt, for the run's facts
        (e.g. the sizes' published limits, so reports can set results against them)."""
        facts: dict[str, Any] = {}
        for name, prun in self.provider_runs.items():
            machines = list({j.machine: j.entry for u in todo for j in (u.clients or [u])
                             if j.provider == name and j.entry is not None}.values())
            if machines:
                prun.begin([m for m in machines if m is not None])
                facts.update({k: v for k, v in prun.facts().items() if v})
        return facts

    def _teardown(self, options: RunOptions) -> None:
        for prun in list(self.provider_runs.values()):
            if not prun.holds_resources:
                continue
            if options.keep:
                self.ui.warn(prun.keep_note())
                continue
            with _teardown_guard(self.ui):
                prun.teardown()

    def _interrupt(self, state: RunState) -> None:
        state.interrupt()
        for prun in self.provider_runs.values():
            prun.stopping.set()

    def _part(self, state: RunState, jobs: list[Unit], plan: Plan, options: RunOptions,
              trust: HostKeyTrust | None) -> None:
        """One machine's units, or one client group's (a profile's ``shared:``), on this thread; however
        it ends, its turn on the shared volume is over."""
        shared = plan.profile.profile.shared
        try:
            if jobs[0].clients and shared is not None:
                GroupWork(state, jobs, shared).run(trust)
                return
            local = self.local_executor() if jobs[0].provider == LOCAL else None
            MachineWork(state, jobs, plan, options, local=local, known=self.local_versions).run(trust)
        finally:
            if state.shared is not None:
                state.shared.done(jobs[0].machine)
            self._release(state, jobs, options)

    def _release(self, state: RunState, jobs: list[Unit], options: RunOptions) -> None:
        """The machines no other part uses given back at once (a cloud deletes their VMs), while other
        machines still run; not with --keep, nor after Ctrl-C (the teardown deletes everything)."""
        for provider, machine in state.part_done(jobs):
            prun = self.provider_runs.get(provider)
            if options.keep or state.stopped or prun is None or machine not in prun.used:
                continue
            try:
                prun.release(machine)
            except DiskbenchError as exc:  # the teardown at the end still deletes it
                self.ui.line(f"{machine}: could not be released now: {exc}")

    def _account(self, run_id: str) -> None:
        """What each machine a provider created was used for and cost: in the run's record (facts
        ``machine_use``) and, one line each, at the end of the run."""
        uses = [use for prun in self.provider_runs.values() for use in prun.used.values()]
        if not uses:
            return
        now = time.time()
        with contextlib.suppress(DiskbenchError):
            self.store.merge_facts(run_id, {"machine_use": [u.to_json(now) for u in uses]})
        for use in uses:
            self.ui.line(use_line(use, now))
        priced = [use.usd(now) for use in uses]
        money = "" if None in priced else f", {dollars(sum(p or 0.0 for p in priced))}"
        self.ui.line(f"VM-minutes: {sum(u.vm_minutes(now) for u in uses):.1f} in all{money}")

    def _shared_volume(self, plan: Plan, todo: list[Unit]) -> SharedVolume | None:
        """The run's shared volume: its export (a ``shared: target:``'s, or the volume its provider makes
        when a part first needs it) and the parts of this attempt that take turns on it."""
        shared = plan.profile.profile.shared
        if shared is None:
            return None
        turns = [part for part in plan.shared_turns() if any(j.machine == part for j in todo)]
        volume, target = shared.volume, shared.target

        def make() -> str:
            if volume is not None:
                return self.provider_runs[volume.provider].shared_volume(volume.spec)
            if isinstance(target, NfsTarget):
                return target.nfs
            raise Unavailable(f"the shared target {target.label if target else '?'} is no NFS export to mount")

        return SharedVolume(make, turns)


def _policy(plan: Plan, options: RunOptions) -> Policy | None:
    """The gate's policy automatic repeats judge with (its defaults without a file); None without them."""
    policy = options.gate_policy()  # a policy without automatic repeats is refused
    return (policy or Policy()) if plan.auto is not None else None


def use_line(use: MachineUse, now: float) -> str:
    """One machine's minutes, money and times, in under 80 columns for a short name."""
    def at(t: float | None) -> str:
        return "-" if t is None else time.strftime("%H:%M:%S", time.localtime(t))

    usd = use.usd(now)
    money = "no price" if usd is None else dollars(usd)
    held = "released" if use.released is not None else "still held"
    return (f"{use.machine}: {use.vm_minutes(now):.1f} VM-min, {money}; ready {at(use.ready)}, last job "
            f"{at(use.last_unit)}, {held} {at(use.released if use.released is not None else now)}")


def _not_run(outcome: RunOutcome, machines: int) -> DiskbenchError:
    """The one error of a run that reached none of its machines."""
    reasons = list(dict.fromkeys(outcome.messages))
    if machines == 1 and len(reasons) == 1:
        return DiskbenchError(f"{reasons[0]}; nothing ran, no run was stored")
    return DiskbenchError(f"no machine could be reached ({'; '.join(reasons)}); nothing ran, no run was stored")


@contextmanager
def _teardown_guard(ui: Progress) -> Iterator[None]:
    """Ctrl-C while deleting cloud resources: the first says deleting goes on, instead of abandoning
    them; the next stops waiting at once (``StopWaiting`` inside the provider's teardown, which says
    what is left, with ids, and the command that deletes it; the command then exits 130). A cloud
    whose delete never completes cannot hold the terminal."""
    from ..providers.base import StopWaiting

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed = 0

    def say(signum: int, frame: object) -> None:
        nonlocal pressed
        pressed += 1
        if pressed > 1:
            raise StopWaiting
        ui.warn("teardown in progress: diskbench is deleting what it created; press Ctrl-C again to stop "
                "waiting (what is left is listed, with the command that deletes it)")

    previous = signal.signal(signal.SIGINT, say)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)

