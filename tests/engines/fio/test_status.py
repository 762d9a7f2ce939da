"""fio's status lines become progress updates."""

from __future__ import annotations

from diskbench.engines.fio.status import FioStatus
from diskbench.ui import UI, JobProgress


class Recorder(JobProgress):
    def __init__(self) -> None:
        super().__init__(UI(plain=True, quiet=True), "t", 1.0)
        self.seen: list[tuple[float | None, float | None, str]] = []

    def update(self, percent: float | None, eta_s: float | None, rate: str) -> None:
        self.seen.append((percent, eta_s, rate))


def test_fio_status_lines_become_progress() -> None:
    rec = Recorder()
    status = FioStatus(rec)
    status.feed("Jobs: 1 (f=1)\rJobs: 1 (f=1): [r(1)][60.0%][r=136MiB/s][r=34.9k IOPS][eta 00m:0")
    status.feed("2s]\rJobs: 1 (f=1): [w(1)][100.0%][w=1MiB/s][w=256 IOPS][eta 01h:02m:03s]\n")
    assert rec.seen == [(None, None, ""), (60.0, 2.0, "r=34.9k IOPS"), (100.0, 3723.0, "w=256 IOPS")]
