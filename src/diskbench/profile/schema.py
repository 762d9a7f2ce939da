"""The profile: workloads, defaults, and where they run (local target, hosts or machines)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from ..errors import ProfileError
from ..yamldoc import format_key_path
from . import machines as _machines
from . import targets as _targets
from .machines import Host, MachineBase
from .shared import SharedBase
from .stop import Stop
from .targets import ScratchTarget, Target, TargetModel
from .workload import BUILTIN_DEFAULTS, KeyProblem, Strict, Workload, WorkloadOptions

SHARED_DESCRIPTION = "run every job on all clients at once, on one shared target"
_TAGS = (_targets.TAG_PREFIX, _machines.TAG_PREFIX)
_VALIDATOR_LABEL = re.compile(r"^[a-z][a-z-]*\[.*\]$")  # pydantic's "function-before[...]", "tagged-union[...]"


def user_loc(loc: tuple[Any, ...] | list[Any]) -> list[Any]:
    """A pydantic error location as the user wrote the keys: no union tags or validator labels."""
    return [p for p in loc if not (isinstance(p, str) and (_VALIDATOR_LABEL.match(p) or p.startswith(_TAGS)))]


class MergeError(ProfileError):
    """A problem only the merge of a workload with the profile's defaults shows (``Profile.resolved``).

    ``loc`` is the key it is about, where the profile gives it for this workload: the workload's
    own (``("workloads", 0, "stop", "min")``) or else the defaults' (``("defaults", "stop",
    "min")``); ``index`` is the workload's place in the list. The loader turns it into its one
    line with the file and that key's line (``load.py``); without a file it names the workload."""

    def __init__(self, workload: str, index: int | None, loc: tuple[str | int, ...], problem: str) -> None:
        super().__init__(f"workload {workload!r}: {format_key_path(loc)}: {problem}" if loc
                         else f"workload {workload!r}: {problem}")
        self.workload, self.index, self.loc, self.problem = workload, index, loc, problem


def _gives(model: BaseModel, key: tuple[str, ...]) -> bool:
    """Does the profile set ``key`` (``("stop", "min")``) on this model itself (not a default)?"""
    node: Any = model
    for part in key:
        if not isinstance(node, BaseModel) or part not in node.model_fields_set:
            return False
        node = getattr(node, part)
    return True


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
        """The workload with profile defaults and built-in defaults filled in.

        A key the workload gives beats the defaults' (``extra``, ``engine_options``, ``deliberate``
        and ``stop`` key by key); what only this merge shows wrong is a ``MergeError`` naming the key
        where the profile gives it. The stop's maximum is the first of: the workload's own
        ``stop.max``, its own ``runtime``, ``defaults.stop.max``, ``defaults.runtime``, the built-in
        runtime (``stop_of``)."""
        merged: dict[str, Any] = BUILTIN_DEFAULTS.model_dump(exclude_none=True)
        merged.update(self.defaults.model_dump(exclude_none=True))
        merged.update(workload.model_dump(exclude_none=True))
        merged["extra"] = {**(self.defaults.extra or {}), **(workload.extra or {})}
        merged["engine_options"] = {**(self.defaults.engine_options or {}), **(workload.engine_options or {})} \
            or None
        merged["deliberate"] = {**(self.defaults.deliberate or {}), **(workload.deliberate or {})} or None
        merged["targets"] = workload.targets
        if workload.knee is not None:  # the search's, not the defaults' depth
            merged["iodepth"] = "auto"
        stop = self.stop_of(workload)
        merged["stop"] = stop.model_dump(exclude_unset=True) if isinstance(stop, Stop) else stop
        index = next((i for i, w in enumerate(self.workloads) if w is workload), None)
        sections = workload.sections or []
        if merged.get("rw") is None and (not sections or not all(s.rw for s in sections)):
            raise MergeError(workload.name, index, ("workloads", index) if index is not None else (),
                             "no rw (set it or defaults.rw)")
        try:
            return Workload.model_validate(merged)
        except ValidationError as exc:  # what only the merge shows (stop.min against the runtime)
            first = exc.errors()[0]
            problem = (first.get("ctx") or {}).get("error")
            key = tuple(str(p) for p in user_loc(first["loc"])) + (
                problem.key if isinstance(problem, KeyProblem) else ())
            raise MergeError(workload.name, index, self._origin(workload, index, key),
                             str(first["msg"]).removeprefix("Value error, ")) from None

    def stop_of(self, workload: Workload) -> Stop | bool | None:
        """The workload's ``stop:`` over ``defaults.stop``, key by key: ``false`` turns it off, no
        ``stop:`` (or ``true``) takes ``defaults.stop``'s keys, a mapping adds its own to them. The
        workload's own ``runtime`` beats ``defaults.stop.max`` (a workload's explicit setting beats a
        default): then the merged block has no ``max`` and the runtime is the maximum."""
        own, base = workload.stop, self.defaults.stop
        if own is False or not isinstance(base, Stop):
            return own if own is not None else base
        given = own.model_dump(exclude_unset=True) if isinstance(own, Stop) else {}
        keys = {**base.model_dump(exclude_unset=True), **given}
        if "max" not in given and "runtime" in workload.model_fields_set:
            keys.pop("max", None)
        return Stop.model_validate(keys)

    def _origin(self, workload: Workload, index: int | None, key: tuple[str, ...]) -> tuple[str | int, ...]:
        """Where the profile gives ``key`` for this workload: the workload's own, else the defaults'
        (else the workload's, the value being a built-in default)."""
        own: tuple[str | int, ...] = ("workloads", index) if index is not None else ()
        if key and not _gives(workload, key) and _gives(self.defaults, key):
            return ("defaults", *key)
        return (*own, *key)


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


__all__ = ["Host", "LoadedProfile", "MergeError", "Profile", "TargetModel", "user_loc"]
