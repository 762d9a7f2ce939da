"""Profile validation, validator by validator: each limit at its edge, each message as a user reads it.

test_profile.py checks that a malformed profile gives one line naming the file, the line and the key;
these check what each validator accepts, what it turns a value into, and where it stops (30 days is
a runtime, 30 days and a second is not; a sweep of 64 values is one, 65 is not), with the figures
worked out beside each case.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from diskbench.profile import parse_profile
from diskbench.profile.assembly import validation_context
from diskbench.profile.machines import Host, MachineBase
from diskbench.profile.targets import (
    DeviceTarget,
    DirTarget,
    LunsTarget,
    LunTarget,
    NfsTarget,
    ScratchTarget,
    StripeTarget,
    TempTarget,
    directory,
    model_for,
    parse_target,
    scratch,
)
from diskbench.profile.workload import (
    BUILTIN_DEFAULTS,
    MAX_BS,
    MAX_JOB_S,
    MAX_SWEEP,
    Section,
    Workload,
    WorkloadOptions,
    named,
    writes,
)
from diskbench.text import check_line, control_char, first_unsafe, plain_values, printable, shown
from diskbench.units import MAX_SECONDS, MAX_SIZE, parse_duration, parse_size


def error(model: type[BaseModel], data: Any) -> str:
    """The first validation message, as the profile loader shows it (without pydantic's prefix)."""
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    return str(caught.value.errors()[0]["msg"]).removeprefix("Value error, ")


def w(**kw: Any) -> Workload:
    return Workload.model_validate({"name": "w", "rw": "read", **kw})


# --- sizes and durations ----------------------------------------------------------------------
@pytest.mark.parametrize(("text", "size"), [
    ("4k", 4096), ("4K", 4096), (" 8k ", 8192), ("4KiB", 4096), ("4kb", 4096), ("1.5k", 1536), ("64", 64),
    ("1M", 1024**2), ("1g", 1024**3), ("2t", 2 * 1024**4), ("1p", 1024**5), ("1024p", 2**60), (0, 0), (2**60, 2**60),
])
def test_sizes_in_fios_units(text: str | int, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(("value", "message"), [
    (True, "True is not a size"), (-1, "-1 is not a size"), ("lots", "'lots' is not a size"),
    ("4x", "'4x' is not a size"), ("-4k", "'-4k' is not a size"),
    ("1025p", "'1025p' is larger than 1 EiB"),  # 1025 x 2^50 > 2^60
    (2**60 + 1, f"{2**60 + 1} is larger than 1 EiB"), ("9" * 400, f"{shown('9' * 400)} is larger than 1 EiB"),
])
def test_what_is_not_a_size(value: Any, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_size(value)
    assert str(caught.value) == message
    assert MAX_SIZE == 2**60


@pytest.mark.parametrize(("text", "seconds"), [
    (30, 30.0), (1.5, 1.5), ("30", 30.0), ("30s", 30.0), ("5 S", 5.0), ("500ms", 0.5), ("10us", 1e-5), ("2m", 120.0),
    ("1h", 3600.0), ("2d", 172800.0), ("1.5m", 90.0), ("36500d", MAX_SECONDS), (0, 0.0),
])
def test_durations(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize(("value", "message"), [
    (False, "False is not a duration"), (-1, "-1 is not a duration"), (float("inf"), "inf is not a duration"),
    (float("nan"), "nan is not a duration"), ("forever", "'forever' is not a duration (use e.g. 30s, 2m)"),
    ("2w", "'2w' is not a duration (use e.g. 30s, 2m)"),
    ("36501d", "'36501d' is longer than a century"),  # 100 x 365 days is the most
    (MAX_SECONDS + 1, f"{MAX_SECONDS + 1!r} is longer than a century"),
])
def test_what_is_not_a_duration(value: Any, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_duration(value)
    assert str(caught.value) == message


# --- workload settings ------------------------------------------------------------------------
def test_block_sizes() -> None:
    assert WorkloadOptions(bs="4k").bs == "4k" and WorkloadOptions(bs=4096).bs == "4096"  # type: ignore[arg-type]
    assert WorkloadOptions(bs=None).bs is None
    assert WorkloadOptions(bs="2g").bs == "2g" and parse_size("2g") == MAX_BS == 2**31  # the largest
    assert error(WorkloadOptions, {"bs": "2049m"}) == "'2049m' is larger than fio's largest block size (2 GiB here)"
    assert error(WorkloadOptions, {"bs": MAX_BS + 1}) == (
        "2147483649 is larger than fio's largest block size (2 GiB here)")
    assert error(WorkloadOptions, {"bs": 0}) == "0 is not a block size (use e.g. 4k, 8k, 64k, 1M)"
    assert error(WorkloadOptions, {"bs": "7q"}) == "'7q' is not a block size (use e.g. 4k, 8k, 64k, 1M)"


def test_sizes_and_durations_of_a_workload() -> None:
    assert WorkloadOptions(size="1G").size == "1G" and WorkloadOptions(size=4096).size == "4096"  # type: ignore[arg-type]
    assert error(WorkloadOptions, {"size": 0}) == "0 is not a size greater than zero"
    assert error(WorkloadOptions, {"size": "lots"}) == "'lots' is not a size"
    assert MAX_JOB_S == 30 * 86400
    assert WorkloadOptions(runtime="30d").runtime == "30d"  # exactly 30 days
    assert WorkloadOptions(runtime=90, ramp_time=2).model_dump(exclude_none=True) == {  # type: ignore[arg-type]
        "runtime": "90", "ramp_time": "2"}
    assert error(WorkloadOptions, {"runtime": "720h1s"}) == "'720h1s' is not a duration (use e.g. 30s, 2m)"
    assert error(WorkloadOptions, {"runtime": 30 * 86400 + 1}) == "2592001 is longer than 30 days"
    assert error(WorkloadOptions, {"ramp_time": "31d"}) == "'31d' is longer than 30 days"


def test_io_engines_and_extra_options() -> None:
    assert WorkloadOptions(ioengine="io_uring").ioengine == "io_uring"
    assert WorkloadOptions(ioengine="external:/opt/e.so").ioengine == "external:/opt/e.so"
    assert error(WorkloadOptions, {"ioengine": "lib aio"}) == "'lib aio' is not an fio ioengine name"
    assert error(WorkloadOptions, {"ioengine": "LibAIO"}) == "'LibAIO' is not an fio ioengine name"
    assert WorkloadOptions(extra={"norandommap": 1, "zonemode": "none", "x2": 1.5}).extra == {
        "norandommap": 1, "zonemode": "none", "x2": 1.5}
    assert error(WorkloadOptions, {"extra": {"Bad": 1}}) == (
        "'Bad' is not an engine option name (lower-case letters, digits, _)")
    assert error(WorkloadOptions, {"extra": {"a-b": 1}}).startswith("'a-b' is not an engine option name")
    # control characters and non-finite numbers anywhere in the values: refused before any field
    assert error(WorkloadOptions, {"extra": {"k": "a\nb"}}) == "extra.k: contains a newline; values must be plain text"
    assert error(WorkloadOptions, {"extra": {"k": float("inf")}}) == "extra.k: inf is not a finite number"
    assert error(WorkloadOptions, {"bs": "4k\x1b"}) == "bs: contains an escape (ESC); values must be plain text"


def test_engine_blocks_are_kept_for_their_engine() -> None:
    """A block named after an installed engine (the names come with the validation, as the profile
    loader gives them) is kept for it; without those names no key is an engine's."""
    ctx = validation_context()
    got = WorkloadOptions.model_validate({"diskspd": {"affinity": "0,1"}, "engine_options": {"fio": {"a": 1}}},
                                         context=ctx)
    assert got.engine_options == {"fio": {"a": 1}, "diskspd": {"affinity": "0,1"}}
    assert WorkloadOptions.model_validate({"fio": {"x": 1}}, context=ctx).engine_options == {"fio": {"x": 1}}
    assert WorkloadOptions.model_validate({"engine": "fio"}, context=ctx).engine_options is None  # a field
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        WorkloadOptions.model_validate({"nosuchengine": {"x": 1}}, context=ctx)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        WorkloadOptions.model_validate({"diskspd": {"affinity": "0,1"}})  # no engines given
    profile = parse_profile("name: p\nworkloads:\n  - {name: w, rw: read, diskspd: {affinity: '0'}}\n")
    assert profile.workloads[0].engine_options == {"diskspd": {"affinity": "0"}}


def test_the_built_in_defaults() -> None:
    assert BUILTIN_DEFAULTS.model_dump(exclude_none=True) == {
        "bs": "4k", "iodepth": 1, "numjobs": 1, "size": "1G", "runtime": "30s", "ramp_time": "2s", "direct": True,
        "ioengine": "libaio", "time_based": True}


def test_names() -> None:
    check = named("workload")
    assert check("a") == "a" and check("A9._-" + "x" * 58) == "A9._-" + "x" * 58  # 63 after the first: 64
    for bad in ("", "-a", ".a", "a b", "x" * 65, "a/b", "é"):
        with pytest.raises(ValueError) as caught:
            check(bad)
        assert str(caught.value) == f"{shown(bad)} is not a workload name (up to 64 letters, digits, '.', '_', '-')"


def test_draining_a_burst() -> None:
    assert w(drain_burst=90).drain_burst == "90s" and w(drain_burst=1.5).drain_burst == "1.5s"
    assert w(drain_burst=True).drain_burst is True and w(drain_burst=False).drain_burst is None
    assert w(drain_burst="YES").drain_burst is True and w(drain_burst="on").drain_burst is True
    assert w(drain_burst="true").drain_burst is True
    assert w(drain_burst="no").drain_burst is None and w(drain_burst="Off").drain_burst is None
    assert w(drain_burst="false").drain_burst is None
    assert w(drain_burst="30d").drain_burst == "30d"
    why = ": give the longest draining may take (up to 30 days), e.g. 35m, or true"
    assert error(Workload, {"name": "w", "drain_burst": "0s"}) == "'0s'" + why
    assert error(Workload, {"name": "w", "drain_burst": "31d"}) == "'31d'" + why
    assert error(Workload, {"name": "w", "drain_burst": 0}) == "'0s'" + why
    # how long it may take: 35 minutes by default (a full bucket lasts 30 at the burst cap)
    assert (w().drain_s, w(drain_burst=True).drain_s, w(drain_burst="90m").drain_s) == (0.0, 2100.0, 5400.0)


def test_rounds_of_the_steady_state_protocol() -> None:
    assert w().rounds == 1
    assert w(protocol="steady_state").rounds == 25
    assert w(protocol="steady_state", max_rounds=7).rounds == 7
    assert error(Workload, {"name": "w", "max_rounds": 7}) == (
        "max_rounds is for protocol: steady_state; add it, or drop max_rounds")
    assert error(Workload, {"name": "w", "protocol": "steady_state", "max_rounds": 4}).startswith(
        "Input should be greater than or equal to 5")


def test_sweeps() -> None:
    assert w(bs=["4k", "64k"]).sweep == {"bs": ["4k", "64k"]} and w(bs=["4k"]).bs is None
    assert w(sweep={"iodepth": [1, 32]}).sweep == {"iodepth": [1, 32]}
    assert w(sweep={}).sweep is None
    assert w(numjobs=list(range(1, MAX_SWEEP + 1))).sweep == {"numjobs": list(range(1, 65))}  # 64: the most
    assert error(Workload, {"name": "w", "numjobs": list(range(1, 66))}) == (
        "numjobs: a sweep takes at most 64 values, not 65")
    assert error(Workload, {"name": "w", "sweep": {"bs": []}}) == "bs: a sweep needs at least one value"
    assert error(Workload, {"name": "w", "iodepth": [1, 2], "sweep": {"bs": ["4k"]}}) == (
        "a workload sweeps one parameter at a time, not bs, iodepth")
    assert error(Workload, {"name": "w", "iodepth": [1, 0]}) == (
        "iodepth value 0: Input should be greater than or equal to 1")
    assert error(Workload, {"name": "w", "bs": ["4k", "7q"]}) == (
        "bs value '7q': '7q' is not a block size (use e.g. 4k, 8k, 64k, 1M)")


def test_sections() -> None:
    two = w(extra={"a": 1, "b": 1}, bs="4k", sections=[{"name": "r", "rw": "randread", "target": "cached"},
                                                        {"name": "wr", "rw": "write", "extra": {"b": 2}}])
    assert two.section_targets() == ["cached"]
    assert two.sections is not None
    job = two.for_section(two.sections[1])
    assert (job.name, job.rw, job.bs, job.extra, job.sections) == ("wr", "write", "4k", {"a": 1, "b": 2}, None)
    assert w(sections=[]).sections is None and w().section_targets() == []
    assert error(Workload, {"name": "w", "sections": [{"name": "r"}, {"name": "r"}]}) == (
        "section names must be unique within a workload")
    assert isinstance(two.sections[0], Section)


def test_which_modes_write() -> None:
    assert [m for m in ("read", "randread", "write", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim",
                        "trimwrite") if writes(m)] == ["write", "randwrite", "rw", "readwrite", "randrw", "trim",
                                                       "randtrim", "trimwrite"]
    assert not writes(None)


# --- targets ----------------------------------------------------------------------------------
def test_targets_by_kind() -> None:
    assert isinstance(parse_target("scratch"), ScratchTarget) and isinstance(parse_target("temp"), TempTarget)
    assert parse_target({"lun": 0}) == LunTarget(lun=0)  # LUN 0 is a LUN, not "no LUN"
    # a kind set to false or null is not that kind: the target is a dir, whose model then names the
    # key it does not take (rather than "needs exactly one of")
    for off in (False, None):
        with pytest.raises(ValidationError) as caught:
            parse_target({"scratch": off, "dir": "/d"})
        assert [(e["type"], e["loc"]) for e in caught.value.errors()] == [("extra_forbidden",
                                                                           ("target:dir", "scratch"))]
    existing = DirTarget(dir="/x")
    assert parse_target(existing) == existing
    with pytest.raises(ValidationError) as caught:
        parse_target({"dir": "/d", "device": "/dev/sdb"})
    assert caught.value.errors()[0]["msg"] == (
        "a target needs exactly one of scratch, dir, temp, device, stripe, nvme, lun, luns, nfs")
    with pytest.raises(ValidationError):
        parse_target(["dir"])
    with pytest.raises(ValueError) as caught_value:
        parse_target("floppy")
    assert str(caught_value.value) == "'floppy' is not a target (use scratch, temp, or a mapping like dir: /mnt)"
    assert scratch() == ScratchTarget(scratch=True) and directory("/data") == DirTarget(dir="/data")
    assert model_for("luns") is LunsTarget and model_for("nfs") is NfsTarget


def test_labels_and_values() -> None:
    assert scratch().label == "scratch" and TempTarget(temp=True).label == "temp"
    assert directory("/data").label == "dir:/data" and directory("/data").value == "/data"
    assert StripeTarget(stripe=["/dev/sdc", "/dev/sdd"]).label == "stripe:/dev/sdc+/dev/sdd"
    assert LunsTarget(luns=[0, 1]).label == "luns:0+1" and LunTarget(lun=2).label == "lun:2"
    assert (DeviceTarget.formats, DirTarget.formats, ScratchTarget.kind) == (True, False, "scratch")


def test_warmup_and_chunk() -> None:
    assert DirTarget(dir="/d", warmup="30d").warmup == "30d" and DirTarget(dir="/d", warmup=True).warmup is True
    assert error(DirTarget, {"dir": "/d", "warmup": "31d"}) == "'31d' is longer than 30 days"
    assert error(DirTarget, {"dir": "/d", "warmup": 30 * 86400 + 1}).startswith("Input should be a valid")
    assert StripeTarget(stripe=["/dev/a"], chunk="4k").chunk == "4k"  # the smallest
    assert error(StripeTarget, {"stripe": ["/dev/a"], "chunk": "4095"}) == "'4095' is not a chunk size of at least 4k"
    assert error(DirTarget, {"dir": "/d\n[global]"}) == "dir: contains a newline; values must be plain text"


# --- machines ---------------------------------------------------------------------------------
def test_host_targets() -> None:
    host = Host(name="h", address="198.18.0.1")
    assert list(host.targets) == ["scratch"]
    assert error(Host, {"name": "h", "address": "198.18.0.1", "targets": {}}) == "a host needs at least one target"
    assert error(Host, {"name": "h", "address": "198.18.0.1", "targets": {"a b": "temp"}}) == (
        "'a b' is not a target name (up to 64 letters, digits, '.', '_', '-')")


def test_a_machine_has_one_target_or_named_targets() -> None:
    base = {"name": "m", "provider": "azure"}
    assert MachineBase.model_validate({**base, "target": "temp"}).named_targets() == {"": TempTarget(temp=True)}
    assert list(MachineBase.model_validate({**base, "targets": {"t": "temp"}}).named_targets()) == ["t"]
    assert error(MachineBase, base) == "a machine needs either target: or targets:"
    assert error(MachineBase, {**base, "target": "temp", "targets": {"t": "temp"}}) == (
        "a machine needs either target: or targets:")
    assert error(MachineBase, {**base, "targets": {"-t": "temp"}}) == (
        "'-t' is not a target name (up to 64 letters, digits, '.', '_', '-')")


# --- text -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "name"), [
    ("a\nb", "a newline"), ("\r", "a carriage return"), ("\t", "a tab"), ("\x1b[2J", "an escape (ESC)"),
    ("\x00", "a NUL byte"), ("\x7f", "the control character U+007F"), ("\x85", "the control character U+0085"),
    ("\x9f", "the control character U+009F"), ("\u202e", "the control character U+202E"),
    ("\u2066", "the control character U+2066"), ("\u2069", "the control character U+2069"),
    ("\u200f", "the control character U+200F"), ("\u2028", "the control character U+2028"),
    ("\x1f", "the control character U+001F"), ("ok\x01", "the control character U+0001"),
])
def test_control_characters_named(text: str, name: str) -> None:
    assert control_char(text) == name


def test_plain_text_and_lines() -> None:
    assert control_char("plain é ü 日本 \u00a0") is None and control_char("\x20~") is None
    assert control_char("a\nb\tc", lines_ok=True) is None  # a description may span lines and hold tabs
    assert control_char("a\rb", lines_ok=True) == "a carriage return"
    assert control_char("\x0b", lines_ok=True) == "the control character U+000B"
    assert control_char("\x08", lines_ok=True) == "the control character U+0008"
    assert check_line("plain", "x") == "plain"
    with pytest.raises(ValueError) as caught:
        check_line("a\tb", "the value of k")
    assert str(caught.value) == "the value of k contains a tab; values must be one line of plain text"


def test_the_first_unsafe_value_in_document_order() -> None:
    assert first_unsafe({"a": ["ok", "x\ny", "\t"], "b": "\x1b"}) == (
        ["a", 1], "contains a newline; values must be plain text")
    assert first_unsafe({"w": [{"description": "two\nlines"}]}) is None
    assert first_unsafe({"w": [{"description": "esc\x1b"}]}) == (["w", 0, "description"],
                                                                  "contains an escape (ESC); values must be plain text")
    assert first_unsafe({"a\nb": 1}) == (["a\nb"], "the key 'a\\nb' contains a newline")
    assert first_unsafe({"x": (1.0, float("nan"))}) == (["x", 1], "nan is not a finite number")
    assert first_unsafe({"x": float("-inf")}) == (["x"], "-inf is not a finite number")
    assert first_unsafe("top\nlevel") == ([], "contains a newline; values must be plain text")
    assert first_unsafe({"n": 1, "f": 1.5, "t": True, 3: "x"}) is None


def test_plain_values_for_validators() -> None:
    data = {"a": {"b": "ok"}}
    assert plain_values(data) is data and plain_values("not\na dict") == "not\na dict"
    with pytest.raises(ValueError) as caught:
        plain_values({"a": {"b": [0, "x\x00"]}})
    assert str(caught.value) == "a.b.1: contains a NUL byte; values must be plain text"


def test_shown_and_printable() -> None:
    assert shown("x" * 40) == repr("x" * 40)  # 42 characters with the quotes: whole
    assert shown("x" * 41) == "'" + "x" * 39 + "…"  # 43: cut to 40 and an ellipsis
    assert printable("a\x1b[31mb") == "a\\x1b[31mb" and printable("a\nb") == "a\\nb"
    assert printable("a\nb\x1b", keep_newlines=True) == "a\nb\\x1b"
    assert printable("a\u202eb") == "a\\u202eb"
    plain = "plain"
    assert printable(plain) is plain


def test_install_engine_reads_its_old_name() -> None:
    """``install_fio`` (before the engine-neutral name) still works in old profiles."""
    assert Host.model_validate({"name": "h", "address": "h1", "install_fio": False}).install_engine is False
    assert Host.model_validate({"name": "h", "address": "h1", "install_engine": False}).install_engine is False
    assert Host.model_validate({"name": "h", "address": "h1"}).install_engine is True
