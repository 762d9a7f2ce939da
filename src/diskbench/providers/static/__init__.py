"""Hosts that already exist (profile ``hosts:`` or ``--host``), reached over SSH; nothing is created.

A host made by hand may still be a cloud VM, so its device map is that of every installed
provider: ``lun: 0`` on a hand-made Azure VM finds the disk where Azure's images put it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import ExecutionError
from ..base import Provider, ProviderRun, RunContext

if TYPE_CHECKING:
    from ...executors.base import Executor
    from ...executors.hostkeys import HostKeyTrust
    from ...plan import Unit
    from ...platforms.base import DeviceMap
    from ...profile import Host


def known_layouts(exclude: tuple[str, ...] = ()) -> DeviceMap:
    """The device maps of every installed provider, merged (for machines of unknown origin)."""
    from ... import registry
    from ...platforms.base import DeviceMap

    merged = DeviceMap()
    for name in registry.providers.names():
        if name not in (*exclude, "static", "local"):
            merged = merged.merged(registry.providers.get(name).device_map())
    return merged


def parse_destination(dest: str, **fields: Any) -> Host:
    """``user@address[:port]`` -> Host (IPv6 as ``user@[::1]:22``)."""
    from ...profile import Host

    user, _, rest = dest.rpartition("@")
    address, port = rest, 22
    if rest.startswith("["):
        address, _, tail = rest[1:].partition("]")
        port = int(tail[1:]) if tail.startswith(":") else 22
    elif rest.count(":") == 1:
        address, port_text = rest.split(":")
        port = int(port_text)
    if ":" in address:  # IPv6: keep every group visible (``::1`` must not become ``1``)
        name = "ip6-" + address.replace(":", "_")
    else:
        name = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in address).strip("-") or "host"
    return Host(name=name, address=address, port=port, user=user or None, **fields)


class StaticRun(ProviderRun):
    def __init__(self, ctx: RunContext) -> None:
        super().__init__()
        self.ctx = ctx

    def acquire(self, job: Unit, trust: HostKeyTrust) -> tuple[Executor, Unit]:
        from ...executors.ssh import SSHExecutor

        if job.host is None:
            raise ExecutionError(f"{job.machine}: no address to connect to")
        self.ctx.line(f"{job.machine}: connecting to {job.host.address}:{job.host.port}")
        return SSHExecutor(job.host, trust, on_event=self.ctx.line).connect(), job


class StaticProvider(Provider):
    name: ClassVar[str] = "static"

    def device_map(self) -> DeviceMap:
        return known_layouts(exclude=(self.name,))

    def start(self, ctx: RunContext) -> ProviderRun:
        return StaticRun(ctx)
