"""The schema of an OpenStack machine in a profile: cloud, flavor, image, network, volumes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...profile.machines import MachineBase
from ...profile.workload import Strict


class Volume(Strict):
    size_gb: int = Field(ge=1)
    type: str | None = Field(None, description="Cinder volume type (default: the cloud's)")
    count: int = Field(1, ge=1, le=26)


class Machine(MachineBase):
    """A server to create on an OpenStack cloud (OVHcloud, any other), and its storage targets."""

    provider: Literal["openstack"]
    cloud: str | None = Field(None, description="a clouds.yaml entry (default: OS_CLOUD or OS_* variables)")
    flavor: str = Field(description="flavor name or id, e.g. i1-180")
    image: str = Field(description="image name or id")
    network: str = Field(description="network name or id the server's address is on")
    key_name: str | None = Field(None, description="an existing keypair instead of the run's own")
    security_group: str | None = Field(None, description="an existing security group instead of the run's own")
    availability_zone: str | None = None
    volumes: list[Volume] = Field(default_factory=list, description="Cinder volumes attached, as LUN 0, 1, ...")
    user: str | None = Field(None, description="login user (default: from the image)")
    price_per_hour: float | None = Field(None, ge=0, description="the flavor's price, for plan (no price API)")
