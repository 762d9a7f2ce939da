"""A client group's part of a run: every client reached, the shared target mounted everywhere,
the engine's server on each, and each unit run once from here for all clients at once (after
each client flushed its caches, for a workload with ``flush_cache``).

Set-up (connecting, learning the engine, preparing the target, starting the servers) and the
stop run on every client at once (a few threads at a time), so the controller's fixed cost per
run grows little with the number of clients. A client that cannot be reached or prepared fails
the group's units with a message naming it. The engine's multi-host mode says how a server
starts and how a unit is driven; the client platform's shell how a server stops and which
address it listens on; the run's shared volume (``RunState.shared``) has the volume made when the
target is one, and says when the group may measure it (first, before any machine that mounts it
itself).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .. import registry
from ..attribution.attributor import Attributor, merged, provider_limits
from ..engines.base import Endpoint, MultiHost, Place
from ..errors import DiskbenchError, ExecutionError, SafetyError, Unavailable
from ..executors.base import Executor
from ..executors.local import LocalExecutor
from ..plan import LOCAL, Unit
from ..platforms.base import Prepared, Preparer
from ..profile import writes
from ..profile.shared import SharedBase
from .client_group import ClientGroup, Seat
from .host import cpus, learn
from .leftovers import journal
from .pipeline import run_unit
from .space import check_room, layout
from .state import RunState

if TYPE_CHECKING:
    from ..executors.hostkeys import HostKeyTrust

SERVER_WAIT_S = 20.0
PARALLEL = 8  # clients set up at once: each step is a burst of SSH commands, CPU-bound on both ends


@dataclass
class Client:
    """One client of the group: its job, connection, prepared target, server and attribution."""

    job: Unit
    ex: Executor | None = None
    prepared: Prepared | None = None
    preparer: Preparer | None = None  # what prepared the target: its platform's steps on it (flush_cache)
    stop: list[str] | None = None  # the command that stops its server, once one was started
    version: str | None = None
    attributor: Attributor | None = None

    @property
    def name(self) -> str:
        return self.job.machine

    @property
    def address(self) -> str:
        return self.job.host.address if self.job.host else self.name


class GroupWork:
    def __init__(self, state: RunState, jobs: list[Unit], shared: SharedBase) -> None:
        self.state, self.jobs = state, jobs
        self.port, self.ports, self.volume = shared.port, shared.ports, shared.volume
        self.target = jobs[0].target
        self.clients = [Client(c) for c in jobs[0].clients]
        self.engine = registry.engines.get(jobs[0].engine)

    # --- the whole group ----------------------------------------------------------------------
    def run(self, trust: HostKeyTrust | None) -> None:
        try:
            mode = self._mode()
            self._make_volume()
            self._each("connecting", lambda c: self._acquire(c, trust))
            self.state.reach()
            self._each(f"checking {self.engine.name}", self._learn)
            version = self._one_version(mode)
            self._each("preparing the shared target", self._prepare)
            self._room()
            self._each(f"starting {self.engine.name} servers", lambda c: self._serve(c, mode))
            self._units(mode, version)
        except DiskbenchError as exc:
            self.state.fail_unfinished(self.jobs, exc)
        finally:
            self._each("stopping", self._stop, raise_first=False)

    def _units(self, mode: MultiHost, version: str | None) -> None:
        """Each unit in turn, driven from this machine by an executor of its own (Ctrl-C stops it), in
        the group's turn on the shared volume."""
        total = merged([c.attributor for c in self.clients if c.attributor is not None], mode.same_offsets)
        with self.state.active(LocalExecutor()) as controller, self._turn() as go:
            for _, job in self.state.units(self.jobs):
                if self.state.stopped or not go:
                    return
                self._unit(job, ClientGroup(self.engine, mode, version, self._seats(job), controller, total,
                                            self._flush))

    def _turn(self) -> AbstractContextManager[bool]:
        shared = self.state.shared
        if shared is None:
            return nullcontext(True)
        return shared.turn(self.jobs[0].machine, lambda: self.state.stopped, self.state.ui.line)

    def _flush(self, job: Unit, art: Path) -> None:
        """``flush_cache`` on every client at once, before the unit's engine starts (Ctrl-C stops it)."""
        def one(c: Client) -> None:
            assert c.ex is not None and c.preparer is not None and c.prepared is not None
            with self.state.active(c.ex):
                c.preparer.flush_cache(c.prepared, job.workload.flush_bytes, art, f"flush-{c.name}")

        try:
            self._each("flushing caches", one)
        except DiskbenchError:
            if not self.state.stopped:  # stopped by Ctrl-C: the unit is interrupted, not failed
                raise

    def _unit(self, job: Unit, drive: ClientGroup) -> bool:
        return run_unit(self.state, job, drive)

    def _seats(self, job: Unit) -> list[Seat]:
        seats = []
        for c in self.clients:
            assert c.prepared is not None and c.attributor is not None
            place = Place(job.workload, job.target_label, c.prepared.directory, c.prepared.filename)
            seats.append(Seat(c.name, Endpoint(c.address, self._port(c)), place, c.attributor))
        return seats

    def _mode(self) -> MultiHost:
        mode = self.engine.multi_host()
        if mode is None:  # the plan refuses such a profile; a plugin registered later may still get here
            raise Unavailable(f"{self.engine.name} cannot run one job on many hosts at once")
        return mode

    def _make_volume(self) -> None:
        """A volume the clients' provider makes for the run (once, for every part that mounts it): its
        export becomes the shared target."""
        if self.volume is None:
            return
        assert self.state.shared is not None  # the runner gives every run with shared: its shared volume
        self.target = self.target.model_copy(update={"nfs": self.state.shared.export()})

    def _one_version(self, mode: MultiHost) -> str | None:
        """The engine's version, which must be the same on every client for its servers to work together."""
        first = self.clients[0]
        other = next((c for c in self.clients if c.version != first.version), None)
        if other is not None:
            raise ExecutionError(f"client {other.name}: {self.engine.name} {other.version}, but {first.name} runs "
                                 f"{first.version} (one job on many hosts needs one version everywhere)")
        return first.version

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
        ex, first = self.state.provider_runs[c.job.provider].acquire(c.job, trust)
        c.ex, c.job = ex, replace(c.job, host=first.host)

    def _learn(self, c: Client) -> None:
        assert c.ex is not None
        facts, versions = learn(self.state.store, self.state.run_id, c.ex, registry.platforms.get(c.ex.platform),
                                [self.engine], name=c.name, host=c.job.host, line=self.state.ui.line)
        c.version = versions[self.engine.name]
        prun = self.state.provider_runs[c.job.provider]
        limits = provider_limits(prun, registry.providers.get(c.job.provider), c.job.entry)
        c.attributor = Attributor(limits, cpus=cpus(facts))

    def _prepare(self, c: Client) -> None:
        assert c.ex is not None
        platform = registry.platforms.get(c.ex.platform)
        preparer = platform.preparer(c.ex, devices=registry.providers.get(c.job.provider).device_map(),
                                     allowed=[], name=c.name, run_id=self.state.run_id,
                                     scratch_base=platform.default_scratch_base(c.ex), line=self.state.ui.line,
                                     journal=journal(self.state.store, self.state.run_id, c.name), exclusive=False)
        c.preparer = preparer
        c.prepared = preparer.prepare(self.target, any(writes(j.workload.rw) for j in self.jobs))

    def _room(self) -> None:
        """Before the group's first unit, its data files set against the shared target's free space on
        every client (``space.py``): each client lays out its own set in its own folder of the one volume
        (an NFS export), or all share one folder's files (the same ``dir:`` everywhere)."""
        first = self.clients[0]
        assert first.preparer is not None
        plan = layout(self.jobs, self.jobs[0].target_label, first.preparer.flush_set_bytes)
        if plan.unknown is not None:  # said once, not by every client
            self.state.ui.line(f"{first.name}: free space on {self.jobs[0].target_label} not checked: {plan.unknown}")
            return
        copies = len({c.prepared.directory for c in self.clients if c.prepared is not None})

        def fits(c: Client) -> None:
            assert c.ex is not None and c.prepared is not None
            if c.prepared.directory is not None:
                check_room(registry.platforms.get(c.ex.platform), c.ex, c.prepared.directory,
                           self.jobs[0].target_label, plan, host=c.name, line=self.state.ui.line, copies=copies)

        self._each("checking free space", fits)

    def _serve(self, c: Client, mode: MultiHost) -> None:
        """The engine's server on the address the controller reached the client at (its own side of SSH)."""
        assert c.ex is not None
        shell = registry.platforms.get(c.ex.platform).shell()
        root = c.ex.workspace_root(make=True)
        pidfile = f"{root}/{mode.pidfile}"
        c.stop = shell.stop_pidfile(pidfile) if root is not None else None
        if c.stop is None:
            raise ExecutionError(f"{c.name}: a {c.ex.platform} host cannot run an engine server diskbench can stop")
        ask = shell.reached_address()
        bind = (c.ex.run(ask).stdout.strip() if ask else "") or c.address
        out = c.ex.run(mode.serve(bind, self.port, pidfile), privileged=True, timeout=30)
        if out.returncode != 0:
            detail = (out.stderr or out.stdout).strip().splitlines()
            raise ExecutionError(f"{c.name}: the {self.engine.name} server did not start: "
                                 f"{detail[-1] if detail else out.returncode}")
        _reachable(c.name, c.address, self._port(c), f"{bind}:{self.port}")

    def _port(self, c: Client) -> int:
        return self.ports.get(c.name, self.port)

    def _stop(self, c: Client) -> None:
        if c.ex is None:
            return
        platform = registry.platforms.get(c.ex.platform)
        try:
            if c.stop is not None:  # the server is gone before the client counts as released
                c.ex.run(c.stop, privileged=True, timeout=30)
            if c.prepared is not None:
                c.prepared.release()
            root = c.ex.workspace_root()
            if root is not None:
                platform.remove_workspace(c.ex, root)
        finally:
            c.ex.close()


def _reachable(name: str, address: str, port: int, listening: str) -> None:
    """Wait until the server answers at ``address:port`` from here (a firewall or NAT may be in the way)."""
    deadline = time.monotonic() + SERVER_WAIT_S
    while True:
        with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as s:
            s.settimeout(2)
            if s.connect_ex((address, port)) == 0:
                return
        if time.monotonic() > deadline:
            raise ExecutionError(f"{name}: the server on {listening} cannot be reached from here at {address}:{port}",
                                 hint="is a firewall in the way?")
        time.sleep(0.1)
