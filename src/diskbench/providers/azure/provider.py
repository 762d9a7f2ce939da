"""Create a run's VMs, hand them to the SSH path as hosts, and always delete them.

Order matters for safety: pre-flight (nothing created if anything is wrong), the journal entry,
the tagged resource group, the network, then all VMs in parallel. Teardown deletes the group,
which takes everything in it.

Once the group exists, every error says so (and how it goes away). Ctrl-C ends the waits for
Azure's long-running operations at once: their resources go with the group, and the errors the
group's delete causes in them are not the user's news. A second Ctrl-C during the teardown stops
waiting for the delete and says what is left.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from azure.core.exceptions import ServiceResponseError

from ...errors import DiskbenchError, ExecutionError, ProfileError
from ...executors.hostkeys import HostKeyTrust
from ...executors.keys import KeyPair
from ...executors.ssh import SSHExecutor
from ...plan import Unit
from ...profile import Host, MachineBase
from ..base import MachineUse, ProviderRun, StopWaiting
from .anf import AnfResources, AnfVolume
from .errors import arm
from .groups import DEFAULT_LIFETIME, Journal, create_group, delete_group, group_name, tags
from .netspec import nic_body, nsg_body, public_ip_body, vnet_body
from .schema import Machine
from .session import AzureSession
from .sizes import SizeInfo
from .skus import online_problems
from .vmspec import ADMIN_USER, vm_body

if TYPE_CHECKING:
    from pydantic import BaseModel


class AzureRun(ProviderRun):
    """One run's Azure machines: pre-flight, group and network, VMs in parallel, teardown."""

    def __init__(self, session: AzureSession, journal: Journal, run_id: str, keys_dir: Path, *,
                 ssh_source: str, line: Callable[[str], None], lifetime: timedelta = DEFAULT_LIFETIME,
                 ready_timeout: float = 1200.0) -> None:
        super().__init__()
        self.session, self.journal, self.run_id = session, journal, run_id
        self.ssh_source, self.line, self.lifetime = ssh_source, line, lifetime
        self.ready_timeout = ready_timeout
        self.group: str | None = None
        self.tags = tags(run_id, lifetime=lifetime)
        self.login = KeyPair.generate(f"diskbench-{run_id}")
        self.key_file = keys_dir / run_id / "id_ed25519"
        self.key_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(self.login.private_openssh)
        self._subnets: dict[str, str] = {}
        self._lock = threading.Lock()
        self.capabilities: dict[str, SizeInfo] = {}  # live, from the SKU API: saved with the run
        self.region: str | None = None
        self.anf: AnfResources | None = None  # a scale-out run's NetApp volume (profile shared: anf:)
        self._hourly: dict[str, float | None] = {}  # each machine's price per hour, from plan's table

    # --- before the VMs ---------------------------------------------------------------------
    def begin(self, machines: list[MachineBase]) -> None:
        """Pre-flight, then the group and one network per region. Nothing exists if pre-flight fails."""
        mine = [m for m in machines if isinstance(m, Machine)]
        with arm("pre-flight against the subscription"):
            problems = online_problems(self.session, mine, self.capabilities)
        if problems:
            for p in problems:
                self.line(f"pre-flight: {p}")
            raise ProfileError(f"{len(problems)} pre-flight problem(s) against the subscription; nothing was "
                               "created", hint="see the lines above")
        self._hourly = _hourly(mine)
        region = self.region = mine[0].region
        with arm("creating the resource group"):
            self._create_group(region)
        self.line(f"azure: resource group {self.group} in {region}")
        with arm("creating the network", self._exists()):
            for r in dict.fromkeys(m.region for m in mine):
                self._network(r)

    def _create_group(self, region: str) -> None:
        try:
            self.group = create_group(self.session, self.journal, self.run_id, region, self.lifetime)
        except ServiceResponseError:
            self.group = group_name(self.run_id)  # the answer was lost, not the request: teardown deletes it
            raise

    def _exists(self) -> str | None:
        """What exists while the run goes on, for its error lines (None: nothing yet)."""
        return f"resource group {self.group} exists; diskbench deletes it as the run ends" if self.group else None

    def _left_behind(self) -> str:
        return (f"resource group {self.group} is left behind: delete it with `{self._cleanup_command()}` "
                f"or `az group delete -n {self.group}`")

    def _cleanup_command(self) -> str:
        return f"diskbench cleanup --provider azure --run {self.run_id}"

    def _network(self, region: str) -> None:
        net = self.session.network
        nsg = net.network_security_groups.begin_create_or_update(
            self.group, f"nsg-{region}", nsg_body(region, self.tags, self.ssh_source)).result()
        vnet = net.virtual_networks.begin_create_or_update(
            self.group, f"vnet-{region}", vnet_body(region, self.tags, nsg.id)).result()
        self._subnets[region] = vnet.subnets[0].id

    def shared_volume(self, spec: BaseModel) -> str:
        """An Azure NetApp Files volume in the run's group and VNet; its export ``ADDRESS:/PATH``."""
        from .anf import online_problems

        if not isinstance(spec, AnfVolume):
            return super().shared_volume(spec)
        assert self.group is not None and self.region is not None
        with arm("checking the NetApp quota", self._exists()):
            problems = online_problems(self.session, spec, self.region)
        if problems:
            raise ProfileError(problems[0] + "; no volume was created")
        self.anf = AnfResources(self.session, self.group, self.region, self.tags, self.run_id, self.line)
        with arm("creating the Azure NetApp Files volume", self._exists()):
            return self.anf.create(spec, f"vnet-{self.region}")

    # --- one VM -----------------------------------------------------------------------------
    def create(self, m: Machine) -> Host:
        """Public IP, NIC and VM; returns the host to benchmark, its host key already known."""
        assert self.group is not None
        host_key = KeyPair.generate(f"{m.name}-host")
        group = self.group
        try:
            with arm(f"{m.name}: creating {m.size}", self._exists()):
                address = self._resources(m, group, host_key)
        except DiskbenchError:
            if self.stopping.is_set():  # see _done: the group's delete makes creating fail
                raise _stopped(m.name, group) from None
            raise
        targets = {name or "target": t for name, t in m.named_targets().items()}
        return Host(name=m.name, address=address, user=ADMIN_USER, key_file=str(self.key_file),
                    sudo=m.os != "windows", host_key=host_key.fingerprint, install_engine=True, targets=targets,
                    platform=m.os)

    def _resources(self, m: Machine, group: str, host_key: KeyPair) -> str:
        """The VM's public IP, NIC, VM (and a Windows VM's SSH extension); its public address."""
        done = partial(self._done, m.name, group)
        pip = done(self.session.network.public_ip_addresses.begin_create_or_update(
            group, f"{m.name}-ip", public_ip_body(m.region, self.tags, m.zone)))
        nic = done(self.session.network.network_interfaces.begin_create_or_update(
            group, f"{m.name}-nic", nic_body(m.region, self.tags, self._subnets[m.region], pip.id)))
        self.line(f"{m.name}: creating {m.size}")
        self.used[m.name] = MachineUse(m.name, m.size, time.time(), self._hourly.get(m.name))  # billed from here
        done(self.session.compute.virtual_machines.begin_create_or_update(
            group, m.name, vm_body(m, tags=self.tags, nic_id=nic.id, login=self.login, host_key=host_key,
                                   size=self._size(m.size))))
        if m.os == "windows":
            from .winspec import EXTENSION, extension_body

            self.line(f"{m.name}: setting up OpenSSH (custom script extension)")
            done(self.session.compute.virtual_machine_extensions.begin_create_or_update(
                group, m.name, EXTENSION, extension_body(m, tags=self.tags, login=self.login, host_key=host_key)))
        address: str = self.session.network.public_ip_addresses.get(group, f"{m.name}-ip").ip_address
        return address

    def _size(self, name: str) -> SizeInfo | None:
        """The size as pre-flight read it from the SKU API (None: not read; the size data then answers)."""
        return self.capabilities.get(name) or next(
            (info for key, info in self.capabilities.items() if key.lower() == name.lower()), None)

    def _done(self, machine: str, group: str, poller: Any) -> Any:
        """The result of a long-running operation of ``machine``'s creation.

        Ctrl-C (``stopping``) ends the wait at once: the teardown deletes the group, and with it
        what was being created. The group's delete makes Azure cancel the operation, which the SDK
        reports as "Operation returned an invalid status 'OK'" (status 200): while stopping, any
        failure is that, and ``create`` says what happened instead.
        """
        while not poller.done():
            if self.stopping.is_set():
                raise _stopped(machine, group)
            poller.wait(0.2)
        return poller.result()

    def acquire(self, job: Unit, trust: HostKeyTrust) -> tuple[SSHExecutor, Unit]:
        assert isinstance(job.entry, Machine)
        host = self.create(job.entry)
        self.line(f"{job.machine}: waiting for SSH at {host.address} and cloud-init")
        ex = self.wait_ready(host, trust)
        if job.machine in self.used:
            self.used[job.machine].ready = time.time()
        return ex, replace(job, host=host)

    def release(self, machine: str) -> None:
        """Delete the machine's VM (its disks and NIC go with it: deleteOption Delete), then its NIC and
        public IP, while the other machines run on. Azure stops billing the VM when its delete is done.
        Ctrl-C, or a failure, leaves it to the group's delete at the end."""
        use = self.used.get(machine)
        group = self.group
        if group is None or use is None or use.released is not None or self.stopping.is_set():
            return
        net = self.session.network
        self.line(f"{machine}: its last job is done; deleting its VM")
        try:
            with arm(f"{machine}: deleting its VM", self._exists()):
                self._done(machine, group, self.session.compute.virtual_machines.begin_delete(group, machine))
                use.released = time.time()
                self._done(machine, group, net.network_interfaces.begin_delete(group, f"{machine}-nic"))
                self._done(machine, group, net.public_ip_addresses.begin_delete(group, f"{machine}-ip"))
        except DiskbenchError as exc:
            self.line(f"{machine}: {exc}; the delete of {group} at the end of the run takes it")
            return
        self.line(f"{machine}: deleted ({use.vm_minutes():.1f} VM-minutes)")

    @property
    def holds_resources(self) -> bool:
        return self.group is not None

    def facts(self) -> dict[str, Any]:
        return {"azure_sizes": {name: asdict(info) for name, info in self.capabilities.items()}}

    def wait_ready(self, host: Host, trust: HostKeyTrust) -> SSHExecutor:
        """SSH up (with the host key we gave it) and cloud-init finished."""
        deadline = time.monotonic() + self.ready_timeout
        while True:
            if self.stopping.is_set():
                raise ExecutionError(f"{host.name}: interrupted while waiting for SSH")
            try:
                ex = SSHExecutor(host, trust, connect_timeout=10).connect()
                break
            except ExecutionError as exc:
                if "host key" in str(exc) or time.monotonic() > deadline:
                    raise
                self.stopping.wait(2)
        if host.platform == "windows":
            return ex  # set up by the extension, which finished before the VM was handed over
        out = ex.run(["cloud-init", "status", "--wait"], timeout=max(60.0, deadline - time.monotonic()))
        if out.returncode not in (0, 2, 127):  # 2: done with recoverable errors; 127: no cloud-init
            raise ExecutionError(f"{host.name}: cloud-init failed: {(out.stdout + out.stderr).strip()[-200:]}")
        return ex

    # --- the end ----------------------------------------------------------------------------
    def teardown(self) -> None:
        if self.group is None:
            return
        try:
            self._delete()
        except StopWaiting:
            self._let_go()
            raise

    def _delete(self) -> None:
        assert self.group is not None
        left = self._left_behind()
        if self.anf is not None and self.anf.made:  # a pool holding a volume blocks the group's delete
            with arm("deleting the Azure NetApp Files volume, pool and account", left):
                self.anf.delete()
        self.line(f"azure: deleting {self.group} and everything in it")
        with arm(f"deleting {self.group}", left):
            delete_group(self.session, self.journal, self.group)
        now = time.time()
        for use in self.used.values():  # whatever was still held went with the group
            use.released = use.released if use.released is not None else now
        self.line(f"azure: deleted {self.group}")
        self.group = None

    def _let_go(self) -> None:
        """The user stopped waiting for the delete (a second Ctrl-C): what is left, by id, and how it goes."""
        group_id = f"/subscriptions/{self.session.subscription_id}/resourceGroups/{self.group}"
        self.line(f"azure: stopped waiting; left in Azure: resource group {self.group} (id {group_id}) and "
                  "everything in it")
        self.line(f"azure: delete it with `{self._cleanup_command()}` (or `az group delete -n {self.group}`)")
        self.group, self.anf = None, None

    def keep_note(self) -> str:
        return (f"kept resource group {self.group}; delete it with `diskbench cleanup --run {self.run_id}` "
                f"or `az group delete -n {self.group}`; log in with ssh -i {self.key_file} {ADMIN_USER}@<ip>")


def _hourly(machines: list[Machine]) -> dict[str, float | None]:
    """Each machine's VM and disks per hour from the price table ``plan`` uses (None: not priced)."""
    from .pricing import load_prices, machine_hourly

    try:
        regions = load_prices()["regions"]
    except (OSError, ValueError, KeyError):
        return {}
    out: dict[str, float | None] = {}
    for m in machines:
        hourly, missing = machine_hourly(m, regions[m.region]) if m.region in regions else (None, ["region"])
        out[m.name] = None if missing else hourly
    return out


def _stopped(machine: str, group: str) -> ExecutionError:
    return ExecutionError(f"{machine}: creation stopped (Ctrl-C); deleted with resource group {group}")
