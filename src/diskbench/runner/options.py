"""What a run is asked to do besides its profile, kept with the run so ``resume`` does the same."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..profile import Host


@dataclass
class RunOptions:
    target_dir: str | None = None
    scratch_base: str | None = None
    hosts: list[dict[str, Any]] = field(default_factory=list)  # --host overrides, as Host dicts
    destroy_data_on: list[str] = field(default_factory=list)
    accept_new_host_key: bool = False
    known_hosts: str | None = None
    repeats: int | None = None
    keep: bool = False
    keep_files: bool = False  # leave the data files the engine laid out in a --target directory
    workloads: list[str] | None = None  # only these workloads
    machines: list[str] | None = None  # only these machines and hosts of the profile
    provider_options: dict[str, Any] = field(default_factory=dict)  # e.g. the subscription, who may SSH
    allow_exec: bool = False  # engine options that run programs (--allow-exec); never stored, never resumed

    def to_json(self) -> dict[str, Any]:
        return {"target_dir": self.target_dir, "scratch_base": self.scratch_base, "hosts": self.hosts,
                "destroy_data_on": self.destroy_data_on, "known_hosts": self.known_hosts,
                "repeats": self.repeats, "workloads": self.workloads,
                "machines": self.machines, "provider_options": self.provider_options, "keep_files": self.keep_files}

    def host_models(self) -> list[Host]:
        return [Host.model_validate(h) for h in self.hosts]


@dataclass
class RunOutcome:
    run_id: str
    status: str
    done: int = 0
    failed: int = 0
    messages: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # the safety rule's refusals (exit 6)
