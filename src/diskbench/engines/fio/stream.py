"""Big fio outputs (``--status-interval`` writes a whole JSON document every interval): only the
last document is the result, so only the end of the file is read and parsed.

The tail grows (1 MiB, 4 MiB, ...) until it holds a complete fio document; a file whose tail
holds none, or whose last document is cut off, is left to the whole-file parser (None), which
then says exactly what is wrong and where.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import ParseError
from .parse import extract_fio_document

SMALL = 4 << 20  # below this, the whole file is read as before


def last_document_text(path: Path) -> str | None:
    """Text from the start of the last complete fio document to the end; None: read it all."""
    size = path.stat().st_size
    if size <= SMALL:
        return None
    with open(path, "rb") as fh:
        head = fh.read(4)
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):
            return None  # UTF-16: the whole-file reader decodes it
        span = 1 << 20
        while span < size:
            fh.seek(size - span, os.SEEK_SET)
            tail = fh.read(span)
            start = tail.find(b"\n") + 1  # from a line start: documents begin at one
            text = tail[start:].decode("utf-8", errors="replace")
            try:
                extract_fio_document(text, str(path))
            except ParseError:
                span *= 4
                continue
            return text
    return None
