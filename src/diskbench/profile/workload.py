"""Workloads: the vocabulary every engine understands, sweeps, and sections run together.

The vocabulary is fio's (rw, bs, iodepth, numjobs, ...), because that is what storage people
speak; each engine says which of it it can honour (``Engine.check_workload``) and may add a
block of its own options. ``sections`` run several jobs at once in one engine run, each on its
own target (a reader on the cached disk and a writer on the striped one, as in Azure's guide).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..text import check_line, plain_values, shown
from ..units import MAX_JOB_S, parse_duration, parse_size
from .knee import Knee, knee_value
from .stop import Stop, stop_value

if TYPE_CHECKING:
    from ..attribution.stop_rule import StopRule

RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim",
            "trimwrite")
WRITE_MODES = ("write", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # file and section names: short, plain
_ENGINE_RE = re.compile(r"^([a-z0-9_.-]+|external:\S+)$")  # fio engines; external: loads one from a path
_OPT_RE = re.compile(r"^[a-z0-9_]+$")
Scalar = str | int | float | bool
SWEEPABLE = ("rwmixread", "bs", "iodepth", "numjobs")
MAX_BS = 1 << 31  # 2 GiB: fio's block sizes are 32-bit (its bs option takes at most 4 GiB - 1)
MAX_SWEEP = 64  # values of one sweep; more is a typo or a loop, not a plan
ENGINES_CONTEXT = "engines"  # validation context key: the installed engines' names (assembly.py)
# Warnings a profile may set off on purpose (``deliberate:``), each with its reason: plan shows the
# reason once as a note, and results do not repeat the warning. A default that warns about itself
# teaches users to ignore every warning.
DELIBERATE = ("short_runtime", "jobs_over_cpus", "small_working_set", "page_cache", "burst", "not_steady",
              "low_queue_depth", "vm_cap")
Reason = Annotated[str, Field(min_length=3, max_length=200)]


class KeyProblem(ValueError):
    """A check of a whole workload that is about one key in it (``("stop", "min")``): the loader
    names that key and its line, where pydantic would name the workload (its ``ctx["error"]``)."""

    def __init__(self, key: tuple[str, ...], message: str) -> None:
        super().__init__(message)
        self.key = key


class Strict(BaseModel):
    """Unknown keys are errors, and no value carries a control character or a non-finite number
    (the profile loader says so with file and line first; this catches values built in code)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _plain_values(cls, data: Any) -> Any:
        return plain_values(data)


def _check_size(value: str | int) -> str:
    if parse_size(value) <= 0:
        raise ValueError(f"{value!r} is not a size greater than zero")
    return str(value)


def named(kind: str) -> Callable[[str], str]:
    def check(v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError(f"{shown(v)} is not a {kind} name (up to 64 letters, digits, '.', '_', '-')")
        return v

    return check


class WorkloadOptions(Strict):
    """Settings a workload can take; also the profile's ``defaults:`` block."""

    engine: str | None = Field(None, description="the benchmark engine (default: fio)")
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
    rate_iops: int | None = Field(None, ge=1, le=10**9, description="cap on IOPS per job")
    time_based: bool | None = Field(None, description="run for runtime even if size is done")
    extra: dict[str, Scalar] | None = Field(None, description="other engine options, verbatim (fio options)")
    engine_options: dict[str, dict[str, Any]] | None = Field(
        None, description="blocks of engine-only options, keyed by engine (e.g. diskspd:)")
    deliberate: dict[Literal[DELIBERATE], Reason] | None = Field(  # type: ignore[valid-type]
        None, description="warnings this workload sets off on purpose, each with the reason (one of "
        + ", ".join(DELIBERATE) + "): plan shows the reason once instead of the warning")
    stop: Stop | bool | None = Field(
        None, description="end each job once its answer is known: {within: 2%, confidence: 95%, min: 10s, "
        "max: 60s} (max: default the runtime), or true for those defaults; false turns defaults.stop off")

    @field_validator("stop", mode="before")
    @classmethod
    def _stop(cls, v: Any) -> Any:
        return stop_value(v)

    @field_validator("iodepth", mode="before")
    @classmethod
    def _auto_here(cls, v: Any) -> Any:
        """``iodepth: auto`` is a workload's own (``Workload`` takes it before this runs): here, in
        ``defaults:``, a section or a sweep, it is one message rather than pydantic's integer error."""
        if isinstance(v, str) and v.strip().lower() == AUTO:
            raise ValueError("iodepth: auto searches one workload's queue depth: give it on the workload itself "
                             "(not in defaults, a section or a sweep)")
        return v

    @model_validator(mode="before")
    @classmethod
    def _engine_blocks(cls, data: Any, info: ValidationInfo) -> Any:
        """``diskspd: {...}`` and the like: a block named after an engine, kept for that engine. The
        engines' names come with the validation (assembly.py's context); without them, as when a
        workload is rebuilt from one already read, no key is an engine's.

        Each block, and ``engine_options``, must be a mapping: said here with the key (the loader
        adds its line), before the merge below would fail on ``engine_options: 5``."""
        if isinstance(data, dict):
            engines = (info.context or {}).get(ENGINES_CONTEXT, ())
            keys = [k for k in data if k not in cls.model_fields and k in engines]
            options = data.get("engine_options")
            if options is not None and not isinstance(options, dict):
                raise KeyProblem(("engine_options",), f"engine_options must be a mapping of engine: {{option: value}}, "
                                 f"e.g. {{diskspd: {{affinity: '0'}}}}, not {shown(options)}")
            given = [(("engine_options", str(k)), v) for k, v in (options or {}).items()]
            for key, block in [*given, *(((k,), data[k]) for k in keys)]:
                if not isinstance(block, dict):
                    raise KeyProblem(key, f"the {key[-1]} block must be a mapping of option: value (the {key[-1]} "
                                     f"engine's own options), not {shown(block)}")
            if keys:
                blocks = {k: data[k] for k in keys}
                data = {k: v for k, v in data.items() if k not in keys}
                data["engine_options"] = {**(data.get("engine_options") or {}), **blocks}
        return data

    @field_validator("bs", mode="before")
    @classmethod
    def _bs(cls, v: Any) -> Any:
        if v is None:
            return v
        try:
            text = _check_size(v)
        except ValueError:
            raise ValueError(f"{shown(v)} is not a block size (use e.g. 4k, 8k, 64k, 1M)") from None
        if parse_size(text) > MAX_BS:
            raise ValueError(f"{shown(v)} is larger than fio's largest block size (2 GiB here)")
        return text

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: Any) -> Any:
        return v if v is None else _check_size(v)

    @field_validator("runtime", "ramp_time", mode="before")
    @classmethod
    def _duration(cls, v: Any) -> Any:
        if v is None:
            return v
        if parse_duration(v) > MAX_JOB_S:
            raise ValueError(f"{shown(v)} is longer than 30 days")
        # a YAML number as plain decimal seconds (1e-10 -> "0.0000000001"), which the rule above reads back
        return format(Decimal(repr(v)), "f") if isinstance(v, float) else str(v)

    @field_validator("ioengine")
    @classmethod
    def _ioengine(cls, v: str | None) -> str | None:
        if v is not None and not _ENGINE_RE.match(v):
            raise ValueError(f"{v!r} is not an fio ioengine name")
        return v

    @field_validator("extra")
    @classmethod
    def _extra(cls, v: dict[str, Scalar] | None) -> dict[str, Scalar] | None:
        for key, value in (v or {}).items():
            if not _OPT_RE.match(key):
                raise ValueError(f"{shown(key)} is not an engine option name (lower-case letters, digits, _)")
            if isinstance(value, str):
                check_line(value, f"the value of {key}")
            elif isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"the value of {key} is {value}, not a finite number")
        return v


BUILTIN_DEFAULTS = WorkloadOptions(
    bs="4k", iodepth=1, numjobs=1, size="1G", runtime="30s", ramp_time="2s",
    direct=True, ioengine="libaio", time_based=True,
)
WorkloadName = Annotated[str, AfterValidator(named("workload"))]
AUTO = "auto"  # iodepth: auto, the knee search
SYNC_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2")  # one I/O in flight a job, whatever its iodepth
STEADY_MAX_ROUNDS = 25  # the SNIA PTS's limit (attribution.steady_state.MAX_ROUNDS)
DRAIN_DEFAULT = "35m"  # a full credit bucket lasts 30 min at the burst cap (Azure disks and VMs)


class Section(WorkloadOptions):
    """One job of a workload that runs several at once; its keys win over the workload's."""

    @field_validator("stop")
    @classmethod
    def _no_stop(cls, v: Stop | bool | None) -> Stop | bool | None:
        if v is not None:
            raise ValueError("a section runs as long as its workload: give stop on the workload")
        return v

    name: WorkloadName = Field(description="the job's name within the workload")
    target: str | None = Field(None, description="the named target this job runs on (default: the workload's)")


class Workload(WorkloadOptions):
    name: WorkloadName = Field(description="unique name; letters, digits, . _ -")
    description: str = ""
    targets: list[str] | None = Field(None, description="names of host targets to run on (default all)")
    sweep: dict[Literal[SWEEPABLE], list[int | str]] | None = Field(  # type: ignore[valid-type]
        None, description="run once per value of one parameter; `bs: [4k, 64k]` is the same as "
        "`sweep: {bs: [4k, 64k]}`")
    sections: list[Section] | None = Field(
        None, description="several jobs run at once in one engine run, each on its own target")
    protocol: Literal["steady_state"] | None = Field(
        None, description="steady_state: run rounds until the SNIA PTS steady-state rule holds over the "
        "last five (range within 20% of their mean, slope excursion within 10%), at most max_rounds")
    max_rounds: int | None = Field(None, ge=5, le=25, description="rounds at most for protocol: steady_state "
                                   "(default 25, the PTS's)")

    knee: Knee | None = Field(
        None, description="with iodepth: auto, how the knee of the latency-vs-load curve is searched: "
        "{min_iodepth: 1, max_iodepth: 256, gain: 10%, p99_under: 2ms, bisect: 1}")

    @field_validator("knee", mode="before")
    @classmethod
    def _knee(cls, v: Any) -> Any:
        return knee_value(v)

    @model_validator(mode="before")
    @classmethod
    def _auto_depth(cls, data: Any) -> Any:
        """``iodepth: auto`` becomes a ``knee`` (its block, or every default); ``knee:`` needs it."""
        if not isinstance(data, dict):
            return data
        depth = data.get("iodepth")
        if isinstance(depth, str) and depth.strip().lower() == AUTO:
            data = {k: v for k, v in data.items() if k != "iodepth"}
            data["knee"] = data.get("knee") if data.get("knee") is not None else {}
        elif data.get("knee") is not None:
            fixed = f"a fixed iodepth ({shown(depth)}) has no knee to search" if depth is not None else "only with " \
                "iodepth: auto"
            raise KeyProblem(("knee",), f"{fixed}; set iodepth: auto, or drop knee")
        return data

    @model_validator(mode="after")
    def _knee_fits(self) -> Workload:
        """The search's first depth is the job's until it runs (``render`` and ``plan`` show it)."""
        if self.knee is None:
            return self
        if self.protocol == "steady_state":
            raise KeyProblem(("iodepth",), "iodepth: auto and protocol: steady_state both run the job several "
                             "times; keep one")
        if self.sections:
            raise KeyProblem(("iodepth",), "iodepth: auto searches one job's queue depth; a workload with sections "
                             "runs several jobs at once: give each section its iodepth")
        self.iodepth = self.knee.min_iodepth
        return self

    drain_burst: bool | str | None = Field(
        None, description="before measuring, run the job until the target's credit burst is spent (its rate "
        "steps down to the baseline), so the result is the baseline: true (at most 35m), or the longest it may "
        "take, e.g. 90m")

    flush_cache: bool | str | None = Field(
        None, description="before each job, empty the caches that could answer for its data, without measuring: "
        "true drops the host's page cache; a size (e.g. 160g) also reads a separate data set of that size per host, "
        "laid out once per run beside the job's files, with direct I/O, so the storage's own cache holds other data")

    @field_validator("flush_cache", mode="before")
    @classmethod
    def _flush(cls, v: Any) -> Any:
        if isinstance(v, str) and v.lower() in ("true", "false", "yes", "no", "on", "off"):
            v = v.lower() in ("true", "yes", "on")  # as --set gives it
        if isinstance(v, float):  # 1.5: neither a yes/no nor a size; one message, not pydantic's two
            raise ValueError(f"{shown(v)}: give true, or the size of the separate data set to read, e.g. 160g")
        if isinstance(v, (int, str)) and not isinstance(v, bool):
            try:
                text = _check_size(v)
            except ValueError:
                raise ValueError(f"{shown(v)}: give true, or the size of the separate data set to read, "
                                 "e.g. 160g") from None
            return text
        return v or None

    @property
    def flush_bytes(self) -> int:
        """The separate data set ``flush_cache`` reads on each host before each job (0: none)."""
        return parse_size(self.flush_cache) if isinstance(self.flush_cache, str) else 0

    @field_validator("drain_burst", mode="before")
    @classmethod
    def _drain(cls, v: Any) -> Any:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            v = f"{v:g}s"  # a bare number is seconds, as everywhere in a profile
        if isinstance(v, str) and v.lower() in ("true", "false", "yes", "no", "on", "off"):
            v = v.lower() in ("true", "yes", "on")  # as --set gives it
        if isinstance(v, str):
            if not 0 < parse_duration(v) <= MAX_JOB_S:
                raise ValueError(f"{shown(v)}: give the longest draining may take (up to 30 days), e.g. 35m, "
                                 "or true")
            return v
        return v or None

    @property
    def drain_s(self) -> float:
        """The longest draining may take before the measured run (0: no draining)."""
        if not self.drain_burst:
            return 0.0
        return parse_duration(DRAIN_DEFAULT if self.drain_burst is True else self.drain_burst)

    @model_validator(mode="after")
    def _rounds_need_the_protocol(self) -> Workload:
        if self.max_rounds is not None and self.protocol != "steady_state":
            raise ValueError("max_rounds is for protocol: steady_state; add it, or drop max_rounds")
        return self

    @model_validator(mode="after")
    def _stop_fits(self) -> Workload:
        """``stop.max`` becomes the runtime (the longest the job runs); ``min`` must fit in it."""
        if not isinstance(self.stop, Stop):
            return self
        if self.protocol == "steady_state":
            raise KeyProblem(("stop",), "stop and protocol: steady_state both decide how long a job runs; keep one")
        if self.stop.max is not None:
            self.runtime = self.stop.max
        if self.time_based is False:
            raise KeyProblem(("time_based",),
                             "stop needs a time-based job (its runtime is the maximum); drop time_based: false")
        longest = parse_duration(self.runtime) if self.runtime is not None else None
        if self.stop.min and longest is not None and parse_duration(self.stop.min) > longest:
            given = "stop.max" if self.stop.max is not None else "the runtime"  # the key the user wrote
            raise KeyProblem(("stop", "min"), f"stop.min ({self.stop.min}) is longer than {given} ({self.runtime}), "
                             "the longest the job runs")
        return self

    @property
    def stop_rule(self) -> StopRule | None:
        """The adaptive stop's rule for this job (None: it runs its whole runtime)."""
        if not isinstance(self.stop, Stop):
            return None
        depth = 1 if self.ioengine in SYNC_ENGINES else (self.iodepth or 1)  # a sync engine: one at a time
        return self.stop.rule(parse_duration(self.runtime or BUILTIN_DEFAULTS.runtime or "30s"),
                              in_flight=depth * (self.numjobs or 1))

    @property
    def rounds(self) -> int:
        """Engine runs this workload may take: 1, up to max_rounds under the steady-state protocol, or
        the most steps of the knee search (``iodepth: auto``)."""
        if self.knee is not None:
            return self.knee.steps
        return (self.max_rounds or STEADY_MAX_ROUNDS) if self.protocol == "steady_state" else 1

    @model_validator(mode="before")
    @classmethod
    def _lists_are_sweeps(cls, data: Any) -> Any:
        if isinstance(data, dict):
            lists = {k: data[k] for k in SWEEPABLE if isinstance(data.get(k), list)}
            if lists:
                data = {k: v for k, v in data.items() if k not in lists}
                if isinstance(data.get("sweep") or {}, dict):  # else pydantic names the bad sweep alone
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
            if len(values) > MAX_SWEEP:
                raise ValueError(f"{param}: a sweep takes at most {MAX_SWEEP} values, not {len(values)}")
            for value in values:
                try:
                    WorkloadOptions.model_validate({param: value})
                except ValidationError as exc:
                    msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
                    raise ValueError(f"{param} value {value!r}: {msg}") from None
        return v

    @field_validator("sections")
    @classmethod
    def _section_names(cls, v: list[Section] | None) -> list[Section] | None:
        if v is not None:
            names = [s.name for s in v]
            if len(set(names)) != len(names):
                raise ValueError("section names must be unique within a workload")
            if not v:
                return None
        return v

    def section_targets(self) -> list[str]:
        """The target names this workload's sections name (empty without sections)."""
        return [s.target for s in self.sections or [] if s.target]

    def for_section(self, section: Section) -> Workload:
        """This workload with one section's settings on top: what that job runs."""
        merged = self.model_dump(exclude_none=True, exclude={"sections"})
        merged.update(section.model_dump(exclude_none=True, exclude={"target", "name"}))
        merged["extra"] = {**(self.extra or {}), **(section.extra or {})}
        merged["name"] = section.name
        return Workload.model_validate(merged)


def writes(rw: str | None) -> bool:
    """Does this rw mode write? (then a device target must be free to be overwritten)"""
    return rw in WRITE_MODES
