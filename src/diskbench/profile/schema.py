"""The profile: workloads, defaults, and where they run (local target, hosts or machines)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from ..errors import ProfileError
from .machines import Host, MachineBase
from .shared import SharedBase
from .targets import ScratchTarget, Target, TargetModel
from .workload import BUILTIN_DEFAULTS, Strict, Workload, WorkloadOptions

SHARED_DESCRIPTION = "run every job on all clients at once, on one shared target"


class Profile(Strict):
    """A benchmark profile: workloads, and optionally the machines to run them on.

    What code reads of it names no plugin: a machine is a ``MachineBase``, a shared block a
    ``SharedBase``. A profile is read with the installed providers' and engines' own schemas
    (assembly.py's ``profile_model``, a subclass of this one that the loader is given)."""

    name: str
    description: str = ""
    defaults: WorkloadOptions = Field(default_factory=WorkloadOptions)
    target: Target = Field(default_factory=lambda: ScratchTarget(scratch=True))
    machines: list[MachineBase] = Field(default_factory=list)
    hosts: list[Host] = Field(default_factory=list)
    destroy_data_on: list[str] = Field(
        default_factory=list, description="devices diskbench may overwrite on every host")
    workloads: list[Workload] = Field(min_length=1)
    repeats: int = Field(1, ge=1, le=100, description="run every job this many times, interleaved")
    shared: SharedBase | None = Field(None, description=SHARED_DESCRIPTION)

    @model_validator(mode="after")
    def _references(self) -> Profile:
        seen: set[str] = set()
        for w in self.workloads:
            if w.name in seen:
                raise ValueError(f"workload name {w.name!r} is used twice")
            seen.add(w.name)
        if self.machines and self.hosts:
            raise ValueError("a profile has either machines (created by a provider) or hosts, not both")
        machines: list[MachineBase] = list(self.machines)
        bindings = [(m.name, m.workloads) for m in machines] + [(h.name, h.workloads) for h in self.hosts]
        if len({name for name, _ in bindings}) != len(bindings):
            raise ValueError("machine and host names must be unique")
        for name, refs in bindings:
            for ref in refs or []:
                if ref not in seen:
                    raise ValueError(f"{name!r} names unknown workload {ref!r}")
        if self.shared is not None:
            names = {n for n, _ in bindings}
            unknown = [c for c in self.shared.clients or [] if c not in names]
            if unknown or not names:
                raise ValueError(f"shared.clients: {', '.join(unknown) or 'no hosts or machines'} "
                                 "(the group's clients are the profile's hosts or machines)")
        target_names = {t for h in self.hosts for t in h.targets} | {
            t for m in machines for t in (m.targets or {})}
        for w in self.workloads:
            for ref in [*(w.targets or []), *w.section_targets()]:
                if target_names and ref not in target_names:
                    raise ValueError(f"workload {w.name!r} names unknown target {ref!r}")
        return self

    @property
    def machine_entries(self) -> list[MachineBase]:
        return list(self.machines)

    def expand(self, workload: Workload) -> list[tuple[Workload, tuple[str, int | str] | None]]:
        """The resolved workload, once per swept value: (workload, (parameter, value) or None)."""
        w = self.resolved(workload)
        if not w.sweep:
            return [(w, None)]
        ((param, values),) = w.sweep.items()
        return [(w.model_copy(update={param: value, "name": f"{w.name}-{param}{value}", "sweep": None}),
                 (param, value)) for value in values]

    def resolved(self, workload: Workload) -> Workload:
        """The workload with profile defaults and built-in defaults filled in."""
        merged: dict[str, Any] = BUILTIN_DEFAULTS.model_dump(exclude_none=True)
        merged.update(self.defaults.model_dump(exclude_none=True))
        merged.update(workload.model_dump(exclude_none=True))
        merged["extra"] = {**(self.defaults.extra or {}), **(workload.extra or {})}
        merged["engine_options"] = {**(self.defaults.engine_options or {}), **(workload.engine_options or {})} \
            or None
        merged["deliberate"] = {**(self.defaults.deliberate or {}), **(workload.deliberate or {})} or None
        merged["targets"] = workload.targets
        sections = workload.sections or []
        if merged.get("rw") is None and (not sections or not all(s.rw for s in sections)):
            raise ProfileError(f"workload {workload.name!r} has no rw (set it or defaults.rw)")
        try:
            return Workload.model_validate(merged)
        except ValidationError as exc:  # what only the merge shows (stop.min against the runtime)
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ProfileError(f"workload {workload.name!r}: {where + ': ' if where else ''}"
                               f"{str(first['msg']).removeprefix('Value error, ')}") from None


class LoadedProfile(BaseModel):
    """A validated profile with the text it came from, kept with every run."""

    profile: Profile
    path: str
    text: str
    overrides: list[str] = []  # the ``--set KEY=VALUE`` applied to the file, for errors to name

    @property
    def source(self) -> str:
        """Where the profile came from, as an error names it: the file, and any ``--set`` applied."""
        return f"{self.path}: with --set {' --set '.join(self.overrides)}" if self.overrides else self.path


__all__ = ["Host", "LoadedProfile", "Profile", "TargetModel"]
