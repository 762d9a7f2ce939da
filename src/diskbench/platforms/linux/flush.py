"""A workload's ``flush_cache`` on Linux: a separate data set read with direct I/O, then the host's
page cache dropped, so neither the storage's cache nor this host's holds the job's data.

The scale-out article (seed 002) flushes before each iteration of its uncached 256 KiB series by
reading "a completely separate large data set that is not part of the benchmark". Read through the
page cache, a second pass over that set would come from this host's memory and never reach the
storage, so it is read with ``iflag=direct``; what the page cache held of the job's own files is
then dropped (``drop_caches``). The set is laid out once per run and target with random data (a
storage that skips zeros would have nothing to cache), ``FILES`` files written and read at once,
and removed with the target. Nothing here is measured or stored as a result: what ran and what it
said are kept in the unit's folder (``flush.sh``, ``flush.stdout.txt``, ``flush.stderr.txt``, and
``flush-layout.*`` the first time).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from ...errors import ExecutionError
from ...executors.base import Executor
from ...units import human_bytes

FILES = 8  # files of the separate data set, written and read at once (one stream each)
MIB = 1 << 20
SLOWEST_BYTES_PER_S = 20 * MIB  # how slow a flush may be before it counts as hung
DROP = "sync && echo 3 > /proc/sys/vm/drop_caches"  # page cache, dentries and inodes


def file_mib(size: int) -> int:
    """MiB per file of a ``size``-byte set (at least 1: the set is never smaller than asked)."""
    return max(1, -(-size // (FILES * MIB)))


def layout_script(folder: str, size: int) -> str:
    """Write the separate data set: ``FILES`` files of random data, all at once, with direct I/O."""
    q, mib = shlex.quote(folder), file_mib(size)
    each = (f'dd if=/dev/urandom of={q}/flush.$i bs=1M count={mib} iflag=fullblock oflag=direct '
            'status=none')
    return _parallel(f"mkdir -p {q}\n", each, f"i=0; while [ $i -lt {FILES} ]; do", "i=$((i + 1)); done")


def read_script(folder: str) -> str:
    """Read every file of the set once, all at once, with direct I/O (none of it from this host's memory)."""
    q = shlex.quote(folder)
    return _parallel("", 'dd if="$f" of=/dev/null bs=1M iflag=direct status=none', f"for f in {q}/flush.*; do",
                     "done")


def _parallel(head: str, each: str, loop: str, end: str) -> str:
    """``each`` in the background for every turn of ``loop``; fails when any of them failed."""
    return (f"set -u\n{head}pids=''\n{loop} {each} & pids=\"$pids $!\"; {end}\n"
            "rc=0; for p in $pids; do wait $p || rc=1; done; exit $rc\n")


def flush(ex: Executor, folder: str, size: int, art: Path, name: str, *, laid_out: bool,
          line: Callable[[str], None]) -> None:
    """Read the set in ``folder`` (laid out first unless ``laid_out``), then drop the page cache."""
    timeout = 600 + size / SLOWEST_BYTES_PER_S
    if size:
        if not laid_out:
            line(f"{ex.name}: laying out a separate {human_bytes(file_mib(size) * FILES * MIB)} data set in "
                 f"{folder} to flush caches with (once per run)")
            _stream(ex, layout_script(folder, size), art, f"{name}-layout", timeout, "laying out the flush set")
        line(f"{ex.name}: flushing caches: reading {human_bytes(file_mib(size) * FILES * MIB)} of the separate "
             "data set (direct I/O, not measured), then dropping the page cache")
        _stream(ex, read_script(folder), art, name, timeout, "reading the flush set")
    else:
        line(f"{ex.name}: flushing caches: dropping the page cache")
    out = ex.run(["sh", "-c", DROP], privileged=True, timeout=600)
    if out.returncode != 0:
        detail = (out.stderr or out.stdout).strip().splitlines()
        raise ExecutionError(f"{ex.name}: dropping the page cache failed: {detail[-1] if detail else out.returncode}")


def _stream(ex: Executor, script: str, art: Path, name: str, timeout: float, what: str) -> None:
    """``script`` as a long command (Ctrl-C stops it), its text and output kept in ``art``."""
    art.mkdir(parents=True, exist_ok=True)
    (art / f"{name}.sh").write_text(script, encoding="utf-8")
    work = ex.workspace(art / name)
    ex.write_text(f"{work}/{name}.sh", script)
    rc = ex.stream(["sh", f"{work}/{name}.sh"], on_output=lambda _text: None, timeout=timeout,
                   stdout_path=art / f"{name}.stdout.txt", stderr_path=art / f"{name}.stderr.txt",
                   privileged=True, workdir=work)
    if rc != 0:
        err = art / f"{name}.stderr.txt"
        detail = err.read_text(errors="replace").strip().splitlines() if err.exists() else []
        raise ExecutionError(f"{ex.name}: {what} failed: {detail[-1] if detail else f'exit {rc}'}",
                             hint=f"see {art / name}.stderr.txt")
