"""plan -> results: run each job through an Executor, parse it, and commit it at once.

Machines run in parallel threads, the jobs of one machine one after another; one failing
machine does not stop the others. The store sees every step (run created, job started, result
committed, run finished), so an interrupted run can be shown and resumed, and raw outputs are
always kept beside it.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import platformdirs

from .azure.provider import AzureProvider
from .errors import DiskbenchError, ExecutionError, ProviderUnavailable
from .executor import Executor, LocalExecutor
from .facts import fio_version, host_facts, target_facts
from .fiorun import parse_outcome, prepare_data, run_fio, summary
from .plan import LOCAL, SSH, Plan, PlannedJob, build_plan
from .prepare import Prepared, Preparer, workload_writes
from .profile import Host, LoadedProfile, parse_profile
from .render import render_fio
from .ssh import HostKeyTrust, SSHExecutor
from .store import Store, now_iso
from .testbed import testbed_key
from .ui import UI


class Interrupted(DiskbenchError):
    exit_code = 130


@dataclass
class RunOptions:
    target_dir: str | None = None
    scratch_base: str | None = None
    hosts: list[dict[str, Any]] = field(default_factory=list)  # --host overrides, as Host dicts
    destroy_data_on: list[str] = field(default_factory=list)
    accept_new_host_key: bool = False
    known_hosts: str | None = None
    repeats: int | None = None
    keep: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"target_dir": self.target_dir, "scratch_base": self.scratch_base, "hosts": self.hosts,
                "destroy_data_on": self.destroy_data_on, "known_hosts": self.known_hosts,
                "repeats": self.repeats}

    def host_models(self) -> list[Host]:
        return [Host.model_validate(h) for h in self.hosts]


@dataclass
class RunOutcome:
    run_id: str
    status: str
    done: int = 0
    failed: int = 0
    messages: list[str] = field(default_factory=list)


class Runner:
    def __init__(self, store: Store, ui: UI, executor: Executor | None = None,
                 azure: Callable[[str], AzureProvider] | None = None) -> None:
        self.store = store
        self.ui = ui
        self.local = executor or LocalExecutor()
        self.azure = azure  # makes the provider of a run, when a profile has Azure machines
        self.provider: AzureProvider | None = None
        self._stop = threading.Event()
        self._active: dict[str, Executor] = {}
        self._counter = 0
        self._lock = threading.Lock()
        self._facts: dict[tuple[str, str], dict[str, Any]] = {}
        self._fio_versions: dict[str, str | None] = {}

    # --- entry points -----------------------------------------------------------------------
    def start(self, plan: Plan, options: RunOptions) -> RunOutcome:
        plan.require_runnable((LOCAL, SSH, "azure") if self.azure else (LOCAL, SSH))
        if any(j.provider == LOCAL for j in plan.jobs):
            self._require_local_fio()
        for job in plan.jobs:  # a typo in --target is caught before a run is recorded
            if job.provider == LOCAL and job.target.dir and not self.local.is_dir(job.target.dir):
                raise ExecutionError(f"target directory {job.target.dir} does not exist",
                                     hint="create it, or pass an existing directory to --target")
        loaded = plan.profile
        run_id = self.store.create_run(
            profile=loaded.profile.name, profile_path=loaded.path, profile_text=loaded.text,
            options=options.to_json(),
        )
        self.store.add_jobs(run_id, [
            {"key": j.key, "workload": j.workload.name, "target": j.target_label, "host": j.machine,
             "base_key": j.base_key, "repeat": j.repeat, "params": j.params()}
            for j in plan.jobs
        ])
        return self._execute(run_id, plan, plan.jobs, options)

    def resume(self, run_ref: str, options: RunOptions | None = None) -> RunOutcome:
        run = self.store.get_run(run_ref)
        if run["origin"] != "run" or not run["profile_text"]:
            raise DiskbenchError(f"run {run['id']} was imported, not run; there is nothing to resume")
        known = {f.name for f in fields(RunOptions)} - {"accept_new_host_key", "keep"}
        saved = RunOptions(**{k: v for k, v in run["options"].items() if k in known})
        if options is not None:
            saved.accept_new_host_key = options.accept_new_host_key
        profile = parse_profile(run["profile_text"], run["profile_path"] or run["profile"])
        loaded = LoadedProfile(profile=profile, path=run["profile_path"] or "", text=run["profile_text"])
        plan = build_plan(loaded, target_dir=saved.target_dir, hosts=saved.host_models() or None,
                          destroy_data_on=saved.destroy_data_on, repeats=saved.repeats)
        plan.require_runnable((LOCAL, SSH, "azure") if self.azure else (LOCAL, SSH))
        done = self.store.result_keys(run["id"])
        todo = [j for j in plan.jobs if j.key not in done]
        if not todo:
            self.ui.line(f"run {run['id']}: every job has a result; nothing to resume")
        if any(j.provider == LOCAL for j in todo):
            self._require_local_fio()
        self.store.update_run(run["id"], status="running", finished=None, pid=os.getpid())
        return self._execute(run["id"], plan, todo, saved)

    def _require_local_fio(self) -> None:
        if not self.local.which("fio"):
            raise ExecutionError("fio is not installed on this machine",
                                 hint="install it with `apt-get install -y fio`, then run again")

    # --- the run ----------------------------------------------------------------------------
    def _execute(self, run_id: str, plan: Plan, todo: list[PlannedJob], options: RunOptions) -> RunOutcome:
        outcome = RunOutcome(run_id, "running")
        by_machine: dict[str, list[PlannedJob]] = {}
        for job in todo:
            by_machine.setdefault(job.machine, []).append(job)
        self.ui.line(f"run {run_id}: profile {plan.profile.profile.name}, {len(todo)} job(s) on "
                     f"{len(by_machine)} machine(s): {', '.join(by_machine)}")
        trust = HostKeyTrust(known_hosts=options.known_hosts, accept_new=options.accept_new_host_key,
                             diskbench_known_hosts=self.store.path.parent / "known_hosts")
        total = len(todo)
        try:
            self._provision_start(run_id, todo)
            with self.ui.session(), ThreadPoolExecutor(max_workers=max(1, len(by_machine))) as pool:
                futures = [pool.submit(self._machine, run_id, jobs, plan, options, trust, total, outcome)
                           for jobs in by_machine.values()]
                try:
                    pending = set(futures)
                    while pending:
                        _, pending = wait(pending, timeout=0.2)
                except KeyboardInterrupt:
                    self._interrupt()
                    self._teardown(options)  # at once: Azure cancels what is still being created
                    wait(futures)
                    self.store.finish_run(run_id, "interrupted")
                    raise Interrupted(
                        f"interrupted: run {run_id} keeps its {outcome.done} finished job(s)",
                        hint=f"`diskbench resume {run_id}` runs the rest") from None
                for future in futures:
                    future.result()  # re-raise what a machine thread could not handle
        except Interrupted:
            raise
        except KeyboardInterrupt:
            self.store.finish_run(run_id, "interrupted")
            raise Interrupted(f"interrupted: run {run_id}", hint=f"`diskbench resume {run_id}` runs the rest") from None
        except BaseException:
            self.store.finish_run(run_id, self._status(run_id))
            raise
        finally:
            self._teardown(options)
        if trust.seen:
            self.store.update_run(run_id, options={**options.to_json(), "host_keys": trust.seen})
        outcome.status = self._status(run_id)
        self.store.finish_run(run_id, outcome.status)
        return outcome

    def _provision_start(self, run_id: str, todo: list[PlannedJob]) -> None:
        machines = list({j.machine: j.azure for j in todo if j.azure is not None}.values())
        if not machines:
            return
        if self.azure is None:
            raise ProviderUnavailable("this run has Azure machines but no Azure provider")
        self.provider = self.azure(run_id)
        try:
            self.provider.prepare([m for m in machines if m is not None])
        finally:  # the sizes' published limits, so reports can set results against them
            if self.provider.capabilities:
                self.store.merge_facts(run_id, {"azure_sizes": {
                    name: asdict(info) for name, info in self.provider.capabilities.items()}})

    def _teardown(self, options: RunOptions) -> None:
        provider, self.provider = self.provider, None
        if provider is None or provider.group is None:
            return
        if options.keep:
            self.ui.warn(provider.keep_note())
            return
        with _teardown_guard(self.ui):
            provider.teardown()

    def _interrupt(self) -> None:
        self._stop.set()
        if self.provider is not None:
            self.provider.stopping.set()
        for ex in list(self._active.values()):
            ex.interrupt()

    def _status(self, run_id: str) -> str:
        jobs = self.store.get_jobs(run_id)
        done = sum(j["status"] == "done" for j in jobs)
        if done == len(jobs):
            return "completed"
        return "failed" if done == 0 else "partial"

    def _fail(self, run_id: str, jobs: list[PlannedJob], message: str, outcome: RunOutcome) -> None:
        for job in jobs:
            self.store.update_job(run_id, job.key, status="failed", finished=now_iso(), message=message)
        with self._lock:
            outcome.failed += len(jobs)
            outcome.messages.append(message)
        self.ui.line(f"FAILED: {message}")

    def _machine(self, run_id: str, jobs: list[PlannedJob], plan: Plan, options: RunOptions,
                 trust: HostKeyTrust, total: int, outcome: RunOutcome) -> None:
        machine = jobs[0].machine
        try:
            if jobs[0].azure is not None:
                assert self.provider is not None
                host = self.provider.create(jobs[0].azure)
                self.ui.line(f"{machine}: waiting for SSH at {host.address} and cloud-init")
                ex: Executor = self.provider.wait_ready(host, trust)
                jobs = [replace(j, host=host) for j in jobs]
            else:
                ex = self._connect(jobs[0], trust)
        except DiskbenchError as exc:
            self._fail(run_id, jobs, str(exc), outcome)
            return
        self._active[machine] = ex
        prepared: dict[str, Prepared] = {}
        try:
            self._ensure_fio(ex, jobs[0].host)
            facts = host_facts(ex)
            self._fio_versions[ex.name] = facts.get("fio_version")
            self.store.add_host_facts(run_id, machine, facts)
            preparer = Preparer(ex, allowed=plan.destroy_data_on + (jobs[0].host.destroy_data_on
                                                                    if jobs[0].host else []),
                                name=machine, run_id=run_id, line=self.ui.line,
                                scratch_base=options.scratch_base if ex is self.local else None)
            if ex is self.local and preparer.scratch_base is None:
                preparer.scratch_base = platformdirs.user_cache_dir("diskbench")
            for index, job in enumerate(jobs):
                if self._stop.is_set():
                    return
                target = job.target_label
                if target not in prepared:
                    writes = any(workload_writes(j.workload.rw) for j in jobs if j.target_label == target)
                    try:
                        prepared[target] = preparer.prepare(job.target, writes)
                    except DiskbenchError as exc:
                        self._fail(run_id, [j for j in jobs[index:] if j.target_label == target],
                                   str(exc), outcome)
                        prepared[target] = Prepared()  # nothing to run on
                        continue
                where = prepared[target]
                if where.directory is None and where.filename is None:
                    continue
                ok = self._job(run_id, ex, job, where, total, outcome)
                with self._lock:
                    outcome.done += ok
                    outcome.failed += not ok
        except DiskbenchError as exc:
            remaining = [j for j in jobs if self.store_job_status(run_id, j) in ("pending", "running")]
            self._fail(run_id, remaining, str(exc), outcome)
        finally:
            for where in prepared.values():
                where.release()
            if isinstance(ex, SSHExecutor):
                ex.remove_workspace(run_id)
            self._active.pop(machine, None)
            ex.close()

    def store_job_status(self, run_id: str, job: PlannedJob) -> str:
        return next((j["status"] for j in self.store.get_jobs(run_id) if j["key"] == job.key), "pending")

    def _connect(self, job: PlannedJob, trust: HostKeyTrust) -> Executor:
        if job.host is None:
            return self.local
        self.ui.line(f"{job.machine}: connecting to {job.host.address}:{job.host.port}")
        return SSHExecutor(job.host, trust, on_event=self.ui.line).connect()

    def _ensure_fio(self, ex: Executor, host: Host | None) -> None:
        if fio_version(ex):  # runs it: a file called fio that does not run is no fio
            return
        if host is None:
            self._require_local_fio()
        assert host is not None
        if not host.install_fio:
            raise ExecutionError(f"{host.name}: fio is not installed",
                                 hint="install fio on the host, or set install_fio: true")
        for manager, argv in (("apt-get", ["sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive "
                                                       "apt-get install -y -qq fio"]),
                              ("dnf", ["dnf", "install", "-y", "-q", "fio"]),
                              ("zypper", ["zypper", "--non-interactive", "install", "fio"])):
            if ex.which(manager):
                self.ui.line(f"{host.name}: installing fio with {manager}")
                out = ex.run(argv, timeout=900, privileged=True)
                if out.returncode == 0 and fio_version(ex):
                    return
                detail = (out.stderr or out.stdout).strip().splitlines()
                raise ExecutionError(f"{host.name}: installing fio with {manager} failed: "
                                     f"{detail[-1] if detail else out.returncode}")
        raise ExecutionError(f"{host.name}: fio is not installed and no apt-get, dnf or zypper was found")

    # --- one job ----------------------------------------------------------------------------
    def _target_facts(self, ex: Executor, path: str) -> dict[str, Any]:
        """Filesystem and disks of a target, looked up once per run (they do not change)."""
        key = (ex.name, path)
        if key not in self._facts:
            self._facts[key] = target_facts(ex, path)
        return self._facts[key]

    def _next_index(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    def _job(self, run_id: str, ex: Executor, job: PlannedJob, where: Prepared, total: int,
             outcome: RunOutcome) -> bool:
        art = self.store.run_artifacts(run_id) / f"{job.seq:02d}-{job.slug}"
        art.mkdir(parents=True, exist_ok=True)
        rendered = render_fio(job, where.directory, filename=where.filename)
        self.store.update_job(run_id, job.key, status="running", started=now_iso(), rendered=rendered,
                              facts=self._target_facts(ex, where.directory or where.filename or "/"),
                              message=None, testbed=testbed_key(job, rendered, self._fio_versions.get(ex.name)))
        label = f"{job.workload.name} on {job.target_label}" + ("" if job.machine == LOCAL else f" @ {job.machine}")
        index = self._next_index()
        prepare_data(ex, job, where, art, label, self.ui.line)
        with self.ui.job(index, total, label, job.expected_s, 0.0) as tracker:
            rc = run_fio(ex, job, rendered, art, tracker)
        if self._stop.is_set():
            self.store.update_job(run_id, job.key, status="interrupted", finished=now_iso(), exit_code=rc)
            return False
        groups, message = parse_outcome(art, rc)
        for group in groups:
            self.store.add_results(run_id, job.key, group, workload=job.workload.name,
                                   target=job.target_label, host=job.machine, repeat=job.repeat)
        ok = message is None
        self.store.update_job(run_id, job.key, status="done" if ok else "failed",
                              finished=now_iso(), exit_code=rc, message=message)
        if ok:
            self.ui.job_done(tracker, "done, " + summary(groups))
        else:
            self.ui.line(f"{tracker.label}: FAILED: {message}")
            with self._lock:
                outcome.messages.append(f"{label}: {message}")
        return ok


@contextmanager
def _teardown_guard(ui: UI) -> Iterator[None]:
    """A second Ctrl-C while deleting cloud resources says so instead of abandoning them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def say(signum: int, frame: object) -> None:
        ui.warn("teardown in progress: diskbench is deleting what it created; please wait")

    previous = signal.signal(signal.SIGINT, say)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
