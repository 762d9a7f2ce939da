"""The OpenStack provider: profile schema, pre-flight, servers with pinned host keys, teardown.

The cloud layer (connect, preflight, provision, teardown, find_leftovers) lives beside this
file; here it is fitted to the provider seam: one ``OpenStackRun`` per run provisions each
machine in its own thread and hands the SSH path a host whose key came from the console.
A machine whose last job ended is released at once (its server and volumes deleted) while the
others run on, so it stops costing money; the run's keypair and security group, shared by its
machines, go with the teardown at the end. Teardown waits until the cloud confirms each delete;
a second Ctrl-C stops that wait and says what is left, by id, and the command that deletes it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import DiskbenchError, ProfileError
from ..base import MachineCost, MachineUse, NotConfigured, Provider, ProviderRun, RunContext, StopWaiting

if TYPE_CHECKING:
    import click
    from pydantic import BaseModel

    from ...attribution.limit import Limit
    from ...executors.base import Executor
    from ...executors.hostkeys import HostKeyTrust
    from ...plan import Plan, Unit
    from ...platforms.base import DeviceMap
    from ...profile import MachineBase
    from ...profile.targets import TargetModel
    from .schema import Machine
    from .spec import Created, Spec

JOURNAL = "openstack-journal.jsonl"
PROVISION_OVERHEAD_MIN = 5.0


def spec_of(m: Machine) -> Spec:
    from .spec import Spec, VolumeSpec

    return Spec(name=m.name, flavor=m.flavor, image=m.image, network=m.network, cloud=m.cloud,
                key_name=m.key_name, security_group=m.security_group, availability_zone=m.availability_zone,
                volumes=tuple(VolumeSpec(v.size_gb, v.type, v.count) for v in m.volumes), user=m.user)


class OpenStackRun(ProviderRun):
    def __init__(self, ctx: RunContext, cidr: str) -> None:
        super().__init__()
        from ...executors.keys import KeyPair
        from .session import Waits

        self.ctx, self.cidr = ctx, cidr
        self.login = KeyPair.generate(f"diskbench-{ctx.run_id}")
        self.key_file = ctx.state_dir / "keys" / ctx.run_id / "id_ed25519"
        _write_private(self.key_file, self.login.private_openssh)
        self.waits = Waits(stop=self.stopping, **ctx.options.get("openstack_waits", {}))
        self._conns: dict[str | None, Any] = {}
        self._created: dict[str, Created] = {}
        self._clouds: dict[str, str | None] = {}  # machine -> its cloud, for its release
        self._lock = threading.Lock()
        self.flavors: dict[str, Any] = {}
        self._qos: dict[str | None, tuple[dict[str, dict[str, float]], str | None]] = {}

    def _conn(self, cloud: str | None) -> Any:
        from .session import connect

        with self._lock:
            if cloud not in self._conns:
                self._conns[cloud] = connect(cloud)
            return self._conns[cloud]

    def begin(self, machines: list[MachineBase]) -> None:
        from .preflight import preflight
        from .schema import Machine

        mine = [m for m in machines if isinstance(m, Machine)]
        problems = []
        for cloud in dict.fromkeys(m.cloud for m in mine):
            problems += preflight(self._conn(cloud), [spec_of(m) for m in mine if m.cloud == cloud], self.flavors)
        if problems:
            for p in problems:
                self.ctx.line(f"pre-flight: {p}")
            raise ProfileError(f"{len(problems)} pre-flight problem(s) against the cloud; nothing was created",
                               hint="see the lines above")
        for cloud in dict.fromkeys(m.cloud for m in mine):
            self._learn_qos(cloud, {v.type or "" for m in mine if m.cloud == cloud for v in m.volumes})

    def _learn_qos(self, cloud: str | None, types: set[str]) -> None:
        from .limits import volume_qos

        if not types:
            return
        qos, default, note = volume_qos(self._conn(cloud), types)
        self._qos[cloud] = (qos, default)
        if note:
            self.ctx.line(f"note: {note}")

    def limits(self, machine: MachineBase | None, target: TargetModel) -> list[Limit] | None:
        from .limits import target_limits
        from .schema import Machine

        if not isinstance(machine, Machine):
            return None
        flavor = next((f for f in self.flavors.values() if machine.flavor in (f.name, f.id)), None)
        qos, default = self._qos.get(machine.cloud, ({}, None))
        return target_limits(machine, target, flavor, qos, default)

    def acquire(self, job: Unit, trust: HostKeyTrust) -> tuple[Executor, Unit]:
        from ...profile import Host
        from .journal import Journal
        from .provision import provision
        from .schema import Machine

        assert isinstance(job.entry, Machine)
        m = job.entry
        self.ctx.line(f"{m.name}: creating a {m.flavor} server")
        with self._lock:  # billed from here on, also when creating fails half-way (its release says)
            self._clouds[m.name] = m.cloud
            self.used[m.name] = MachineUse(m.name, m.flavor, time.time(), m.price_per_hour)
        created = provision(self._conn(m.cloud), self.ctx.run_id, spec_of(m), self.cidr,
                            None if m.key_name else self.login.public_openssh,
                            journal=Journal(self.ctx.state_dir / JOURNAL), waits=self.waits, line=self.ctx.line,
                            teardown_on_error=False)
        with self._lock:
            self._created[m.name] = created
        targets = {name or "target": t for name, t in m.named_targets().items()}
        host = Host(name=m.name, address=created.address, port=created.port, user=created.user,
                    key_file=None if m.key_name else str(self.key_file), sudo=created.user != "root",
                    host_key=created.host_key.fingerprint, install_engine=True, targets=targets)
        self.ctx.line(f"{m.name}: waiting for SSH at {host.address}:{host.port}")
        ex = _wait_ssh(host, trust, self.stopping)
        self.used[m.name].ready = time.time()
        return ex, replace(job, host=host)

    def release(self, machine: str) -> None:
        """Delete the machine's server and its volumes while the other machines run on, so it stops
        costing money; its use ends when the cloud confirms both gone. The run's keypair and security
        group stay (the other servers use them) until the teardown. Ctrl-C, or a failure, leaves what is
        not confirmed gone to the teardown at the end, which finds it by the run id."""
        from .journal import Journal
        from .teardown import release_machine

        use = self.used.get(machine)
        cloud = self._clouds.get(machine)
        conn = self._conns.get(cloud)
        if use is None or use.released is not None or conn is None or self.stopping.is_set():
            return
        self.ctx.line(f"{machine}: its last job is done; deleting its server and volumes")
        try:
            release_machine(conn, self.ctx.run_id, machine, cloud=cloud, journal=Journal(self.ctx.state_dir / JOURNAL),
                            waits=self.waits, line=self.ctx.line)
        except DiskbenchError as exc:
            self.ctx.line(f"{exc}; the teardown at the end of the run deletes what is left of {machine}")
            return
        use.released = time.time()
        self.ctx.line(f"{machine}: deleted ({use.vm_minutes():.1f} VM-minutes)")

    def device_map(self, machine: str) -> DeviceMap | None:
        """Attached volumes as LUN 0, 1, ... in attachment order, by their virtio serial."""
        from ...platforms.base import DeviceMap

        created = self._created.get(machine)
        if created is None or not created.volumes:
            return None
        return DeviceMap(luns=tuple(f"/dev/disk/by-id/virtio-{v.id[:20]}" for v in created.volumes))

    @property
    def holds_resources(self) -> bool:
        return bool(self._conns)

    def teardown(self) -> None:
        from .journal import Journal
        from .session import Waits
        from .teardown import Left, teardown

        left = Left()
        try:
            for conn in list(self._conns.values()):
                teardown(conn, self.ctx.run_id, journal=Journal(self.ctx.state_dir / JOURNAL),
                         waits=Waits(poll=self.waits.poll), line=self.ctx.line, left=left)
        except StopWaiting:
            self._let_go(left.lines())
            raise
        self._conns.clear()
        now = time.time()
        for use in self.used.values():  # whatever was still held went with the teardown
            use.released = use.released if use.released is not None else now

    def _let_go(self, left: list[str]) -> None:
        """The user stopped waiting for the deletes (a second Ctrl-C): what is left, by id, and how it goes."""
        from .spec import run_prefix

        run_id = self.ctx.run_id
        if left:
            self.ctx.line(f"openstack: stopped waiting; left in the cloud by run {run_id}:")
            for item in left:
                self.ctx.line(f"openstack:   {item}")
        else:
            self.ctx.line(f"openstack: stopped waiting; run {run_id} may have left resources named "
                          f"{run_prefix(run_id)}*")
        self.ctx.line(f"openstack: delete them with `diskbench cleanup --provider openstack --run {run_id}`")
        self._conns.clear()  # let go: the run's own teardown does not wait again

    def keep_note(self) -> str:
        return (f"kept the servers of run {self.ctx.run_id}; delete them with `diskbench cleanup --run "
                f"{self.ctx.run_id}`; log in with ssh -i {self.key_file}")

    def facts(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {"openstack_flavors": {name: asdict(info) for name, info in self.flavors.items()}}


def _wait_ssh(host: Any, trust: HostKeyTrust, stopping: threading.Event, timeout: float = 600.0) -> Executor:
    """The server is ACTIVE and its key printed; sshd may still be starting."""
    import time

    from ...errors import ExecutionError
    from ...executors.ssh import SSHExecutor

    deadline = time.monotonic() + timeout
    while True:
        if stopping.is_set():
            raise ExecutionError(f"{host.name}: interrupted while waiting for SSH")
        try:
            return SSHExecutor(host, trust, connect_timeout=10).connect()
        except ExecutionError as exc:
            if "host key" in str(exc) or time.monotonic() > deadline:
                raise
            stopping.wait(2)


def _write_private(path: Path, text: str) -> None:
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


class OpenStackProvider(Provider):
    name: ClassVar[str] = "openstack"
    creates_machines: ClassVar[bool] = True

    def machine_schema(self) -> type[BaseModel]:
        from .schema import Machine

        return Machine

    def describe(self, machine: MachineBase) -> tuple[str, str]:
        from .schema import Machine

        assert isinstance(machine, Machine)
        volumes = [f"{v.count}x {v.size_gb}G{' ' + v.type if v.type else ''}" for v in machine.volumes]
        return machine.flavor, ", ".join(["local disks of the flavor", *volumes])

    def costs(self, plan: Plan, *, refresh: bool, line: Callable[[str], None]) -> tuple[list[MachineCost], str]:
        from .schema import Machine

        minutes: dict[str, float] = {}
        specs: dict[str, Machine] = {}
        for job in plan.units:
            if isinstance(job.entry, Machine):
                minutes[job.machine] = minutes.get(job.machine, PROVISION_OVERHEAD_MIN) + job.expected_s / 60
                specs[job.machine] = job.entry
        out = []
        for name, m in specs.items():
            usd = None if m.price_per_hour is None else minutes[name] / 60 * m.price_per_hour
            out.append(MachineCost(name, m.flavor, minutes[name], usd,
                                   "" if usd is not None else "no price_per_hour in the profile"))
        return out, "prices: price_per_hour from the profile (OpenStack has no price API)"

    def run_options(self) -> list[Callable[[click.Command], click.Command]]:
        import click

        return [click.option("--ssh-source", metavar="CIDR|any",
                             help="Who may reach the machines' SSH port (default: your detected public address).")]

    def start(self, ctx: RunContext) -> ProviderRun:
        from ..network import detect_public_address, ssh_source

        source = ctx.options.get("ssh_source")
        return OpenStackRun(ctx, ssh_source(source) if source else detect_public_address())

    def configured(self, options: dict[str, Any], *, state_dir: Path) -> str | None:
        if _clouds(state_dir):
            return None
        return "no cloud to look in: set OS_CLOUD to a clouds.yaml entry, or source your project's openrc file"

    def cleanup(self, options: dict[str, Any], *, state_dir: Path, run_id: str | None, older_than: float | None,
                dry_run: bool, line: Callable[[str], None]) -> list[str]:
        from datetime import timedelta

        from .journal import Journal
        from .teardown import find_leftovers, teardown

        journal_path = state_dir / JOURNAL
        age = timedelta(seconds=older_than) if older_than is not None else None
        done = []
        for cloud, conn in _logged_in(_clouds(state_dir), line):
            for left in find_leftovers(conn, older_than=age, run_id=run_id, journal=Journal(journal_path)):
                what = f"run {left.run_id} on {cloud or 'the OS_* cloud'} ({left.reason}: {', '.join(left.resources)})"
                if dry_run:
                    done.append(f"would delete {what}")
                    continue
                teardown(conn, left.run_id, journal=Journal(journal_path), line=line)
                done.append(f"deleted {what}")
        return done


def _clouds(state_dir: Path) -> list[str | None]:
    """Where leftovers can be: the clouds of runs the journal has open, and the OS_* environment's
    (None) when it names one."""
    import os

    from .journal import Journal

    clouds = list(dict.fromkeys(e.get("cloud") for e in Journal(state_dir / JOURNAL).open_runs().values()))
    if (os.environ.get("OS_CLOUD") or os.environ.get("OS_AUTH_URL")) and None not in clouds:
        clouds.append(None)
    return clouds


def _logged_in(clouds: list[str | None], line: Callable[[str], None]) -> list[tuple[str | None, Any]]:
    """A connection to each cloud that lets diskbench log in; one that does not is skipped with a line,
    and when none does, the provider is (``NotConfigured``)."""
    from ...errors import DiskbenchError
    from .session import connect

    out: list[tuple[str | None, Any]] = []
    refused: list[str] = []
    for cloud in clouds:
        try:
            out.append((cloud, connect(cloud)))
        except DiskbenchError as exc:
            refused.append(f"{cloud or 'the OS_* cloud'}: {exc}")
    if refused and not out:
        raise NotConfigured(f"could not log in to {refused[0]}")
    for why in refused:
        line(f"openstack: skipped {why}")
    return out
