"""What killed runs left behind: found in the store's journal, undone on their hosts.

A run killed with SIGKILL cannot undo what it prepared: a file system stays mounted, an array
assembled, fio's data files lie in the user's folder, an engine may still be running. Its
journal (``store.prepared``) says what each was. ``recover`` undoes an earlier attempt's
leftovers before a resume carries on, and ``clean`` does the same for every run whose process
is gone (``diskbench cleanup``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import registry
from ..errors import DiskbenchError, ExecutionError
from ..executors.base import Executor
from ..executors.local import stop_group
from ..plan import LOCAL
from ..platforms.base import Journal, Platform
from ..store import Store
from ..units import human_bytes
from .recorder import Recorder


def journal(store: Recorder, run_id: str, host: str) -> Journal:
    """The journal of ``run_id`` on ``host``, with what earlier attempts wrote down there."""
    return Journal(lambda kind, what, detail: store.add_prepared(run_id, host, kind, what, detail),
                   store.release_prepared, store.prepared(run_id, host))


def stop_local_engines(folder: Path, line: Callable[[str], None]) -> int:
    """Engines an earlier, killed attempt started on this machine, stopped as Ctrl-C would, then
    harder; how many process groups were running. They are found by their command lines, which
    name the run's artifacts folder (job file, output): also one that started a moment after
    diskbench was killed, before it wrote its ``engine.pid``."""
    mark = str(folder).encode()
    groups: set[int] = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        pid = int(cmdline.parent.name)
        try:
            if mark in cmdline.read_bytes() and pid != os.getpid():
                groups.add(os.getpgid(pid))
        except OSError:
            continue
    groups.discard(os.getpgid(0))
    for pgid in sorted(groups):
        line(f"local: stopping an engine an earlier attempt left running (process group {pgid})")
        stop_group(pgid)
    return len(groups)


def recover(ex: Executor, platform: Platform, entries: list[dict[str, Any]], store: Recorder,
            line: Callable[[str], None], engines: Path | None = None) -> list[dict[str, Any]]:
    """Undo the open ``entries`` (newest first: a mount before the array under it); each undone is
    released in the store. ``engines``: this machine's artifacts of the run, whose leftover engines
    are stopped first (and again before a second try: on a loaded machine a killed diskbench's
    last engine can start a moment after it died). Returns the entries that could not be undone."""
    left = entries
    for attempt in range(2):
        if engines is not None:
            if attempt:
                time.sleep(1.0)
            stop_local_engines(engines, line)
        left = _undo_all(ex, platform, left, store, line if attempt else _quiet_busy(line))
        if not left:
            break
    return left


def _quiet_busy(line: Callable[[str], None]) -> Callable[[str], None]:
    """``line`` without "busy" complaints (a first try that a second one may mend)."""
    return lambda text: None if "busy" in text else line(text)


def _undo_all(ex: Executor, platform: Platform, entries: list[dict[str, Any]], store: Recorder,
              line: Callable[[str], None]) -> list[dict[str, Any]]:
    left = []
    for entry in sorted(entries, key=lambda e: int(e["id"]), reverse=True):
        try:
            done = remove_files(ex, platform, entry, line) if entry["kind"] == "files" else \
                platform.undo(ex, entry, line)
        except DiskbenchError as exc:
            line(f"{ex.name}: could not undo {entry['kind']} {entry['what']}: {exc}")
            done = False
        if done:
            store.release_prepared(int(entry["id"]))
        else:
            left.append(entry)
    return left


def remove_files(ex: Executor, platform: Platform, entry: dict[str, Any], line: Callable[[str], None]) -> bool:
    """The data files a run laid out in a user's folder (not there before it, with its engines'
    names for its workloads) removed."""
    directory, detail = str(entry["what"]), entry["detail"]
    now = platform.list_files(ex, directory)
    if now is None:
        return not platform.is_dir(ex, directory)  # the folder is gone: so are the files
    names = laid_out(now, detail)
    if names:
        platform.remove_files(ex, directory, names)
        line(f"{ex.name}: removed {len(names)} data file(s), {human_bytes(sum(now[n] for n in names))}, "
             f"that run {entry['run_id']} laid out in {directory}")
    return True


def laid_out(files: dict[str, int], detail: dict[str, Any]) -> list[str]:
    """Of ``files`` in a folder, those a run laid out there: new since it started, and named as
    one of its engines names a data file of one of its workloads."""
    before = set(detail.get("before") or [])
    workloads = list(detail.get("workloads") or [])
    engines = [registry.engines.get(name) for name in detail.get("engines") or [] if name in registry.engines.names()]
    return sorted(n for n in files if n not in before and any(e.data_file(n, workloads) for e in engines))


def clean(store: Store, *, run_id: str | None, dry_run: bool, line: Callable[[str], None],
          known_hosts: str | None = None) -> tuple[list[str], list[str]]:
    """Undo what dead runs (no live process holds them) left on this machine and on their SSH
    hosts; (what was undone or would be, what could not be), one line each."""
    done: list[str] = []
    failed: list[str] = []
    by_host: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for entry in store.prepared(run_id, open_only=True):
        by_host.setdefault((str(entry["run_id"]), str(entry["host"])), []).append(entry)
    runs = {rid: store.get_run(rid) for rid, _ in by_host}
    for (rid, host), entries in by_host.items():
        entries = [e for e in entries if e["kind"] != "filesystem"]  # nothing to undo: it stays on its disk
        if runs[rid]["status"] == "running" or not entries:
            continue  # a live process holds the run: its leftovers are its own business
        if dry_run:
            done += [f"would undo on {host}: {e['kind']} {e['what']} (run {rid})" for e in entries]
            continue
        try:
            ex = _reach(host, runs[rid], store, known_hosts, line)
        except DiskbenchError as exc:
            failed.append(f"{host}: {exc} (run {rid} left {', '.join(e['kind'] + ' ' + e['what'] for e in entries)})")
            continue
        try:
            folder = store.run_artifacts(rid) if host == LOCAL else None
            left = recover(ex, registry.platforms.get(ex.platform), entries, store, line, folder)
        finally:
            ex.close()
        gone = [e for e in entries if e not in left]
        done += [f"undid on {host}: {e['kind']} {e['what']} (run {rid})" for e in gone]
        failed += [f"{host}: could not undo {e['kind']} {e['what']} (run {rid})" for e in left]
    return done, failed


def _reach(host: str, run: dict[str, Any], store: Store, known_hosts: str | None,
           line: Callable[[str], None]) -> Executor:
    """This machine, or an SSH host of the run's profile or ``--host`` list, its key verified as a
    run verifies it (the user's known_hosts, or the run's own ``--known-hosts`` as resume takes it,
    and diskbench's own)."""
    if host == LOCAL:
        from ..executors.local import LocalExecutor

        return LocalExecutor()
    from ..executors.hostkeys import HostKeyTrust
    from ..executors.ssh import SSHExecutor
    from ..profile import Host, parse_profile

    hosts = [Host.model_validate(h) for h in run["options"].get("hosts") or []]
    if run.get("profile_text"):
        hosts += parse_profile(run["profile_text"], run.get("profile_path") or run["profile"]).hosts
    found = next((h for h in hosts if h.name == host), None)
    if found is None:
        raise ExecutionError(f"{host} was made by a cloud provider or is not in run {run['id']}'s profile",
                             hint="a machine the run created is deleted with its cloud resources")
    trust = HostKeyTrust(known_hosts=known_hosts or run["options"].get("known_hosts"),
                         diskbench_known_hosts=store.path.parent / "known_hosts")
    return SSHExecutor(found, trust, on_event=line).connect()
