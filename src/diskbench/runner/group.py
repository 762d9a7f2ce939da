"""A client group's part of a run: every client reached, the shared target mounted everywhere,
``fio --server`` on each, and each unit run once from the controller for all clients at once.

Connection setup, preparation and server start happen in parallel (one thread per client), so
the controller's fixed cost per run grows little with the number of clients. A client that
cannot be reached or prepared fails the group's units with a message naming it; a client
missing from the results marks the unit failed (partial), never a silently smaller total.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .. import registry
from ..engines.base import Place
from ..engines.fio import clientserver as cs
from ..errors import DiskbenchError, ExecutionError, SafetyError
from ..executors.base import Executor
from ..model import GroupResult
from ..plan import LOCAL, Plan, PlannedJob
from ..platforms.base import Prepared
from ..profile import writes
from ..store import now_iso
from .leftovers import journal
from .options import RunOptions, RunOutcome
from .recorder import unit_dir
from .testbed import testbed_key
from .unit import summary

if TYPE_CHECKING:
    from ..executors.hostkeys import HostKeyTrust
    from .runner import Runner

T = TypeVar("T")
SERVER_WAIT_S = 20.0
PARALLEL = 8  # clients set up at once: each step is a burst of SSH commands, CPU-bound on both ends


@dataclass
class Client:
    """One client of the group: its job, connection, prepared target and fio server."""

    job: PlannedJob
    ex: Executor | None = None
    prepared: Prepared | None = None
    bind: str = ""
    pidfile: str = ""
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.job.machine

    @property
    def address(self) -> str:
        return self.job.host.address if self.job.host else self.name


class GroupWork:
    def __init__(self, runner: Runner, run_id: str, jobs: list[PlannedJob], plan: Plan, options: RunOptions,
                 total: int, outcome: RunOutcome) -> None:
        self.runner, self.run_id, self.jobs, self.plan = runner, run_id, jobs, plan
        self.options, self.total, self.outcome = options, total, outcome
        self.store, self.ui = runner.store, runner.ui
        shared = plan.profile.profile.shared
        self.port = shared.port if shared is not None else 8765
        self.ports = shared.ports if shared is not None else {}
        self.target = jobs[0].target
        self.clients = [Client(c) for c in jobs[0].clients]
        self.version: str | None = None
        self._merged: list[GroupResult] = []

    # --- the whole group ----------------------------------------------------------------------
    def run(self, trust: HostKeyTrust | None) -> None:
        try:
            self._shared_volume()
            self._each("connecting", lambda c: self._acquire(c, trust))
            self._each("checking fio", self._learn)
            self._each("preparing the shared target", self._prepare)
            self._each("starting fio --server", self._serve)
            for job in self.jobs:
                if self.runner.stopped:
                    return
                ok = self._unit(job)
                self.runner.tally(self.outcome, ok)
        except DiskbenchError as exc:
            self.runner.fail_unfinished(self.run_id, self.jobs, exc, self.outcome)
        finally:
            self._each("stopping", self._stop, raise_first=False)

    def _shared_volume(self) -> None:
        """A volume the clients' provider makes for the run (ANF): its export becomes the target."""
        from ..plan_group import ANF_PENDING

        shared = self.plan.profile.profile.shared
        if getattr(self.target, "nfs", None) != ANF_PENDING or shared is None or shared.anf is None:
            return
        prun = self.runner.provider_runs[self.clients[0].job.provider]
        make = getattr(prun, "shared_volume", None)
        if make is None:
            raise ExecutionError(f"shared.anf needs Azure machines as clients, not {self.clients[0].job.provider}")
        self.target = self.target.model_copy(update={"nfs": make(shared.anf)})

    def _each(self, what: str, step: Callable[[Client], None], raise_first: bool = True) -> None:
        """``step`` on every client at once; the first client that fails is named in the error."""
        errors: list[tuple[Client, BaseException]] = []

        def one(c: Client) -> None:
            try:
                step(c)
            except BaseException as exc:  # noqa: BLE001 - reported per client below
                errors.append((c, exc))

        with ThreadPoolExecutor(max_workers=min(PARALLEL, len(self.clients)) or 1) as pool:
            list(pool.map(one, self.clients))
        if errors and raise_first:
            client, exc = min(errors, key=lambda e: self.clients.index(e[0]))
            if not isinstance(exc, DiskbenchError):
                raise exc
            more = f" (and {len(errors) - 1} more client(s))" if len(errors) > 1 else ""
            text = str(exc) if client.name in str(exc) else f"{client.name}: {exc}"
            kind = SafetyError if isinstance(exc, SafetyError) else ExecutionError  # a refusal stays one
            raise kind(f"client {client.name}: {what} failed: {text.removeprefix(client.name + ': ')}{more}")

    # --- per client ---------------------------------------------------------------------------
    def _acquire(self, c: Client, trust: HostKeyTrust | None) -> None:
        if c.job.provider == LOCAL:
            raise ExecutionError("a client group runs on hosts or machines, not on this machine")
        assert trust is not None
        ex, first = self.runner.provider_runs[c.job.provider].acquire(c.job, trust)
        c.ex, c.job = ex, replace(c.job, host=first.host)

    def _learn(self, c: Client) -> None:
        assert c.ex is not None
        platform = registry.platforms.get(c.ex.platform)
        engine = registry.engines.get("fio")
        host = c.job.host
        version = engine.ensure(c.ex, platform, install=host.install_fio if host else False,
                                host=c.name, line=self.ui.line)
        facts = {**platform.host_facts(c.ex), "fio_version": version}
        self.version = self.version or facts["fio_version"]
        if facts["fio_version"] != self.version:
            raise ExecutionError(f"{c.name}: fio {facts['fio_version']}, but other clients run {self.version} "
                                 "(fio client/server needs one version everywhere)")
        self.store.add_host_facts(self.run_id, c.name, facts)

    def _prepare(self, c: Client) -> None:
        assert c.ex is not None
        platform = registry.platforms.get(c.ex.platform)
        preparer = platform.preparer(c.ex, devices=registry.providers.get(c.job.provider).device_map(),
                                     allowed=[], name=c.name, run_id=self.run_id,
                                     scratch_base=platform.default_scratch_base(c.ex), line=self.ui.line,
                                     journal=journal(self.store, self.run_id, c.name), exclusive=False)
        c.prepared = preparer.prepare(self.target, any(writes(j.workload.rw) for j in self.jobs))

    def _serve(self, c: Client) -> None:
        """fio --server on the address the controller reached the client at (its own side of SSH)."""
        assert c.ex is not None
        seen = c.ex.run(["sh", "-c", "echo $SSH_CONNECTION"]).stdout.split()
        c.bind = seen[2] if len(seen) == 4 else c.address
        work = c.ex.workspace(self.store.run_artifacts(self.run_id))
        c.pidfile = f"{work}/{cs.SERVER_PIDFILE}"
        c.ex.run(["mkdir", "-p", work])
        out = c.ex.run(cs.server_command(c.bind, self.port, c.pidfile), privileged=True, timeout=30)
        if out.returncode != 0:
            detail = (out.stderr or out.stdout).strip().splitlines()
            raise ExecutionError(f"{c.name}: fio --server did not start: {detail[-1] if detail else out.returncode}")
        deadline = time.monotonic() + SERVER_WAIT_S
        while True:
            with socket.socket(socket.AF_INET6 if ":" in c.address else socket.AF_INET) as s:
                s.settimeout(2)
                if s.connect_ex((c.address, self._port(c))) == 0:
                    return
            if time.monotonic() > deadline:
                raise ExecutionError(f"{c.name}: fio --server on {c.bind}:{self.port} cannot be reached from "
                                     f"here at {c.address}:{self._port(c)}", hint="is a firewall in the way?")
            time.sleep(0.1)

    def _port(self, c: Client) -> int:
        return self.ports.get(c.name, self.port)

    def _stop(self, c: Client) -> None:
        if c.ex is None:
            return
        try:
            if c.pidfile:
                # the server is gone before the client counts as released (up to 5 s, then KILL)
                c.ex.run(["sh", "-c", f"if test -f {c.pidfile}; then p=$(cat {c.pidfile}); kill $p; i=0; "
                          "while kill -0 $p 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; "
                          f"kill -9 $p 2>/dev/null; fi; rm -f {c.pidfile}"], privileged=True, timeout=30)
            if c.prepared is not None:
                c.prepared.release()
            root = c.ex.workspace_root()
            if root is not None:
                registry.platforms.get(c.ex.platform).remove_workspace(c.ex, root)
        finally:
            c.ex.close()

    # --- one unit -----------------------------------------------------------------------------
    def _unit(self, job: PlannedJob) -> bool:
        engine = registry.engines.get(job.engine)
        art = unit_dir(self.store, self.run_id, job)
        art.mkdir(parents=True, exist_ok=True)
        pairs, rendered = [], ""
        for c in self.clients:
            assert c.prepared is not None
            place = Place(job.workload, job.target_label, c.prepared.directory, c.prepared.filename)
            text = engine.render(replace(job, machine=c.name), [place])
            rendered = rendered or text
            path = art / f"{c.name}.job{engine.job_suffix}"
            path.write_text(text, encoding="utf-8")
            pairs.append((c.address, self._port(c), str(path)))
        self.store.update_job(self.run_id, job.key, status="running", started=now_iso(), rendered=rendered,
                              message=None, testbed=testbed_key(job, engine.testbed_text(rendered), engine.name,
                                                                self.version))
        label = f"{job.workload.name} on {job.target_label} @ {job.machine} ({len(self.clients)} clients)"
        from ..executors.local import LocalExecutor

        local = LocalExecutor()  # its own: Ctrl-C stops this fio --client through the runner
        self.runner._active[job.machine] = local
        output = art / engine.output_name
        try:
            with self.ui.job(self.runner.next_index(), self.total, label, job.expected_s, 0.0) as tracker:
                rc = local.stream(cs.client_command(pairs, str(output)), on_output=lambda _t: None,
                                  timeout=job.expected_s * 3 + 120, stdout_path=art / "stdout.txt",
                                  stderr_path=art / "stderr.txt", workdir=str(art))
        finally:
            self.runner._active.pop(job.machine, None)
        (art / "exit_code").write_text(f"{rc}\n")
        if self.runner.stopped:
            self.store.update_job(self.run_id, job.key, status="interrupted", finished=now_iso(), exit_code=rc)
            return False
        message = self._store(job, art, output, rc)
        ok = message is None
        self.store.update_job(self.run_id, job.key, status="done" if ok else "failed", finished=now_iso(),
                              exit_code=rc, message=message)
        if ok:
            self.ui.job_done(tracker, "done, " + summary(self._merged))
        else:
            self.ui.line(f"{label}: FAILED: {message}")
            with self.runner._lock:
                self.outcome.messages.append(f"{label}: {message}")
        return ok

    def _store(self, job: PlannedJob, art: Path, output: Path, rc: int) -> str | None:
        """Each client's rows and the merged rows; the reason the unit failed, or None."""
        text = output.read_text(errors="replace") if output.exists() else ""
        try:
            merged, per_client, _doc = cs.client_results(text, str(output))
        except DiskbenchError as exc:
            return self._why(art, rc) or str(exc)
        by_address = {f"{c.address},{self._port(c)}": c.name for c in self.clients}
        where = {"workload": job.workload.name, "target": job.target_label, "repeat": job.repeat}
        rows = [(g, {**where, "host": by_address.get(a, a)}) for a, groups in per_client.items() for g in groups]
        self._merged = merged
        missing = [c.name for c in self.clients if f"{c.address},{self._port(c)}" not in per_client]
        failed = [by_address.get(a, a) for a, gs in per_client.items() if any(g.errors for g in gs)]
        if missing or failed:  # a total without them would look like a slower system: none is stored
            who = ", ".join(missing + failed)
            self.store.add_results_many(self.run_id, job.key, rows)
            return f"partial: client(s) {who} did not finish the job; other clients' rows kept, no total"
        for group in merged:
            group.hosts = [c.name for c in self.clients]
        self.store.add_results_many(self.run_id, job.key, rows + [(g, {**where, "host": job.machine}) for g in merged])
        if rc != 0:
            return self._why(art, rc) or f"fio exit {rc}"
        return None

    def _why(self, art: Path, rc: int) -> str | None:
        """The first line fio wrote about the failure, with the client's name for its address."""
        path = art / "stderr.txt"
        lines = [ln.strip() for ln in (path.read_text(errors="replace") if path.exists() else "").splitlines()
                 if ln.strip()]
        line = next((ln for ln in lines if "fio:" in ln or "error" in ln.lower()), lines[0] if lines else "")
        for c in self.clients:
            line = line.replace(c.address, f"{c.name} ({c.address})") if c.address in line else line
        return f"fio exit {rc}: {line}" if line else None
