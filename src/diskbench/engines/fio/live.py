"""fio's status-interval stream read live, for the adaptive stop (a workload's ``stop:``).

The job runs with ``--status-interval=1`` and no ``--output``: every second fio writes a whole
json+ document to stdout (its figures so far, the latency bins with them), and its final one at
the end; a SIGINT (the executor's ``interrupt``) makes fio end the job, print
``fio: terminating on signal 2`` and then its final document for the time it ran, bins and all.
The documents are cumulative, so one interval is the difference of two in a row, summed over
every job of the file: I/Os, bytes, and the histogram's bins.

Documents before the job's first I/O (its files being laid out, a start delay) are no baseline: fio
prints them with a run time of its own (a layout's was 25,179,927 ms) and, after a layout, starts
its ``elapsed`` over.

fio resets its figures when ``ramp_time`` ends: what came before is the ramp and is dropped. Until
then it records no latencies (io_u.c: a completion is accounted only once the ramp is over), so a
document in which some job did I/O but has no latency bins is the ramp's: neither an interval nor
a baseline (the first document after it is measured from zero). The clock cannot tell: a job
whose files were laid out first, or that waited for a ``startdelay``, starts its ramp seconds after
fio's ``elapsed`` does (a 2 GiB layout and a 1 s ramp: its first I/O document, at elapsed 1 of a
clock started over, was read as the reset's, and 209 I/Os of the ramp became the measured run's
first interval, without their latencies).
The first document of the measured run (the job's first without a ramp, or the first with every
job's latencies) is an interval from zero: fio's final figures count its I/Os, so the stop rule must
see them (taken as a baseline, the first second after a ramp that ended on burst credits, 573 I/Os
where the rest ran 330, and a QD1 job's slow first second were in fio's figures but in none of the
rule's: it stopped at 10 s on the steady rest, and fio read 4.9% more IOPS and a 9.4% higher p99 than
the fixed run).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...attribution.stop_rule import Sample
from ..base import Live

START = '{\n  "fio version"'
DIRECTIONS = ("read", "write", "trim")


@dataclass
class _Totals:
    """A document's cumulative figures: run time (ms) and, per direction, I/Os, bytes and bins."""

    runtime_ms: int
    dirs: dict[str, tuple[int, int, dict[int, int]]] = field(default_factory=dict)
    timed: bool = True  # every job that did I/O has latency bins (its ramp, if any, is over)


def totals(doc: dict[str, Any]) -> _Totals:
    """One status document's figures, every job summed (the longest job's run time)."""
    jobs = doc.get("jobs") or []
    out = _Totals(max((int(j.get("job_runtime", 0)) for j in jobs), default=0))
    for job in jobs:
        did_io = binned = False
        for name in DIRECTIONS:
            d = job.get(name) or {}
            ios, nbytes = int(d.get("total_ios", 0)), int(d.get("io_bytes", 0))
            bins = {int(k): int(v) for k, v in ((d.get("clat_ns") or {}).get("bins") or {}).items()}
            did_io, binned = did_io or ios > 0, binned or bool(bins)
            if not ios and not bins:
                continue
            had_ios, had_bytes, had_bins = out.dirs.get(name, (0, 0, {}))
            for k, v in bins.items():
                had_bins[k] = had_bins.get(k, 0) + v
            out.dirs[name] = (had_ios + ios, had_bytes + nbytes, had_bins)
        if did_io and not binned:
            out.timed = False
    return out


def interval(before: _Totals, after: _Totals) -> dict[str, Sample] | None:
    """The interval between two documents; None when they are no interval (same time, or a reset).

    fio does not take a document's counters at one instant (I/Os, bytes and bins of a second may
    differ by a few I/Os, more on a loaded host), so a figure's own counter is used for it: I/Os
    for IOPS, bytes for MB/s, the bins for the percentile."""
    seconds = (after.runtime_ms - before.runtime_ms) / 1000
    if seconds <= 0:
        return None
    out = {}
    for name, (ios, nbytes, bins) in after.dirs.items():
        ios0, bytes0, bins0 = before.dirs.get(name, (0, 0, {}))
        if ios < ios0 or nbytes < bytes0 or any(bins.get(k, 0) < v for k, v in bins0.items()):
            return None  # a counter went back: fio reset its figures (the ramp ended) in between
        hist = {k: v - bins0.get(k, 0) for k, v in bins.items() if v > bins0.get(k, 0)}
        out[name] = Sample(seconds, ios - ios0, nbytes - bytes0, hist)
    return out


class FioLive(Live):
    """``fio --status-interval=1`` on stdout, read document by document."""

    def __init__(self, ramp_s: float, args: list[str]) -> None:
        self.ramp_s, self.args = ramp_s, args  # args: the engine's own (json+ output, ...)
        self.buffer = ""
        self.last: _Totals | None = None
        self.decoder = json.JSONDecoder(strict=False)  # fio does not escape controls

    def command(self, jobfile: str) -> list[str]:
        return ["fio", *self.args, "--status-interval=1", jobfile]

    def feed(self, text: str) -> list[dict[str, Sample]]:
        self.buffer += text
        out: list[dict[str, Sample]] = []
        while True:
            start = self.buffer.find(START)
            if start < 0:
                self.buffer = self.buffer[-len(START):]  # a start may be cut between two pieces
                return out
            try:
                doc, end = self.decoder.raw_decode(self.buffer, start)
            except json.JSONDecodeError:
                self.buffer = self.buffer[start:]  # the document is not whole yet
                return out
            self.buffer = self.buffer[end:]
            got = self._document(doc)
            if got:
                out.append(got)

    def _document(self, doc: dict[str, Any]) -> dict[str, Sample] | None:
        now = totals(doc)
        if not now.dirs:
            return None  # before the job's first I/O: no baseline (its run time is not the run's)
        if self.ramp_s > 0 and not now.timed:
            self.last = None  # the ramp's (or a job's first instant after it): no baseline either
            return None
        before, self.last = self.last, now
        if before is None or now.runtime_ms < before.runtime_ms:
            # the measured run's first document, or the first since a reset: what it holds was
            # measured since fio's figures started, and its final figures count it
            return interval(_Totals(0), now)
        return interval(before, now)
