"""Big fio outputs (``--status-interval`` writes a whole JSON document every interval): only the
last document is the result, so only the end of the file is read and parsed.

The tail grows (1 MiB, 4 MiB, ... at most ``MAX_TAIL``) until it holds a complete fio document;
a tail is only decoded and parsed once it holds the start of one (``"fio version"``), so text
that is no fio output costs a byte search, not a parse. A file whose tail holds none, or whose
last document is cut off, is left to the whole-file reader (None), which then says exactly what
is wrong and where, or that the file is too big to read whole.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import ParseError
from .parse import extract_fio_document

SMALL = 4 << 20  # below this, the whole file is read as before
# One fio document is at most a few tens of MB (a json+ entry is 25-60 KB: 1,000 ungrouped jobs
# make ~60 MB); a tail this long that holds no complete one will not hold one when longer.
MAX_TAIL = 128 << 20
_MARKERS = (b'"fio version"', b'"client_stats"')


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
        while span < size and span <= MAX_TAIL:
            fh.seek(size - span, os.SEEK_SET)
            tail = fh.read(span)
            span *= 4
            if not any(marker in tail for marker in _MARKERS):
                continue  # no document starts here: nothing to parse yet
            start = tail.find(b"\n") + 1  # from a line start: documents begin at one
            text = tail[start:].decode("utf-8", errors="replace")
            try:
                extract_fio_document(text, str(path))
            except ParseError:
                continue
            return text
    return None
