"""A client group and the one target they share: the scale-out unit (one job from many clients).

Many-client tools are judged by system-wide figures, so a profile with ``shared:`` runs each
job once on every client at the same time (the engine's multi-host mode) against one target that
every client mounts, instead of once per machine.

The target is an NFS export any server offers, or a volume a provider makes for the run. Like
``machines:``, the block is assembled from what is installed: each provider brings the schema
of its volume block (``Provider.shared_volumes``) and each engine the keys its multi-host mode
takes (``MultiHost.options``); assembly.py puts them together, and this module names neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field, model_validator

from .targets import Target
from .workload import Strict, named


class VolumeSpec(Strict):
    """What every provider's volume block has besides its own keys: how the clients mount it."""

    options: str | None = Field(None, description="mount options (default: NFSv3, nconnect=8, hard, 256 KiB "
                                "rsize/wsize, tcp)")


@dataclass(frozen=True)
class SharedVolume:
    """The volume block a profile gave, and the provider that makes that volume for the run."""

    key: str  # the block's name under shared:
    provider: str
    spec: VolumeSpec


class SharedBase(Strict):
    """The client group and its shared target: the keys that belong to no provider or engine."""

    volume_blocks: ClassVar[dict[str, str]] = {}  # volume block -> the provider that declared it

    name: str = Field("clients", description="the group's name in results (the 'host' of merged rows)")
    clients: list[str] | None = Field(None, description="hosts or machines in the group (default all)")
    target: Target | None = Field(None, description="the shared target, e.g. {nfs: 10.0.0.4:/export}")
    port: int = Field(8765, ge=1, le=65535, description="port of the engine's server on every client")
    ports: dict[str, int] = Field(default_factory=dict, description="per client, the port this machine "
                                  "reaches its engine server at, where a NAT forwards another one")

    @model_validator(mode="after")
    def _one_target(self) -> SharedBase:
        named("group")(self.name)
        given = [key for key, value in self if key in ("target", *self.volume_blocks) and value is not None]
        if len(given) != 1:
            raise ValueError(f"shared needs either {' or '.join(f'{k}:' for k in ('target', *self.volume_blocks))}")
        return self

    @property
    def volume(self) -> SharedVolume | None:
        """The volume block given instead of ``target:`` (its export is known once the run made it)."""
        for key, value in self:
            if key in self.volume_blocks and isinstance(value, VolumeSpec):
                return SharedVolume(key, self.volume_blocks[key], value)
        return None

    def engine_options(self) -> dict[str, Any]:
        """The keys an engine's multi-host mode added to the block, as the profile gave them."""
        return {key: value for key, value in self
                if key not in SharedBase.model_fields and key not in self.volume_blocks}
