"""Profiles: YAML files validated by pydantic, errors pointing at file, line and key path."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from .errors import ProfileError
from .resources import profiles_dir
from .units import parse_duration, parse_size

RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ENGINE_RE = re.compile(r"^[a-z0-9_:.-]+$")
_FIO_OPT_RE = re.compile(r"^[a-z0-9_]+$")
Scalar = str | int | float | bool


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _check_size(value: str | int) -> str:
    if parse_size(value) <= 0:
        raise ValueError(f"{value!r} is not a size greater than zero")
    return str(value)


class WorkloadOptions(_Strict):
    """fio settings a workload can take; also the profile's ``defaults:`` block."""

    rw: Literal[RW_MODES] | None = None  # type: ignore[valid-type]
    bs: str | None = Field(None, description="block size, e.g. 4k, 8k, 64k, 1M")
    iodepth: int | None = Field(None, ge=1, le=65536)
    numjobs: int | None = Field(None, ge=1, le=4096)
    rwmixread: int | None = Field(None, ge=0, le=100, description="read share of rw/randrw in %")
    size: str | None = Field(None, description="file size per job, e.g. 128M, 1G")
    runtime: str | None = Field(None, description="measured time, e.g. 30s, 2m")
    ramp_time: str | None = Field(None, description="warm-up time not counted, e.g. 2s")
    direct: bool | None = Field(None, description="O_DIRECT (bypass the page cache)")
    ioengine: str | None = Field(None, description="fio ioengine: libaio, io_uring, psync, sync …")
    rate_iops: int | None = Field(None, ge=1, description="cap on IOPS per job")
    time_based: bool | None = Field(None, description="run for runtime even if size is done")
    extra: dict[str, Scalar] | None = Field(None, description="other fio options, verbatim")

    @field_validator("bs", mode="before")
    @classmethod
    def _bs(cls, v: Any) -> Any:
        if v is None:
            return v
        try:
            return _check_size(v)
        except ValueError:
            raise ValueError(f"{v!r} is not a block size (use e.g. 4k, 8k, 64k, 1M)") from None

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: Any) -> Any:
        return v if v is None else _check_size(v)

    @field_validator("runtime", "ramp_time", mode="before")
    @classmethod
    def _duration(cls, v: Any) -> Any:
        if v is None:
            return v
        parse_duration(v)
        return str(v)

    @field_validator("ioengine")
    @classmethod
    def _engine(cls, v: str | None) -> str | None:
        if v is not None and not _ENGINE_RE.match(v):
            raise ValueError(f"{v!r} is not an fio ioengine name")
        return v

    @field_validator("extra")
    @classmethod
    def _extra(cls, v: dict[str, Scalar] | None) -> dict[str, Scalar] | None:
        for key in v or {}:
            if not _FIO_OPT_RE.match(key):
                raise ValueError(f"{key!r} is not an fio option name")
        return v


BUILTIN_DEFAULTS = WorkloadOptions(
    bs="4k", iodepth=1, numjobs=1, size="1G", runtime="30s", ramp_time="2s",
    direct=True, ioengine="libaio", time_based=True,
)


def _named(kind: str) -> Callable[[str], str]:
    def check(v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(f"{v!r} is not a {kind} name (letters, digits, '.', '_', '-')")
        return v

    return check


WorkloadName = Annotated[str, AfterValidator(_named("workload"))]
MachineName = Annotated[str, AfterValidator(_named("machine"))]


SWEEPABLE = ("rwmixread", "bs", "iodepth", "numjobs")


class Workload(WorkloadOptions):
    name: WorkloadName = Field(description="unique name; letters, digits, . _ -")
    description: str = ""
    targets: list[str] | None = Field(None, description="names of host targets to run on (default all)")
    sweep: dict[Literal[SWEEPABLE], list[int | str]] | None = Field(  # type: ignore[valid-type]
        None, description="run once per value of one parameter; `bs: [4k, 64k]` is the same as "
        "`sweep: {bs: [4k, 64k]}`")

    @model_validator(mode="before")
    @classmethod
    def _lists_are_sweeps(cls, data: Any) -> Any:
        if isinstance(data, dict):
            lists = {k: data[k] for k in SWEEPABLE if isinstance(data.get(k), list)}
            if lists:
                data = {k: v for k, v in data.items() if k not in lists}
                data["sweep"] = {**(data.get("sweep") or {}), **lists}
        return data

    @field_validator("sweep")
    @classmethod
    def _one_sweep(cls, v: dict[str, list[int | str]] | None) -> dict[str, list[int | str]] | None:
        if not v:
            return None
        if len(v) != 1:
            raise ValueError(f"a workload sweeps one parameter at a time, not {', '.join(v)}")
        for param, values in v.items():
            if not values:
                raise ValueError(f"{param}: a sweep needs at least one value")
            for value in values:
                try:
                    WorkloadOptions.model_validate({param: value})
                except ValidationError as exc:
                    msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
                    raise ValueError(f"{param} value {value!r}: {msg}") from None
        return v


def _is_set(value: Any) -> bool:
    # LUN 0 is a real LUN: only None and False mean "not this kind" (0 == False in Python).
    return value is not None and value is not False


class Target(_Strict):
    """Where a workload runs: exactly one of these keys. A bare string means ``scratch`` or ``temp``."""

    scratch: bool | None = Field(None, description="a directory diskbench creates and removes")
    dir: str | None = Field(None, description="an existing directory")
    temp: bool | None = Field(None, description="the Azure temp (resource) disk")
    device: str | None = Field(None, description="a block device, e.g. /dev/nvme0n1")
    stripe: list[str] | None = Field(None, description="RAID0 across these devices")
    nvme: Literal["all"] | None = Field(None, description="every local NVMe namespace")
    lun: int | None = Field(None, ge=0, description="an Azure data disk by LUN")
    luns: list[int] | None = Field(None, description="Azure data disks by LUN, striped")
    fs: Literal["xfs", "ext4"] | None = Field(None, description="filesystem to create (default xfs)")
    mount: str | None = Field(None, description="mount point (default /mnt/diskbench-NAME)")
    raw: bool | None = Field(None, description="let fio use the block device itself")
    precondition: bool = Field(False, description="write the working set once before measuring")
    warmup: bool | str | None = Field(
        None, description="read the working set before measuring: true (until the rate stops "
        "rising) or a duration such as 10m")

    @field_validator("warmup")
    @classmethod
    def _warmup(cls, v: bool | str | None) -> bool | str | None:
        if isinstance(v, str):
            parse_duration(v)
        return v

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, v: Any) -> Any:
        if isinstance(v, str):
            if v in ("scratch", "temp"):
                return {v: True}
            raise ValueError(f"{v!r} is not a target (use scratch, temp, or a mapping like dir: /mnt)")
        return v

    @model_validator(mode="after")
    def _one_kind(self) -> Target:
        kinds = [k for k in self.KINDS if _is_set(getattr(self, k))]
        if len(kinds) != 1:
            raise ValueError(f"a target needs exactly one of {', '.join(self.KINDS)}")
        return self

    KINDS: ClassVar[tuple[str, ...]] = (
        "scratch", "dir", "temp", "device", "stripe", "nvme", "lun", "luns",
    )

    @property
    def kind(self) -> str:
        return next(k for k in self.KINDS if _is_set(getattr(self, k)))

    @property
    def label(self) -> str:
        value = getattr(self, self.kind)
        if value is True:
            return self.kind
        if isinstance(value, list):
            value = "+".join(str(x) for x in value)
        return f"{self.kind}:{value}"


class Host(_Strict):
    """An existing Linux machine reached over SSH."""

    name: MachineName
    address: str
    port: int = Field(22, ge=1, le=65535)
    user: str | None = Field(None, description="login user (default: your local user name)")
    key_file: str | None = Field(None, description="private key; default: SSH agent and ~/.ssh keys")
    sudo: bool = Field(False, description="prefix privileged steps with passwordless sudo")
    host_key: str | None = Field(None, description="pinned host key fingerprint, SHA256:...")
    install_fio: bool = Field(True, description="install fio with apt/dnf/zypper when missing")
    targets: dict[str, Target] = Field(
        default_factory=lambda: {"scratch": Target(scratch=True)},
        description="named storage targets on this host")
    destroy_data_on: list[str] = Field(default_factory=list, description="devices diskbench may overwrite")
    workloads: list[str] | None = Field(None, description="names of workloads to run (default all)")

    @field_validator("targets")
    @classmethod
    def _target_names(cls, v: dict[str, Target]) -> dict[str, Target]:
        for name in v:
            _named("target")(name)
        if not v:
            raise ValueError("a host needs at least one target")
        return v


class OsDisk(_Strict):
    type: Literal["Premium_LRS", "StandardSSD_LRS", "Standard_LRS"] = "Premium_LRS"
    size_gb: int | None = Field(None, ge=1)
    caching: Literal["None", "ReadOnly", "ReadWrite"] = "ReadWrite"
    ephemeral: Literal["CacheDisk", "ResourceDisk", "NvmeDisk"] | None = None


class DataDisk(_Strict):
    count: int = Field(1, ge=1, le=64)
    type: Literal["Premium_LRS", "StandardSSD_LRS", "Standard_LRS", "PremiumV2_LRS", "UltraSSD_LRS"]
    size_gb: int = Field(ge=1)
    caching: Literal["None", "ReadOnly", "ReadWrite"] = "None"
    iops: int | None = Field(None, ge=1)
    mbps: int | None = Field(None, ge=1)


class Machine(_Strict):
    """A cloud VM to create, and the storage target on it that the workloads measure."""

    name: MachineName
    provider: Literal["azure"] = "azure"
    region: str
    size: str = Field(description="VM size, e.g. Standard_E8ds_v4")
    image: str = "Canonical:ubuntu-24_04-lts:server:latest"
    zone: str | None = None
    os_disk: OsDisk = Field(default_factory=OsDisk)
    data_disks: list[DataDisk] = Field(default_factory=list)
    target: Target | None = Field(None, description="the one storage target (or use targets:)")
    targets: dict[str, Target] | None = Field(None, description="several named storage targets")
    workloads: list[str] | None = Field(None, description="names of workloads to run (default all)")
    description: str = ""

    @model_validator(mode="after")
    def _one_way(self) -> Machine:
        if (self.target is None) == (self.targets is None):
            raise ValueError("a machine needs either target: or targets:")
        for name in self.targets or {}:
            _named("target")(name)
        return self

    def named_targets(self) -> dict[str, Target]:
        """Named targets; a single ``target:`` is named by its label (``temp``, ``dir:/data``)."""
        if self.targets is not None:
            return self.targets
        assert self.target is not None
        return {"": self.target}


class Profile(_Strict):
    """A benchmark profile: workloads, and optionally the machines to run them on."""

    name: str
    description: str = ""
    defaults: WorkloadOptions = Field(default_factory=WorkloadOptions)
    target: Target = Field(default_factory=lambda: Target(scratch=True))
    machines: list[Machine] = Field(default_factory=list)
    hosts: list[Host] = Field(default_factory=list)
    destroy_data_on: list[str] = Field(
        default_factory=list, description="devices diskbench may overwrite on every host")
    workloads: list[Workload] = Field(min_length=1)
    repeats: int = Field(1, ge=1, le=100, description="run every job this many times, interleaved")

    @model_validator(mode="after")
    def _references(self) -> Profile:
        seen: set[str] = set()
        for w in self.workloads:
            if w.name in seen:
                raise ValueError(f"workload name {w.name!r} is used twice")
            seen.add(w.name)
        if self.machines and self.hosts:
            raise ValueError("a profile has either machines (created by a provider) or hosts, not both")
        bindings = [(m.name, m.workloads) for m in self.machines] + [(h.name, h.workloads) for h in self.hosts]
        if len({name for name, _ in bindings}) != len(bindings):
            raise ValueError("machine and host names must be unique")
        for name, refs in bindings:
            for ref in refs or []:
                if ref not in seen:
                    raise ValueError(f"{name!r} names unknown workload {ref!r}")
        target_names = {t for h in self.hosts for t in h.targets} | {
            t for m in self.machines for t in (m.targets or {})}
        for w in self.workloads:
            for ref in w.targets or []:
                if target_names and ref not in target_names:
                    raise ValueError(f"workload {w.name!r} names unknown target {ref!r}")
        return self

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
        merged["targets"] = workload.targets
        if merged.get("rw") is None:
            raise ProfileError(f"workload {workload.name!r} has no rw (set it or defaults.rw)")
        return Workload.model_validate(merged)


class LoadedProfile(BaseModel):
    """A validated profile with the text it came from, kept with every run."""

    profile: Profile
    path: str
    text: str


def bundled_profiles() -> dict[str, Path]:
    return {p.stem: p for p in sorted(profiles_dir().glob("*.yaml"))}


def resolve_profile_path(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ProfileError(f"{name_or_path}: no such profile file")
        return path
    bundled = bundled_profiles()
    if name_or_path in bundled:
        return bundled[name_or_path]
    raise ProfileError(
        f"no profile named {name_or_path!r}",
        hint=f"bundled profiles: {', '.join(bundled)}; or pass a path to a .yaml file",
    )


def load_profile(name_or_path: str, overrides: tuple[str, ...] | list[str] = ()) -> LoadedProfile:
    """A profile, with ``--set key.path=value`` overrides applied (e.g. ``machines[0].size=...``)."""
    path = resolve_profile_path(name_or_path)
    text = path.read_text(encoding="utf-8")
    if overrides:
        text = apply_overrides(text, overrides, str(path))
    return LoadedProfile(profile=parse_profile(text, str(path)), path=str(path), text=text)


_PATH_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]")


def apply_overrides(text: str, overrides: tuple[str, ...] | list[str], filename: str) -> str:
    """The profile text with each ``path=value`` set; the result is what the run records."""
    data = yaml.safe_load(text)
    for spec in overrides:
        key, sep, raw = spec.partition("=")
        parts = [m.group(1) or int(m.group(2)) for m in _PATH_PART.finditer(key.replace("].", "]"))]
        if not sep or not parts:
            raise ProfileError(f"--set {spec!r}: use KEY.PATH=VALUE, e.g. machines[0].size=Standard_L32s_v2")
        node: Any = data
        for part in parts[:-1]:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                raise ProfileError(f"--set {spec!r}: {filename} has no {key.rsplit('=', 1)[0]!r}") from None
        try:
            node[parts[-1]] = yaml.safe_load(raw)
        except (IndexError, TypeError):
            raise ProfileError(f"--set {spec!r}: {filename} has no {key!r}") from None
    header = f"# {filename} with --set {' --set '.join(overrides)}\n"
    return header + yaml.safe_dump(data, sort_keys=False)


def parse_profile(text: str, filename: str = "<profile>") -> Profile:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        _reject_duplicate_keys(node, filename)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f":{mark.line + 1}" if mark else ""
        raise ProfileError(f"{filename}{line}: invalid YAML: {exc.problem}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{filename}:1: a profile must be a YAML mapping with name and workloads")
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise _profile_error(exc, node, filename) from None


def _reject_duplicate_keys(node: yaml.Node | None, filename: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if key.value in seen:
                raise ProfileError(
                    f"{filename}:{key.start_mark.line + 1}: key {key.value!r} appears twice"
                )
            seen.add(key.value)
            _reject_duplicate_keys(value, filename)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _reject_duplicate_keys(item, filename)


def _profile_error(exc: ValidationError, root: yaml.Node | None, filename: str) -> ProfileError:
    errors = exc.errors()
    first = errors[0]
    loc = [p for p in first["loc"] if not (isinstance(p, str) and "[" in p)]
    line = _line_of(root, loc)
    path = format_key_path(loc)
    msg = first["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if first["type"] == "extra_forbidden":
        msg = f"unknown key {loc[-1]!r}"
        path = format_key_path(loc[:-1]) or "(top level)"
    elif first["type"] == "missing":
        msg = f"required key {loc[-1]!r} is missing"
        path = format_key_path(loc[:-1]) or "(top level)"
    elif first["type"] == "literal_error":
        msg = f"{first.get('input')!r} is not allowed: {msg}"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    where = f"{filename}:{line}" if line else filename
    return ProfileError(f"{where}: {path}: {msg}{more}" if path else f"{where}: {msg}{more}")


def format_key_path(loc: list[Any] | tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _line_of(node: yaml.Node | None, loc: list[Any]) -> int | None:
    """Line of the deepest YAML node the error path reaches (1-based)."""
    best = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            match = next(((k, v) for k, v in node.value if k.value == part), None)
            if match is None:
                break
            node = match[1]
            best = match[0].start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            best = node.start_mark.line + 1
        else:
            break
    return best


def profile_json_schema() -> dict[str, Any]:
    schema = Profile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "diskbench profile"
    return schema
