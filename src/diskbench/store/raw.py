"""Raw engine outputs kept gzip-compressed beside the store (json+ shrinks about tenfold).

A run's output is compressed once its results are committed; an import keeps its copy of the
file compressed. ``read_raw`` reads a kept output whichever way it was kept (runs from before
compression have plain files).
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path


def compress(path: Path) -> Path:
    """Replace ``path`` by ``path.gz``; returns the new path (``path`` when it does not exist)."""
    if not path.exists():
        return path
    packed = path.with_name(path.name + ".gz")
    with open(path, "rb") as src, gzip.open(packed, "wb", compresslevel=1) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    path.unlink()
    return packed


def keep_copy(src: Path, folder: Path) -> Path:
    """A gzip-compressed copy of ``src`` in ``folder`` (``NAME.gz``)."""
    packed = folder / (src.name + ".gz")
    with open(src, "rb") as fh, gzip.open(packed, "wb", compresslevel=1) as dst:
        shutil.copyfileobj(fh, dst, 1 << 20)
    return packed


def read_raw(path: Path) -> bytes:
    """``path``, or its compressed form ``path.gz``."""
    if path.exists():
        return path.read_bytes()
    return gzip.decompress(path.with_name(path.name + ".gz").read_bytes())
