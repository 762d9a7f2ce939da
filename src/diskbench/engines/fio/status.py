"""fio's status lines (``Jobs: 1 (f=1): [w(1)][45.5%][w=1MiB/s][w=256 IOPS][eta 00m:06s]``) as progress."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...runner.progress import JobTracker

_PCT_RE = re.compile(r"\]\[(\d+(?:\.\d+)?)%\]")
_ETA_RE = re.compile(r"\[eta (?:(\d+)d:)?(?:(\d+)h:)?(\d+)m:(\d+)s\]")
_RATE_RE = re.compile(r"\]\[([rwt]=[^\]]*IOPS)\]")


class FioStatus:
    """Turns fio's ``Jobs: 1 (f=1): [w(1)][45.5%][w=1MiB/s][w=256 IOPS][eta 00m:06s]`` into updates."""

    def __init__(self, progress: JobTracker) -> None:
        self.progress = progress
        self.buffer = ""

    def feed(self, text: str) -> None:
        self.buffer += text
        *lines, self.buffer = re.split(r"[\r\n]", self.buffer)
        for line in lines:
            self._line(line)

    def _line(self, line: str) -> None:
        if not line.startswith("Jobs:"):
            return
        pct = _PCT_RE.search(line)
        eta = _ETA_RE.search(line)
        rate = _RATE_RE.search(line)
        eta_s = None
        if eta:
            d, h, m, s = (int(x) if x else 0 for x in eta.groups())
            eta_s = float(((d * 24 + h) * 60 + m) * 60 + s)
        self.progress.update(float(pct.group(1)) if pct else None, eta_s,
                             rate.group(1) if rate else "")
