"""fio's status-interval stream read as it comes (the adaptive stop's input), on real fio output.

The oracle is fio's own final document: the intervals read live add up to no more than what it
reports for the measured run (nothing of the ramp leaks in), each interval's histogram holds its
I/Os, and the text cut anywhere gives the same intervals.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from diskbench.engines.fio import FioEngine
from diskbench.engines.fio.live import START

from ...conftest import needs_fio

JOB = """\
[global]
ioengine=psync
directory={dir}
size=4M
bs=4k
time_based=1
runtime=4s
ramp_time={ramp}s
clat_percentiles=1
[rr]
rw=randread
rate_iops=500
"""


def _stdout(tmp_path: Path, ramp: int) -> str:
    job = tmp_path / "job.fio"
    job.write_text(JOB.format(dir=tmp_path, ramp=ramp))
    live = FioEngine().live(ramp)
    out = subprocess.run(live.command(str(job)), capture_output=True, text=True, timeout=60, check=True)
    return out.stdout


def _final(text: str) -> dict[str, int]:
    doc = json.JSONDecoder(strict=False).raw_decode(text, text.rfind(START))[0]
    (job,) = doc["jobs"]
    return {"ios": job["read"]["total_ios"], "runtime_ms": job["job_runtime"]}


@needs_fio
@pytest.mark.parametrize("ramp", [0, 2])
def test_the_intervals_are_the_measured_runs_and_cut_anywhere_read_the_same(tmp_path: Path, ramp: int) -> None:
    text = _stdout(tmp_path, ramp)
    whole = FioEngine().live(ramp).feed(text)
    final = _final(text)
    ios = [iv["read"].ios for iv in whole]
    assert len(whole) >= 2
    # fio's own totals for the measured run, to the I/O and the millisecond: the ramp's I/O is not in the
    # intervals, and the first second of the run (or the first after the ramp's reset) is
    assert sum(ios) == final["ios"]
    assert sum(iv["read"].seconds for iv in whole) == pytest.approx(final["runtime_ms"] / 1000, abs=1e-9)
    assert sum(ios) / sum(iv["read"].seconds for iv in whole) == pytest.approx(500, rel=0.25)  # rate_iops
    for iv in whole:
        assert sum(iv["read"].hist.values()) == pytest.approx(iv["read"].ios, abs=30)  # same second, own counters
    for step in (97, 4096):
        live = FioEngine().live(ramp)
        pieces = [live.feed(text[i:i + step]) for i in range(0, len(text), step)]
        assert [iv for got in pieces for iv in got] == whole


def test_a_reset_is_no_interval() -> None:
    """fio's figures start again when the ramp ends: a counter that goes back gives no interval."""
    from diskbench.engines.fio.live import _Totals, interval

    before = _Totals(1724, 2, {"read": (3443, 3443 * 4096, {100: 3443})})
    after = _Totals(1002, 4, {"read": (8570, 8570 * 4096, {100: 8570})})
    assert interval(before, after) is None
    later = _Totals(2002, 5, {"read": (21363, 21363 * 4096, {100: 21363})})
    got = interval(after, later)
    assert got is not None and got["read"].ios == 12793 and got["read"].seconds == 1.0
