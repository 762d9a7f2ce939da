"""Delete everything of a run, found again by its run id; and find what runs left behind.

Servers first (waiting until they are gone, which detaches their volumes and frees the security
group), then volumes, the keypair and the security group. A 409 ("busy") is retried and
"already gone" is fine, so teardown is safe to call twice and works after a crash: it needs
nothing but the run id.

It takes stock first, and crosses off each resource once the cloud confirms it is gone: a user
who stops waiting (a second Ctrl-C) is told exactly what is left, with ids.

``release_machine`` does the same for one machine the moment its last job ends (its server and
volumes, found by its name and labels): the run's keypair and security group are shared by its
machines and stay for the teardown at the end. What a release deleted is gone before the journal
says so, so the teardown's listing never finds it, and never touches it again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import partial
from typing import TYPE_CHECKING, Any

from diskbench.errors import DiskbenchError

from ..lifecycle import DEFAULT_LIFETIME, MARKER, stale, when
from .journal import Journal
from .session import Waits, explained, find
from .spec import Leftover, run_prefix, run_tag, server_name

if TYPE_CHECKING:
    from openstack.connection import Connection


@dataclass
class Left:
    """What a teardown found and the cloud has not confirmed deleted: ``kind name (id ...)`` each."""

    items: dict[str, str] = field(default_factory=dict)  # kind:id -> the line that names it

    def found(self, kind: str, name: str, rid: str | None = None) -> None:
        self.items[f"{kind}:{rid or name}"] = f"{kind} {name} (id {rid})" if rid else f"{kind} {name}"

    def gone(self, kind: str, rid: str) -> None:
        self.items.pop(f"{kind}:{rid}", None)

    def lines(self) -> list[str]:
        return list(self.items.values())


Step = Callable[["Connection", str, Waits, Callable[[str], None], Left], list[str]]


def teardown(conn: Connection, run_id: str, *, journal: Journal | None = None, waits: Waits | None = None,
             line: Callable[[str], None] = lambda text: None, left: Left | None = None) -> list[str]:
    """Delete the run's servers, volumes, keypair and security group; returns what was deleted.

    ``left`` (filled here) holds what is not deleted yet, for a caller whose wait was stopped."""
    waits = waits or Waits()
    left = left if left is not None else Left()
    deleted: list[str] = []
    failures: list[str] = []
    _take_stock(conn, run_id, left)
    steps: list[Step] = [_servers, _volumes, _keypair, _security_group]
    for step in steps:
        try:
            deleted += step(conn, run_id, waits, line, left)
        except DiskbenchError as exc:
            failures.append(str(exc))
    if failures:
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        raise DiskbenchError(f"run {run_id}: not everything was deleted: {failures[0]}{more}",
                             hint=f"run `diskbench cleanup --run {run_id}` again, or delete the "
                                  f"{run_prefix(run_id)}* resources with the openstack CLI")
    if journal is not None:
        journal.write("deleted", run=run_id)
    return deleted


def _take_stock(conn: Connection, run_id: str, left: Left) -> None:
    """Everything of the run, before any of it is deleted. A cloud that does not answer here is
    left to the steps, which list again and report their own failures."""
    with suppress(DiskbenchError), explained(f"run {run_id}: listing what it created"):
        for s in run_servers(conn, run_id):
            left.found("server", s.name, s.id)
        for v in run_volumes(conn, run_id):
            left.found("volume", v.name, v.id)
        name = run_prefix(run_id)
        if find(conn.compute.find_keypair, name) is not None:
            left.found("keypair", name)
        for g in conn.network.security_groups(name=name):
            left.found("security group", name, g.id)


def _ours(meta: dict[str, Any] | None, name: str | None, run_id: str) -> bool:
    """Metadata decides; the name only when the metadata is missing (run ``a`` must not take ``a-2``'s)."""
    meta = meta or {}
    if "diskbench-run" in meta:
        return bool(meta["diskbench-run"] == run_id)
    return bool(name and re.fullmatch(re.escape(run_prefix(run_id)) + r"-[^.]+", name))


def run_servers(conn: Connection, run_id: str) -> list[Any]:
    found = {s.id: s for s in conn.compute.servers(tags=run_tag(run_id))}
    for s in conn.compute.servers(name=f"^{re.escape(run_prefix(run_id))}-"):
        found.setdefault(s.id, s)
    return [s for s in found.values() if _ours(s.metadata, s.name, run_id)]


def run_volumes(conn: Connection, run_id: str) -> list[Any]:
    return [v for v in conn.block_storage.volumes(details=True) if _ours(v.metadata, v.name, run_id)]


def _retry_conflict(action: Callable[[], object], what: str, waits: Waits) -> None:
    """Do ``action``; on 409 (busy) or Cinder's 400 for a volume still detaching, retry ``poll`` apart."""
    from openstack import exceptions as sdk

    for attempt in range(waits.conflict_retries + 1):
        try:
            with explained(what):
                try:
                    action()
                    return
                except sdk.NotFoundException:
                    return  # gone already
                except (sdk.ConflictException, sdk.BadRequestException):
                    if attempt == waits.conflict_retries:
                        raise
        except DiskbenchError:
            if attempt == waits.conflict_retries:
                raise
        waits.stop.wait(waits.poll)


def _gone(get: Callable[[], Any], what: str, waits: Waits, timeout: float) -> None:
    from openstack import exceptions as sdk

    def check() -> bool | None:
        with explained(f"checking {what}"):
            try:
                get()
            except sdk.NotFoundException:
                return True
        return None

    waits.until(f"{what} to be deleted", timeout, check, "the cloud is slow deleting it; run cleanup later")


def _servers(conn: Connection, run_id: str, waits: Waits, line: Callable[[str], None], left: Left) -> list[str]:
    with explained(f"run {run_id}: listing servers"):
        servers = run_servers(conn, run_id)
    return _delete_servers(conn, servers, waits, line, left)


def _delete_servers(conn: Connection, servers: list[Any], waits: Waits, line: Callable[[str], None],
                    left: Left) -> list[str]:
    """Ask for every delete first, then wait for each: servers go in parallel, not one after another."""
    for s in servers:
        left.found("server", s.name, s.id)
        line(f"openstack: deleting server {s.name}")
        _retry_conflict(partial(conn.compute.delete_server, s.id), f"deleting server {s.name}", waits)
    for s in servers:
        _gone(partial(conn.compute.get_server, s.id), f"server {s.name}", waits, waits.delete)
        left.gone("server", s.id)
    return [f"server {s.name}" for s in servers]


def _volumes(conn: Connection, run_id: str, waits: Waits, line: Callable[[str], None], left: Left) -> list[str]:
    with explained(f"run {run_id}: listing volumes"):
        volumes = run_volumes(conn, run_id)
    return _delete_volumes(conn, volumes, waits, line, left)


def _delete_volumes(conn: Connection, volumes: list[Any], waits: Waits, line: Callable[[str], None],
                    left: Left) -> list[str]:
    """Each volume once it is free (its server is gone by now), then wait until all are gone."""
    for v in volumes:
        left.found("volume", v.name, v.id)
        line(f"openstack: deleting volume {v.name}")
        _free(conn, v, waits)
        _retry_conflict(partial(conn.block_storage.delete_volume, v.id), f"deleting volume {v.name}", waits)
    for v in volumes:
        _gone(partial(conn.block_storage.get_volume, v.id), f"volume {v.name}", waits, waits.delete)
        left.gone("volume", v.id)
    return [f"volume {v.name}" for v in volumes]


def _free(conn: Connection, volume: Any, waits: Waits) -> None:
    """Wait until a volume is no longer creating, attached or detaching (its server is gone by now)."""
    from openstack import exceptions as sdk

    def check() -> bool | None:
        with explained(f"checking volume {volume.name}"):
            try:
                status = conn.block_storage.get_volume(volume.id).status
            except sdk.NotFoundException:
                return True
        return True if status in ("available", "error", "error_restoring", "error_extending", "deleting") else None

    waits.until(f"volume {volume.name} to be free", waits.volume, check,
                f"it is still attached; detach it (`openstack volume show {volume.id}`)")


def _keypair(conn: Connection, run_id: str, waits: Waits, line: Callable[[str], None], left: Left) -> list[str]:
    name = run_prefix(run_id)
    with explained(f"run {run_id}: looking up keypair {name}"):
        if find(conn.compute.find_keypair, name) is None:
            left.gone("keypair", name)
            return []
    left.found("keypair", name)
    line(f"openstack: deleting keypair {name}")
    _retry_conflict(lambda: conn.compute.delete_keypair(name, ignore_missing=False), f"deleting keypair {name}",
                    waits)
    left.gone("keypair", name)
    return [f"keypair {name}"]


def _security_group(conn: Connection, run_id: str, waits: Waits, line: Callable[[str], None],
                    left: Left) -> list[str]:
    name = run_prefix(run_id)
    with explained(f"run {run_id}: looking up security group {name}"):
        groups = list(conn.network.security_groups(name=name))
    for g in groups:
        left.found("security group", name, g.id)
        line(f"openstack: deleting security group {name}")
        # Neutron answers 409 "in use" until the ports of deleted servers are gone.
        _retry_conflict(partial(conn.network.delete_security_group, g.id, ignore_missing=False),
                        f"deleting security group {name}", waits)
        left.gone("security group", g.id)
    return [f"security group {name}" for _ in groups]


# --- one machine, while the run goes on ---------------------------------------------------------
def release_machine(conn: Connection, run_id: str, machine: str, *, cloud: str | None = None,
                    journal: Journal | None = None, waits: Waits | None = None,
                    line: Callable[[str], None] = lambda text: None) -> list[str]:
    """Delete ``machine``'s server and volumes, waiting until the cloud confirms each is gone; returns
    what was deleted. The run's keypair and security group are left: other machines use them.

    Found by name and labels, not by what provisioning returned, so a machine whose provisioning
    failed half-way gives back what it got too. Only once everything is gone does the journal say
    the machine is released; a failure or Ctrl-C before that leaves the rest to ``teardown``.
    """
    waits = waits or Waits()
    left = Left()
    with explained(f"{machine}: listing its server and volumes"):
        servers = [s for s in run_servers(conn, run_id) if s.name == server_name(run_id, machine)]
        volumes = [v for v in run_volumes(conn, run_id) if _machine_of(v, run_id) == machine]
    deleted = _delete_servers(conn, servers, waits, line, left)
    deleted += _delete_volumes(conn, volumes, waits, line, left)
    if journal is not None:
        journal.write("released", run=run_id, cloud=cloud, machine=machine,
                      ids=[s.id for s in servers] + [v.id for v in volumes])
    return deleted


def _machine_of(volume: Any, run_id: str) -> str | None:
    """The machine a volume of the run was made for: its label; its name (``<server>-volN``) only
    when the label is missing, as ``_ours`` does for the run."""
    meta = volume.metadata or {}
    if "diskbench-machine" in meta:
        return str(meta["diskbench-machine"])
    found = re.fullmatch(re.escape(run_prefix(run_id)) + r"-(.+)-vol\d+", volume.name or "")
    return found.group(1) if found else None


# --- leftovers --------------------------------------------------------------------------------
def find_leftovers(conn: Connection, *, older_than: timedelta | None = None, run_id: str | None = None,
                   journal: Journal | None = None, now: datetime | None = None) -> list[Leftover]:
    """Runs with resources still in the cloud: past their expiry, older than ``older_than``, named by
    ``run_id``, or open in the journal."""
    now = now or datetime.now(timezone.utc)
    with explained("looking for diskbench's leftovers"):
        runs = _inventory(conn)
    journaled = journal.open_runs() if journal is not None else {}
    out: list[Leftover] = []
    for rid, found in sorted(runs.items()):
        if run_id is not None:
            if rid == run_id:
                out.append(Leftover(rid, f"run {run_id}", found.created, found.expires, found.resources))
            continue
        reason = stale(found.created, found.expires, now, older_than)
        if reason is None and rid not in journaled:
            continue
        found.reason = reason or "in the journal"
        out.append(found)
    if journal is not None:
        for rid in journaled:
            if rid not in runs:
                journal.write("deleted", run=rid)  # nothing of it exists: close the entry
    return out


def _inventory(conn: Connection) -> dict[str, Leftover]:
    """Every diskbench resource in the project, by run id, with the earliest created and expiry times."""
    runs: dict[str, Leftover] = {}

    def add(rid: str, what: str, created: datetime | None, expires: datetime | None) -> None:
        entry = runs.setdefault(rid, Leftover(rid, ""))
        entry.resources.append(what)
        if created is not None and (entry.created is None or created < entry.created):
            entry.created = created
        if expires is not None and (entry.expires is None or expires < entry.expires):
            entry.expires = expires

    for s in conn.compute.servers(tags=MARKER):
        meta = s.metadata or {}
        if "diskbench-run" in meta:
            add(meta["diskbench-run"], f"server {s.name}", when(meta.get("diskbench-created")),
                when(meta.get("diskbench-expires")))
    for v in conn.block_storage.volumes(details=True):
        meta = v.metadata or {}
        if meta.get(MARKER) == "true" and "diskbench-run" in meta:
            add(meta["diskbench-run"], f"volume {v.name}", when(meta.get("diskbench-created")),
                when(meta.get("diskbench-expires")))
    for g in conn.network.security_groups():
        m = re.match(r"diskbench run (\S+): .*expires (\S+);", g.description or "")
        if m and g.name == f"{MARKER}-{m.group(1)}":
            add(m.group(1), f"security group {g.name}", _run_time(m.group(1)), when(m.group(2)))
    for k in conn.compute.keypairs():
        if k.name.startswith(f"{MARKER}-"):
            rid = k.name[len(MARKER) + 1:]
            created = _run_time(rid)
            add(rid, f"keypair {k.name}", created, created + DEFAULT_LIFETIME if created else None)
    return runs


def _run_time(run_id: str) -> datetime | None:
    """diskbench's run ids start with their UTC start time (YYYYMMDD-HHMMSS)."""
    try:
        return datetime.strptime(run_id[:15], "%Y%m%d-%H%M%S").replace(tzinfo=timezone.utc)
    except ValueError:
        return None

