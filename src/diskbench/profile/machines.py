"""Machines in a profile: SSH hosts that exist, and machines a provider creates.

``hosts:`` lists machines that already exist (the static provider reaches them over SSH).
``machines:`` lists machines a provider creates; each provider brings the schema of its own
entries, and ``provider:`` picks the schema (a discriminated union that assembly.py builds from
the installed providers).
"""

from __future__ import annotations

from typing import Annotated, Any, cast

from pydantic import AfterValidator, AliasChoices, Field, field_validator, model_validator

from .targets import ScratchTarget, Target, TargetModel
from .workload import Strict, named

MachineName = Annotated[str, AfterValidator(named("machine"))]
# What reaches ssh, known_hosts and the host's workspace name: a host name or an IP address, a
# login name as useradd takes it, a fingerprint as ssh-keygen prints it.
ADDRESS = r"^[A-Za-z0-9_.:%-]{1,253}$"
USER = r"^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,31}\$?$"
FINGERPRINT = r"^SHA256:[A-Za-z0-9+/]{43}$"
TAG_PREFIX = "provider:"  # marks the union's tag in validation error locations (stripped for users)


class Host(Strict):
    """An existing machine reached over SSH."""

    name: MachineName
    address: str = Field(pattern=ADDRESS, description="host name or IP address")
    port: int = Field(22, ge=1, le=65535)
    user: str | None = Field(None, pattern=USER, description="login user (default: your local user name)")
    key_file: str | None = Field(None, description="private key; default: SSH agent and ~/.ssh keys")
    sudo: bool = Field(False, description="prefix privileged steps with passwordless sudo")
    host_key: str | None = Field(None, pattern=FINGERPRINT, description="pinned host key fingerprint, SHA256:...")
    install_engine: bool = Field(True, validation_alias=AliasChoices("install_engine", "install_fio"),
                                 description="install the engine (fio) with apt/dnf/zypper when missing "
                                             "(install_fio, its old name, is still read)")
    platform: str = Field("linux", description="the host's operating system family")
    targets: dict[str, Target] = Field(
        default_factory=lambda: {"scratch": cast(TargetModel, ScratchTarget(scratch=True))},
        description="named storage targets on this host")
    destroy_data_on: list[str] = Field(default_factory=list, description="devices diskbench may overwrite")
    workloads: list[str] | None = Field(None, description="names of workloads to run (default all)")

    @field_validator("targets")
    @classmethod
    def _target_names(cls, v: dict[str, TargetModel]) -> dict[str, TargetModel]:
        for name in v:
            named("target")(name)
        if not v:
            raise ValueError("a host needs at least one target")
        return v


class MachineBase(Strict):
    """What every provider's machine has: a name, its storage targets, and which workloads run."""

    name: MachineName
    provider: str
    target: Target | None = Field(None, description="the one storage target (or use targets:)")
    targets: dict[str, Target] | None = Field(None, description="several named storage targets")
    workloads: list[str] | None = Field(None, description="names of workloads to run (default all)")
    description: str = ""

    @model_validator(mode="after")
    def _one_way(self) -> Any:
        if (self.target is None) == (self.targets is None):
            raise ValueError("a machine needs either target: or targets:")
        for name in self.targets or {}:
            named("target")(name)
        return self

    def named_targets(self) -> dict[str, TargetModel]:
        """Named targets; a single ``target:`` is named by its label (``temp``, ``dir:/data``)."""
        if self.targets is not None:
            return self.targets
        assert self.target is not None
        return {"": self.target}
