"""diskbench's workload vocabulary -> DiskSpd settings, and what in a workload DiskSpd cannot honour.

A workload is a plain mapping with fio's names (rw, bs, iodepth, numjobs, rwmixread, size,
runtime, ramp_time, rate_iops, direct, time_based, ioengine, extra) plus an optional
``diskspd:`` mapping for switches only DiskSpd has:

==================  =====================================  ==================================
``diskspd:`` key    value                                  DiskSpd switch
==================  =====================================  ==================================
threads             ``per_target`` (default) or ``total``  numjobs as ``-t`` or as ``-F``
caching             letters of ``bhruw`` (e.g. ``h``)      ``-S<letters>`` (``h`` = ``uw``)
random_align        a size, e.g. ``4k``                    ``-r<align>`` (random rw only)
interlocked         true                                   ``-si`` (sequential rw only)
cooldown            a duration in whole seconds            ``-C``
write_buffer        ``pattern``, ``zero``, ``random``,     default, ``-Z``, ``-Zr``,
                    or a size such as ``20M``              ``-Z<size>``
seed                an integer                             ``-z<seed>``
throughput          bytes per millisecond per thread       ``-g<n>`` (``rate_iops`` is ``-g<n>i``)
base_offset         a size                                 ``-B<base>`` (``size`` is its length)
==================  =====================================  ==================================

Counts map per target: ``iodepth`` is ``-o`` (outstanding I/Os per thread per target), ``numjobs``
threads per target (``-t``) or in all (``-F``), ``rate_iops`` caps each thread on each target
(``-g<n>i``), so fio's per-job meanings hold for one target. ``size`` limits the range of the
target the I/O covers (``<MaxFileSize>``, from ``base_offset``); creating the file is the target's
business (``DiskspdTarget.create_size``). DiskSpd has no trim and no size-based runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from diskbench.units import parse_duration, parse_size

RW = {  # rw -> (random?, write ratio or None for "from rwmixread")
    "read": (False, 0), "write": (False, 100), "randread": (True, 0), "randwrite": (True, 100),
    "rw": (False, None), "readwrite": (False, None), "randrw": (True, None),
}
# where and what, not how (flush_cache: the platform's step before the run): not DiskSpd's business
_IGNORED = {"name", "description", "targets", "flush_cache"}
_ENGINES_OK = {None, "default", "windowsaio"}  # DiskSpd always issues overlapped I/O on completion ports
_DISKSPD_KEYS = ("threads", "caching", "random_align", "interlocked", "cooldown", "write_buffer", "seed",
                 "throughput", "base_offset")
_UINT32 = 2**32 - 1


@dataclass
class TimeSpanSpec:
    duration: int | None
    warmup: int | None
    cooldown: int | None
    thread_count: int | None
    rand_seed: int | None
    random_write_data: bool
    bucket_ms: int = 1000


@dataclass
class IoSpec:
    block_size: int
    base_offset: int
    random_align: int | None
    stride: int
    interlocked: bool
    disable_os_cache: bool
    disable_local_cache: bool
    write_through: bool
    pattern: str
    random_buffer_size: int | None
    max_file_size: int | None
    request_count: int
    write_ratio: int
    throughput_iops: int | None
    throughput_bpms: int | None
    threads_per_file: int | None


class _Checker:
    """Collects (key, why) problems while reading values, so every bad key is named at once."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []

    def bad(self, key: str, why: str) -> None:
        self.problems.append((key, why))

    def size(self, key: str, value: Any, *, zero_ok: bool = False) -> int | None:
        try:
            n = parse_size(value)
        except (ValueError, TypeError):
            self.bad(key, f"{value!r} is not a size (use e.g. 4k, 8k, 64k, 1M)")
            return None
        if n == 0 and not zero_ok:
            self.bad(key, "must be greater than zero")
            return None
        return n

    def seconds(self, key: str, value: Any) -> int | None:
        try:
            s = parse_duration(value)
        except (ValueError, TypeError):
            self.bad(key, f"{value!r} is not a duration (use e.g. 30s, 2m)")
            return None
        if s != int(s) or s > _UINT32:
            self.bad(key, f"{value!r}: DiskSpd counts whole seconds")
            return None
        return int(s)

    def count(self, key: str, value: Any, *, low: int = 1, high: int = _UINT32) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.bad(key, f"{value!r} is not a whole number from {low} to {high}")
            return None
        return value


def _caching(c: _Checker, letters: Any, direct: Any) -> tuple[bool, bool, bool]:
    """(disable OS cache, disable local cache, write-through) of -S letters or of ``direct``."""
    if letters is None:
        return direct is True, False, False
    if not isinstance(letters, str) or not letters or set(letters) - set("bhruw"):
        c.bad("diskspd.caching", f"{letters!r} is not made of DiskSpd's -S letters b, h, r, u, w")
        return False, False, False
    flags = set(letters.replace("h", "uw"))
    if "b" in flags and flags & {"u", "r"} or {"u", "r"} <= flags:
        c.bad("diskspd.caching", f"-S{letters} combines conflicting cache modes")
    if direct is False and "u" in flags:
        c.bad("direct", f"false conflicts with diskspd.caching {letters!r}, which bypasses the OS cache")
    if direct is True and "u" not in flags:
        c.bad("direct", f"true needs diskspd.caching with u or h (-Su/-Sh), not {letters!r}")
    return "u" in flags, "r" in flags, "w" in flags


def _write_buffer(c: _Checker, value: Any) -> tuple[str, int | None, bool]:
    """(XML pattern, random buffer size, per-I/O random data) of ``write_buffer``."""
    if value in (None, "pattern"):
        return "sequential", None, False
    if value == "zero":
        return "zero", None, False
    if value == "random":
        return "sequential", None, True
    size = c.size("diskspd.write_buffer", value)
    return ("random", size, False) if size else ("sequential", None, False)


def _fio_keys(c: _Checker, w: Mapping[str, Any]) -> None:
    known = {"rw", "bs", "iodepth", "numjobs", "rwmixread", "size", "runtime", "ramp_time", "rate_iops", "direct",
             "time_based", "ioengine", "extra", "diskspd", *_IGNORED}
    for key in w:
        if key == "sweep" and w[key]:
            c.bad("sweep", "render one DiskSpd profile per swept value")
        elif key not in known and key != "sweep":
            c.bad(key, "not a workload option diskbench knows")
    for key in (w.get("extra") or {}):
        c.bad(f"extra.{key}", "an fio option: DiskSpd has no such setting")
    if w.get("ioengine") not in _ENGINES_OK:
        c.bad("ioengine", f"{w['ioengine']!r} is an fio engine: DiskSpd always uses overlapped I/O with "
                          "completion ports (leave ioengine unset for DiskSpd)")
    if w.get("time_based") is False:
        c.bad("time_based", "false has no DiskSpd meaning: DiskSpd always runs for a fixed time (runtime)")
    if w.get("direct") not in (None, True, False):
        c.bad("direct", f"{w['direct']!r} is not true or false")


def _diskspd_map(c: _Checker, w: Mapping[str, Any]) -> Mapping[str, Any]:
    ds = w.get("diskspd") or {}
    if not isinstance(ds, Mapping):
        c.bad("diskspd", "must be a mapping of DiskSpd options")
        return {}
    for key in ds:
        if key not in _DISKSPD_KEYS:
            c.bad(f"diskspd.{key}", f"not a DiskSpd option diskbench knows ({', '.join(_DISKSPD_KEYS)})")
    if ds.get("threads", "per_target") not in ("per_target", "total"):
        c.bad("diskspd.threads", f"{ds['threads']!r}: use per_target (-t) or total (-F)")
    if "throughput" in ds and w.get("rate_iops"):
        c.bad("diskspd.throughput", "conflicts with rate_iops: DiskSpd takes one cap (-g)")
    return ds


def _access(c: _Checker, w: Mapping[str, Any], ds: Mapping[str, Any], bs: int) -> tuple[int | None, int, int]:
    """(random alignment or None, sequential stride, write ratio) of rw, rwmixread and diskspd keys."""
    rw = w.get("rw", "read")
    if rw not in RW:
        why = "DiskSpd cannot trim" if rw in ("trim", "randtrim") else "not an rw mode"
        c.bad("rw", f"{rw!r}: {why}")
        return None, bs, 0
    random, ratio = RW[rw]
    if ratio is None:
        mix = w.get("rwmixread", 50)
        ratio = 100 - (c.count("rwmixread", mix, low=0, high=100) or 0) if mix is not None else 50
    if "random_align" in ds and not random:
        c.bad("diskspd.random_align", f"only for random I/O, and rw is {rw!r}")
    if ds.get("interlocked") and random:
        c.bad("diskspd.interlocked", f"only for sequential I/O, and rw is {rw!r}")
    align = c.size("diskspd.random_align", ds["random_align"]) if "random_align" in ds else None
    return (align or bs) if random else None, bs, ratio


def _int_or_none(c: _Checker, key: str, value: Any, **kw: int) -> int | None:
    return None if value is None else c.count(key, value, **kw)


def resolve(w: Mapping[str, Any]) -> tuple[TimeSpanSpec, IoSpec, list[tuple[str, str]]]:
    """DiskSpd settings of workload ``w``, and the (key, why) of everything DiskSpd cannot honour."""
    c = _Checker()
    _fio_keys(c, w)
    ds = _diskspd_map(c, w)
    bs = c.size("bs", w.get("bs", "64k")) or 65536
    if bs > _UINT32:
        c.bad("bs", "DiskSpd block sizes must be below 4 GiB")
    random_align, stride, write_ratio = _access(c, w, ds, bs)
    numjobs = _int_or_none(c, "numjobs", w.get("numjobs")) or 1
    total = ds.get("threads") == "total"
    no_os, no_local, through = _caching(c, ds.get("caching"), w.get("direct"))
    pattern, buffer_size, per_io_random = _write_buffer(c, ds.get("write_buffer"))
    base = c.size("diskspd.base_offset", ds["base_offset"], zero_ok=True) if "base_offset" in ds else 0
    length = c.size("size", w["size"]) if w.get("size") is not None else None
    ts = TimeSpanSpec(
        duration=c.seconds("runtime", w["runtime"]) if w.get("runtime") is not None else None,
        warmup=c.seconds("ramp_time", w["ramp_time"]) if w.get("ramp_time") is not None else None,
        cooldown=c.seconds("diskspd.cooldown", ds["cooldown"]) if ds.get("cooldown") is not None else None,
        thread_count=numjobs if total else None,
        rand_seed=_int_or_none(c, "diskspd.seed", ds.get("seed"), low=0),
        random_write_data=per_io_random,
    )
    io = IoSpec(
        block_size=bs, base_offset=base or 0, random_align=random_align, stride=stride,
        interlocked=bool(ds.get("interlocked")), disable_os_cache=no_os, disable_local_cache=no_local,
        write_through=through, pattern=pattern, random_buffer_size=buffer_size,
        max_file_size=(base or 0) + length if length else None,
        request_count=_int_or_none(c, "iodepth", w.get("iodepth")) or 2,
        write_ratio=write_ratio,
        throughput_iops=_int_or_none(c, "rate_iops", w.get("rate_iops")),
        throughput_bpms=_int_or_none(c, "diskspd.throughput", ds.get("throughput")),
        threads_per_file=None if total else numjobs,
    )
    return ts, io, c.problems


def check_workload(options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, why) for every option of ``options`` that has no DiskSpd meaning or a bad value."""
    return resolve(options)[2]
