"""The schema of an Azure machine in a profile: size, image, OS disk, data disks and caching."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ...profile.machines import MachineBase
from ...profile.workload import Strict


class OsDisk(Strict):
    type: Literal["Premium_LRS", "StandardSSD_LRS", "Standard_LRS"] = "Premium_LRS"
    size_gb: int | None = Field(None, ge=1)
    caching: Literal["None", "ReadOnly", "ReadWrite"] = "ReadWrite"
    ephemeral: Literal["CacheDisk", "ResourceDisk", "NvmeDisk"] | None = None


class DataDisk(Strict):
    count: int = Field(1, ge=1, le=64)
    type: Literal["Premium_LRS", "StandardSSD_LRS", "Standard_LRS", "PremiumV2_LRS", "UltraSSD_LRS"]
    size_gb: int = Field(ge=1)
    caching: Literal["None", "ReadOnly", "ReadWrite"] = "None"
    iops: int | None = Field(None, ge=1)
    mbps: int | None = Field(None, ge=1)


LINUX_IMAGE = "Canonical:ubuntu-24_04-lts:server:latest"
WINDOWS_IMAGE = "MicrosoftWindowsServer:WindowsServer:2022-datacenter-azure-edition:latest"  # Gen2


class Machine(MachineBase):
    """An Azure VM to create, and the storage targets on it that the workloads measure."""

    provider: Literal["azure"] = "azure"
    region: str
    size: str = Field(description="VM size, e.g. Standard_E8ds_v4")
    os: Literal["linux", "windows"] = Field("linux", description="windows: Windows Server with OpenSSH, DiskSpd")
    image: str = Field("", description=f"publisher:offer:sku:version (default {LINUX_IMAGE}, or {WINDOWS_IMAGE})")
    zone: str | None = None
    os_disk: OsDisk = Field(default_factory=OsDisk)
    data_disks: list[DataDisk] = Field(default_factory=list)

    @model_validator(mode="after")
    def _image(self) -> Machine:
        if not self.image:
            self.image = WINDOWS_IMAGE if self.os == "windows" else LINUX_IMAGE
        return self
