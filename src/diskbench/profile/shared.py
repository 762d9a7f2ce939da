"""A client group and the one target they share: the scale-out unit (one job from many clients).

Many-client tools are judged by system-wide figures, so a profile with ``shared:`` runs each
job once on every client at the same time (fio's client/server mode) against one target that
every client mounts, instead of once per machine.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, model_validator

from .targets import Target, TargetModel
from .workload import Strict, named

MIB_PER_TIB = {"Standard": 16.0, "Premium": 64.0, "Ultra": 128.0}  # NetApp service levels, per provisioned TiB


class AnfVolume(Strict):
    """An Azure NetApp Files volume diskbench creates for the run (and deletes with it)."""

    service_level: Literal["Standard", "Premium", "Ultra"] = "Premium"
    size_gib: int = Field(4096, ge=50, le=102400, description="volume quota in GiB (pool >= 1 TiB)")
    throughput_mibps: float | None = Field(
        None, gt=0, description="manual QoS throughput; default: the service level's (auto QoS)")
    protocol: Literal["NFSv3", "NFSv4.1"] = "NFSv3"
    options: str | None = Field(None, description="mount options (default: the seed's NFSv3 options)")

    @property
    def pool_tib(self) -> int:
        """The capacity pool: whole TiB, at least 1, large enough for the volume."""
        return max(1, math.ceil(self.size_gib / 1024))

    @property
    def ceiling_mibps(self) -> float:
        """The most the service level gives: the pool's TiB (manual QoS) or the volume's (auto QoS)."""
        tib = self.pool_tib if self.throughput_mibps is not None else self.size_gib / 1024
        return tib * MIB_PER_TIB[self.service_level]

    @model_validator(mode="after")
    def _throughput(self) -> AnfVolume:
        if self.throughput_mibps is not None and self.throughput_mibps > self.ceiling_mibps:
            raise ValueError(f"{self.throughput_mibps:g} MiB/s is more than a {self.pool_tib} TiB "
                             f"{self.service_level} pool gives ({self.ceiling_mibps:g} MiB/s); raise size_gib "
                             "or the service level")
        return self


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
