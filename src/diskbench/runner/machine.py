"""One machine's part of a run: get it, learn what it is, prepare its targets, run its units.

Targets are prepared once per run and released at the end (unmounted, arrays stopped), also
when a unit fails; the host's workspace is removed and the connection closed. Each unit then
goes the one way every unit goes (``pipeline.run_unit``), its engine on this machine.

A target ``nfs: shared`` is the run's shared volume: its export comes from the run
(``RunState.shared``), and the machine measures it only in its turn, after the client group.
Two mounts of one NFS server are never up at once on the host (the kernel gives every mount of
a server the connections of the first): the one in use is released before the other is mounted.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import registry
from ..attribution.attributor import Attributor, provider_limits
from ..engines.base import Place
from ..errors import DiskbenchError, ExecutionError
from ..executors.base import Executor
from ..plan import LOCAL, Plan, Unit
from ..platforms.base import Journal, Platform, Prepared, Preparer
from ..profile import writes
from ..profile.targets import NfsTarget, TargetModel
from ..units import human_bytes
from .host import cpus, learn
from .leftovers import journal, laid_out, recover
from .one_machine import OneMachine
from .options import RunOptions
from .pipeline import run_unit
from .segments import SegmentLog
from .space import check_room, layout
from .state import RunState

if TYPE_CHECKING:
    from ..attribution.limit import Limit
    from ..executors.hostkeys import HostKeyTrust


class MachineWork:
    def __init__(self, state: RunState, jobs: list[Unit], plan: Plan, options: RunOptions, *,
                 local: Executor | None = None, known: Mapping[str, str | None] | None = None) -> None:
        """``local``: this machine's executor when the machine is this one, and ``known`` the engine
        versions found on it before the run was recorded."""
        self.state, self.jobs, self.plan, self.options = state, jobs, plan, options
        self.machine = jobs[0].machine
        self.store, self.ui = state.store, state.ui
        self.local, self.known = local, known or {}
        self.prun = state.provider_runs[jobs[0].provider]
        provider = registry.providers.get(jobs[0].provider)
        self.attributor = Attributor(provider_limits(self.prun, provider, jobs[0].entry))
        self.prepared: dict[str, Prepared] = {}
        self.versions: dict[str, str | None] = {}
        self._target_facts: dict[str, dict[str, Any]] = {}
        self.laid_out: set[str] = set()  # targets whose files an engine has laid out this run
        self.before: dict[str, dict[str, Any]] = {}  # directory targets: the journal's "files" entry (detail)
        self.files_entry: dict[str, int] = {}
        self.workspace_entry = 0
        self.journal = Journal()
        self.preparer: Preparer | None = None
        self._servers: dict[str, str] = {}  # prepared NFS targets: label -> server
        self._turn: bool | None = None  # its turn on the shared volume: None until taken, False if stopped

    def run(self, trust: HostKeyTrust | None) -> None:
        """Get the machine (its provider creates it if need be), then its part of the run."""
        try:
            ex = self._acquire(trust)
        except DiskbenchError as exc:
            self.state.fail(self.jobs, exc, unreached=True)
            return
        self.state.reach()
        with self.state.active(ex):
            self._work(ex)

    def _acquire(self, trust: HostKeyTrust | None) -> Executor:
        if self.local is not None:
            return self.local
        assert trust is not None
        ex, first = self.prun.acquire(self.jobs[0], trust)
        self.jobs = [replace(j, host=first.host) for j in self.jobs]
        return ex

    def _work(self, ex: Executor) -> None:
        platform = registry.platforms.get(ex.platform)
        self._ex, self._platform = ex, platform
        self.journal = journal(self.store, self.state.run_id, self.machine)
        try:
            self._learn(ex, platform)
            self._recover(ex, platform)
            root = ex.workspace_root(make=True)
            if root is not None:  # written down: a killed run's engines and files there can be found
                self.workspace_entry = self.journal.made("workspace", root)
            preparer = self.preparer = self._preparer(ex, platform)
            with contextlib.ExitStack() as turn:
                for index, job in self.state.units(self.jobs):
                    if self.state.stopped or (job.on_shared and not self._take_turn(turn)):
                        return
                    places = self._places(job, self.jobs[index:], preparer)
                    if places is not None:
                        self._unit(ex, platform, job, places)
        except DiskbenchError as exc:
            self.state.fail_unfinished(self.jobs, exc)
        finally:
            self._release(ex, platform)

    def _release(self, ex: Executor, platform: Platform) -> None:
        try:
            self._remove_laid_out(ex, platform)
        except DiskbenchError as exc:  # never in the way of releasing the targets
            self.ui.line(f"{self.machine}: could not remove the data files it laid out: {exc}")
        for where in self.prepared.values():
            where.release()
        root = ex.workspace_root()
        try:
            if root is not None:  # a remote host: its copies of job files and outputs
                platform.remove_workspace(ex, root)
                self.journal.undone(self.workspace_entry)
        except DiskbenchError as exc:  # the journal keeps it: resume or `cleanup` removes it later
            self.ui.line(f"{self.machine}: could not remove its workspace {root} ({exc}); resume or "
                         "`diskbench cleanup --provider hosts` removes it later")
        finally:
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
        folder = self.store.run_artifacts(self.state.run_id) if self.jobs[0].provider == LOCAL else None
        left = recover(ex, platform, entries, self.store, self.ui.line, folder)
        if left:
            what = ", ".join(f"{e['kind']} {e['what']}" for e in left)
            raise ExecutionError(f"{self.machine}: an earlier attempt of this run left {what}, which could not be "
                                 "undone", hint="see the lines above; `diskbench cleanup --provider hosts` retries")

    def _learn(self, ex: Executor, platform: Platform) -> None:
        """Engines present (installed where allowed), and the host's facts recorded."""
        engines = [registry.engines.get(name) for name in dict.fromkeys(j.engine for j in self.jobs)]
        facts, self.versions = learn(self.store, self.state.run_id, ex, platform, engines, name=self.machine,
                                     host=self.jobs[0].host, line=self.ui.line,
                                     known=self.known)
        self.attributor.cpus = cpus(facts)

    def _preparer(self, ex: Executor, platform: Platform) -> Preparer:
        host = self.jobs[0].host
        allowed = self.plan.destroy_data_on + (host.destroy_data_on if host else [])
        base = self.options.scratch_base if self.jobs[0].provider == LOCAL else None
        devices = registry.providers.get(self.jobs[0].provider).device_map()
        known = self.prun.device_map(self.machine)
        if known is not None:
            devices = known.merged(devices)
        return platform.preparer(ex, devices=devices, allowed=allowed, name=self.machine, run_id=self.state.run_id,
                                 scratch_base=base or platform.default_scratch_base(ex), line=self.ui.line,
                                 journal=self.journal)

    def _take_turn(self, turn: contextlib.ExitStack) -> bool:
        """The machine's turn on the shared volume, held from its first unit there to its last; False
        when the run was stopped while it waited."""
        shared = self.state.shared
        if shared is None or self.machine not in shared.turns:
            return True
        if self._turn is None:
            self._turn = turn.enter_context(shared.turn(self.machine, lambda: self.state.stopped, self.ui.line))
        return self._turn

    def _places(self, job: Unit, rest: list[Unit], preparer: Preparer) -> list[Place] | None:
        """The job's targets prepared (once per run, or again after another mount of the same NFS
        server was in use); None when one cannot be (its units fail)."""
        places = []
        for part in job.jobs:
            label = part.target_label
            if label not in self.prepared:
                uses = [j for j in rest if label in [p.target_label for p in j.jobs]]
                write = any(writes(p.workload.rw) for j in uses for p in j.jobs if p.target_label == label)
                try:
                    target = self._resolved(part.target)
                    self._one_mount_per_server(label, target, job)
                    self.prepared[label] = preparer.prepare(target, write)
                    directory = self.prepared[label].directory
                    if directory:
                        self._room(label, directory, uses, preparer)
                    if part.target.kind == "dir" and directory:
                        self._files_before(label, directory, uses)
                except DiskbenchError as exc:
                    self.state.fail(uses, exc)
                    self._unusable(label)
            where = self.prepared[label]
            if not where.usable:
                return None
            places.append(Place(part.workload, label, where.directory, where.filename))
        return places

    def _room(self, label: str, directory: str, uses: list[Unit], preparer: Preparer) -> None:
        """Before the target's first unit, its units' data files set against its free space, as the host
        reports it now that it is mounted (``space.py``): refused here with one line, not by fio's
        ENOSPC half-way through a job. A raw device (no directory) is not checked."""
        plan = layout(uses, label, preparer.flush_set_bytes)
        existing = self._platform.list_files(self._ex, directory) if plan.unknown is None else None
        check_room(self._platform, self._ex, directory, label, plan, host=self.machine, line=self.ui.line,
                   existing=existing)

    def _unusable(self, label: str) -> None:
        """A target that cannot be used: what was prepared of it is undone now (a mount, an array), not at
        the end of the run, and its units find nothing to run on."""
        failed = self.prepared.get(label)
        if failed is not None:
            failed.release()
        self.prepared[label] = Prepared()

    def _resolved(self, target: TargetModel) -> TargetModel:
        """``nfs: shared`` as the export of the run's shared volume (made first if no part has yet)."""
        if not (isinstance(target, NfsTarget) and target.on_shared):
            return target
        if self.state.shared is None:  # the plan refuses it; a run without the plan's shared: may get here
            raise ExecutionError(f"{self.machine}: nfs: shared, but the run has no shared volume")
        return target.model_copy(update={"nfs": self.state.shared.export()})

    def _one_mount_per_server(self, label: str, target: TargetModel, job: Unit) -> None:
        """Before an NFS target is mounted, another prepared mount of the same server is released (its
        units are done; a later unit mounts it again): the kernel shares one set of TCP connections per
        server among its mounts, made by the first, so the second would run with the first's nconnect."""
        if not isinstance(target, NfsTarget):
            return
        server = nfs_server(target.nfs)
        mounted = {other: self._servers[other] for other in self.prepared if other in self._servers}
        for other in same_server(mounted, label, server, [p.target_label for p in job.jobs], self.machine):
            self.ui.line(f"{self.machine}: releasing {other} before mounting {label} (one mount of {server} at a "
                         "time: every mount of a server shares the first's connections)")
            where = self.prepared.pop(other)
            self._target_facts.pop(where.directory or where.filename or "", None)  # its mount options go with it
            self.laid_out.discard(other)  # its files go with its folder
            where.release()
            del self._servers[other]
        self._servers[label] = server

    def _flush(self, job: Unit, art: Path) -> None:
        """``flush_cache`` on each of the unit's targets (the platform's step), before its engine starts."""
        assert self.preparer is not None
        labels = list(dict.fromkeys(p.target_label for p in job.jobs))
        for label in labels:
            name = "flush" if len(labels) == 1 else f"flush-{re.sub(r'[^A-Za-z0-9._-]+', '_', label)}"
            try:
                self.preparer.flush_cache(self.prepared[label], job.workload.flush_bytes, art, name)
            except DiskbenchError:
                if self.state.stopped:  # stopped by Ctrl-C: the unit is interrupted, not failed
                    return
                raise

    def _files_before(self, label: str, directory: str, uses: list[Unit]) -> None:
        """A user's folder: what is in it before the engines lay out files, written down (so a killed
        run's data files can be told from the user's own and removed later)."""
        before = self._platform.list_files(self._ex, directory)
        if before is None:
            return
        detail = {"before": sorted(before), "engines": sorted({j.engine for j in uses}),
                  "workloads": sorted({p.workload.name for j in uses for p in j.jobs if p.target_label == label})}
        self.before[label] = detail
        self.files_entry[label] = self.journal.made("files", directory, **detail)

    # --- one unit ---------------------------------------------------------------------------
    def _unit(self, ex: Executor, platform: Platform, job: Unit, places: list[Place]) -> bool:
        first = places[0]
        drive = OneMachine(ex, registry.engines.get(job.engine), self.versions.get(job.engine), places,
                           self.attributor, self._facts_of(ex, platform, first.directory or first.filename or "/"),
                           self.laid_out, self.ui.line, lambda: self.state.stopped, self._unit_limits,
                           flush=self._flush, segment_log=SegmentLog(self.state.store, self.state.run_id))
        return run_unit(self.state, job, drive)

    def _facts_of(self, ex: Executor, platform: Platform, path: str) -> dict[str, Any]:
        """Filesystem and disks of a target, looked up once per run (they do not change)."""
        if path not in self._target_facts:
            self._target_facts[path] = platform.target_facts(ex, path)
        return self._target_facts[path]

    def _unit_limits(self, job: Unit) -> list[Limit] | None:
        """The caps of the unit's targets (None when the provider cannot tell)."""
        try:
            return [lim for part in job.jobs for lim in self.attributor.limits_of(part.target)]
        except DiskbenchError:
            return None

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


def nfs_server(export: str) -> str:
    """The server of an NFS export, ``ADDRESS:/PATH`` (an IPv6 address keeps its colons)."""
    return export.rsplit(":/", 1)[0]


def same_server(mounted: dict[str, str], label: str, server: str, in_use: list[str], machine: str) -> list[str]:
    """The prepared NFS targets (``mounted``: label -> server) to release before ``label`` mounts ``server``:
    every other mount of that server. One the same unit uses (``in_use``) cannot be: an error."""
    others = [other for other, at in mounted.items() if other != label and at == server]
    both = [other for other in others if other in in_use]
    if both:
        raise ExecutionError(f"{machine}: {label} and {both[0]} mount the same NFS server ({server}); one unit cannot "
                             "use both at once (every mount of a server shares the first's connections)")
    return others
