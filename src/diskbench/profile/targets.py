"""Storage targets: where a workload runs, one model per kind (a discriminated union).

Each kind takes only the keys that mean something for it, so ``{dir: /data, fs: ext4}`` is an
error ("unknown key 'fs'") instead of an ``fs`` silently ignored. What ``temp``, ``lun`` or
``nvme`` are on a given machine is for the machine's provider to say (its device map); how to
prepare them is for the host's platform.
"""

from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from ..text import plain_values, shown
from ..units import MAX_JOB_S, parse_duration, parse_size

TAG_PREFIX = "target:"  # marks the union's tag in validation error locations (stripped for users)


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: ClassVar[str]
    formats: ClassVar[bool] = False  # a device kind: diskbench makes the filesystem and mounts it
    precondition: bool = Field(False, description="write the working set once before measuring")
    warmup: bool | str | None = Field(
        None, description="read the working set before measuring: true (until the rate stops "
        "rising) or a duration such as 10m")

    @model_validator(mode="before")
    @classmethod
    def _plain(cls, data: Any) -> Any:
        return plain_values(data)

    @field_validator("warmup")
    @classmethod
    def _warmup(cls, v: bool | str | None) -> bool | str | None:
        if isinstance(v, str) and parse_duration(v) > MAX_JOB_S:
            raise ValueError(f"{shown(v)} is longer than 30 days")
        return v

    @property
    def value(self) -> Any:
        return getattr(self, self.kind)

    @property
    def label(self) -> str:
        """``scratch``, ``temp``, ``dir:/data``, ``stripe:/dev/sdc+/dev/sdd`` ..."""
        value = self.value
        if value is True:
            return self.kind
        if isinstance(value, list):
            value = "+".join(str(x) for x in value)
        return f"{self.kind}:{value}"


class ScratchTarget(_Base):
    kind = "scratch"
    scratch: Literal[True] = Field(description="a directory diskbench creates and removes")


class DirTarget(_Base):
    kind = "dir"
    dir: str = Field(description="an existing directory")


class TempTarget(_Base):
    kind = "temp"
    temp: Literal[True] = Field(description="the VM's temp (resource) disk, where the provider says it is")
    raw: bool | None = Field(None, description="let the engine use the temp disk itself, striped if several "
                             "(default false: formatted and mounted); only where it comes raw, as NVMe temp "
                             "disks do, never one the image formatted and mounted")


class _DeviceBase(_Base):
    formats = True
    fs: Literal["xfs", "ext4"] | None = Field(None, description="filesystem to create (default xfs)")
    mount: str | None = Field(None, description="mount point (default /mnt/diskbench-NAME)")
    raw: bool | None = Field(None, description="let the engine use the block device itself")


class _ArrayBase(_DeviceBase):
    raid: Literal[0] | None = Field(None, description="RAID level of several devices: 0 (striped), the only one")
    chunk: str | None = Field(None, description="RAID0 chunk size (default 64k for luns:, "
                                 "mdadm's 512k for NVMe and devices)")

    @field_validator("chunk")
    @classmethod
    def _chunk(cls, v: str | None) -> str | None:
        if v is not None and parse_size(v) < 4096:
            raise ValueError(f"{v!r} is not a chunk size of at least 4k")
        return v


class DeviceTarget(_DeviceBase):
    kind = "device"
    device: str = Field(description="a block device, e.g. /dev/nvme0n1")


class StripeTarget(_ArrayBase):
    kind = "stripe"
    stripe: list[str] = Field(min_length=1, description="RAID0 across these devices")


class NvmeTarget(_ArrayBase):
    kind = "nvme"
    nvme: Literal["all"] = Field(description="every local NVMe namespace, striped if several")


class LunTarget(_DeviceBase):
    kind = "lun"
    lun: int = Field(ge=0, description="a data disk by LUN")


class LunsTarget(_ArrayBase):
    kind = "luns"
    luns: list[int] = Field(min_length=1, description="data disks by LUN, striped")


NFS_OPTIONS = "rw,nconnect=8,hard,rsize=262144,wsize=262144,vers=3,tcp"  # the ANF article's mount
SHARED_EXPORT = "shared"  # an NFS target's export that is the run's shared volume (the profile's shared:)


class NfsTarget(_Base):
    """An NFS export any server offers, mounted by diskbench (and unmounted after).

    ``nfs: shared`` is the run's shared volume (``shared:``'s target, or the volume a provider makes
    for the run, whose export is known only once the run made it), mounted by a machine outside the
    client group with this target's own options: one client's view of the group's volume."""

    kind = "nfs"
    nfs: str = Field(pattern=r"^([^\s:]+:/\S*|shared)$", description="the export, ADDRESS:/PATH, or shared: the "
                     "run's shared volume (shared:), mounted with this target's options")
    options: str = Field(NFS_OPTIONS, pattern=r"^[A-Za-z0-9_=,.:/+-]+$", description="mount options (default: NFSv3, "
                         "nconnect=8, hard, 256 KiB rsize/wsize, tcp)")
    mount: str | None = Field(None, description="mount point (default /mnt/diskbench-NAME)")

    @property
    def on_shared(self) -> bool:
        """Whether the export is the run's shared volume (``nfs: shared``), resolved when the run has it."""
        return self.nfs == SHARED_EXPORT


TARGET_MODELS: tuple[type[_Base], ...] = (
    ScratchTarget, DirTarget, TempTarget, DeviceTarget, StripeTarget, NvmeTarget, LunTarget, LunsTarget, NfsTarget)
KINDS: tuple[str, ...] = tuple(m.kind for m in TARGET_MODELS)
_BY_KIND: dict[str, type[_Base]] = {m.kind: m for m in TARGET_MODELS}


def _kind_of(value: Any) -> str | None:
    if isinstance(value, _Base):
        return TAG_PREFIX + value.kind
    if isinstance(value, dict):
        present = [k for k in KINDS if k in value and value[k] is not None and value[k] is not False]
        return TAG_PREFIX + present[0] if len(present) == 1 else None
    return None


def _from_string(value: Any) -> Any:
    if isinstance(value, str):
        if value in ("scratch", "temp"):
            return {value: True}
        raise ValueError(f"{value!r} is not a target (use scratch, temp, or a mapping like dir: /mnt)")
    return value


if TYPE_CHECKING:
    Target = _Base
else:
    Target = Annotated[
        Annotated[
            functools.reduce(operator.or_, (Annotated[m, Tag(TAG_PREFIX + m.kind)] for m in TARGET_MODELS)),
            Discriminator(_kind_of, custom_error_type="target_kind",
                          custom_error_message=f"a target needs exactly one of {', '.join(KINDS)}"),
        ],
        BeforeValidator(_from_string),
    ]
TargetModel = _Base  # the common base, for type hints


def parse_target(value: Any) -> TargetModel:
    """A target from a profile value (``temp``, ``{dir: /mnt}`` ...), validated."""
    from pydantic import TypeAdapter

    adapter: TypeAdapter[TargetModel] = TypeAdapter(Target)
    return adapter.validate_python(_from_string(value))


def scratch() -> ScratchTarget:
    return ScratchTarget(scratch=True)


def directory(path: str) -> DirTarget:
    return DirTarget(dir=path)


def model_for(kind: str) -> type[_Base]:
    return _BY_KIND[kind]
