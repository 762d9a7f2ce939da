"""A client group and the one target they share: the scale-out unit (one job from many clients).

Many-client tools are judged by system-wide figures, so a profile with ``shared:`` runs each
job once on every client at the same time (fio's client/server mode) against one target that
every client mounts, instead of once per machine.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .targets import Target, TargetModel
from .workload import Strict, named


class AnfVolume(Strict):
    """An Azure NetApp Files volume diskbench creates for the run (and deletes with it)."""

    service_level: Literal["Standard", "Premium", "Ultra"] = "Premium"
    size_gib: int = Field(4096, ge=50, le=102400, description="volume quota in GiB (pool >= 1 TiB)")
    throughput_mibps: float | None = Field(
        None, gt=0, description="manual QoS throughput; default: the service level's (auto QoS)")
    protocol: Literal["NFSv3", "NFSv4.1"] = "NFSv3"
    options: str | None = Field(None, description="mount options (default: the seed's NFSv3 options)")


class Shared(Strict):
    """The client group and its shared target."""

    name: str = Field("clients", description="the group's name in results (the 'host' of merged rows)")
    clients: list[str] | None = Field(None, description="hosts or machines in the group (default all)")
    target: Target | None = Field(None, description="the shared target, e.g. {nfs: 10.0.0.4:/export}")
    anf: AnfVolume | None = Field(None, description="an Azure NetApp Files volume made for the run")
    port: int = Field(8765, ge=1, le=65535, description="port of fio --server on every client")
    ports: dict[str, int] = Field(default_factory=dict, description="per client, the port this machine "
                                  "reaches its fio --server at, where a NAT forwards another one")
    randrepeat: bool = Field(False, description="keep fio's default randrepeat=1 (same offsets on every "
                             "client: served from the server's cache)")

    @model_validator(mode="after")
    def _one_target(self) -> Shared:
        named("group")(self.name)
        if (self.target is None) == (self.anf is None):
            raise ValueError("shared needs either target: or anf:")
        return self

    @property
    def target_model(self) -> TargetModel | None:
        return self.target
