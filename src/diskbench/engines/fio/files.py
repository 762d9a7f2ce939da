"""The files fio lays out for a job section, by name and size: what a target must have room for.

fio names a job's files ``NAME.JOB.FILE`` (``filename_format`` is refused in profiles): ``numjobs``
jobs of ``nrfiles`` files, each ``filesize`` (the top of a range) or ``size / nrfiles``, plus a plain
``offset`` (and ``offset_increment`` per job). Checked against fio 3.33.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...profile import Workload
from ...units import parse_size
from ..base import UnknownLayout

NO_FILES = ("null", "cpuio")  # fio ioengines that open no files (FIO_DISKLESSIO)
WHOLE_FS = ("fill_device", "fill_fs")  # fio writes until the file system is full, by design


def fio_files(w: Workload) -> dict[str, int]:
    """The files fio lays out for one job section of ``w``, by name, with their sizes."""
    extra = w.extra or {}
    if w.ioengine in NO_FILES:
        return {}
    for key in (*WHOLE_FS, "file_append"):
        if fio_flag(extra, key):
            raise UnknownLayout(f"workload {w.name} sets {key}, so how much its files take is not known beforehand")
    if w.size is None:
        raise UnknownLayout(f"workload {w.name} has no size")
    nrfiles = _count(w.name, extra.get("nrfiles", extra.get("nr_files", 1)))
    given = extra.get("filesize")
    each = _top(w.name, given) if given is not None else parse_size(w.size) // nrfiles
    offset, step = _offset(w.name, extra.get("offset")), _offset(w.name, extra.get("offset_increment"))
    return {f"{w.name}.{job}.{n}": offset + job * step + each
            for job in range(w.numjobs or 1) for n in range(nrfiles)}


def fio_flag(extra: Mapping[str, object] | None, key: str) -> bool:
    """An fio boolean in ``extra`` (1, true, yes, on)."""
    value = (extra or {}).get(key)
    return value is not None and str(value).strip().lower() in ("1", "true", "yes", "on")


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not str(value).strip().isdigit() or int(str(value)) < 1:
        raise UnknownLayout(f"workload {name}: nrfiles {value!r} is not a number of files")
    return int(str(value))


def _top(name: str, value: object) -> int:
    """A size or the top of a range (``1M-4M``, ``1M:4M``): the most a file may be."""
    try:
        return max(parse_size(part.strip()) for part in str(value).replace(":", "-").split("-"))
    except ValueError:
        raise UnknownLayout(f"workload {name}: filesize {value!r} is not a size") from None


def _offset(name: str, value: object) -> int:
    """Bytes before the I/O in each file: a plain size; a percentage lies within the file (adds nothing)."""
    if value is None or str(value).strip().endswith("%"):
        return 0
    try:
        return parse_size(str(value))
    except ValueError:
        raise UnknownLayout(f"workload {name}: offset {value!r} is not a size") from None
