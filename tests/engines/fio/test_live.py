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


def _stdout(tmp_path: Path, ramp: int, delay: int = 0) -> str:
    job = tmp_path / "job.fio"
    job.write_text(JOB.format(dir=tmp_path, ramp=ramp) + f"startdelay={delay}\n")
    live = FioEngine().live(ramp)
    out = subprocess.run(live.command(str(job)), capture_output=True, text=True, timeout=60, check=True)
    return out.stdout


def _final(text: str) -> dict[str, int]:
    doc = json.JSONDecoder(strict=False).raw_decode(text, text.rfind(START))[0]
    (job,) = doc["jobs"]
    return {"ios": job["read"]["total_ios"], "runtime_ms": job["job_runtime"]}


@needs_fio
@pytest.mark.parametrize(("ramp", "delay"), [(0, 0), (2, 0), (1, 2)])
def test_the_intervals_are_the_measured_runs_and_cut_anywhere_read_the_same(tmp_path: Path, ramp: int,
                                                                            delay: int) -> None:
    """``delay``: a ``startdelay`` (fio prints documents without I/O first, and the ramp starts late)."""
    text = _stdout(tmp_path, ramp, delay)
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

    before = _Totals(1724, {"read": (3443, 3443 * 4096, {100: 3443})})
    after = _Totals(1002, {"read": (8570, 8570 * 4096, {100: 8570})})
    assert interval(before, after) is None
    later = _Totals(2002, {"read": (21363, 21363 * 4096, {100: 21363})})
    got = interval(after, later)
    assert got is not None and got["read"].ios == 12793 and got["read"].seconds == 1.0


# --- the reader's arithmetic on hand-made status documents (fio's json+ layout, a few keys each) ---------

def _doc(runtime_ms: int | None, elapsed: int | None, *jobs: dict[str, object]) -> dict[str, object]:
    """A status document: each job's ``job_runtime``/``elapsed`` (None: the key left out) and directions."""
    out = []
    for job in jobs:
        entry = {k: v for k, v in (("job_runtime", runtime_ms), ("elapsed", elapsed)) if v is not None}
        out.append({**entry, **job})
    return {"jobs": out}


def _dir(ios: int, nbytes: int | None, bins: dict[int, int] | None = None) -> dict[str, object]:
    d: dict[str, object] = {"total_ios": ios}
    if nbytes is not None:
        d["io_bytes"] = nbytes
    if bins is not None:
        d["clat_ns"] = {"bins": {str(k): v for k, v in bins.items()}}
    return d


def test_totals_sum_every_job_and_skip_directions_without_io() -> None:
    from diskbench.engines.fio.live import totals

    doc = _doc(1500, 3,
               {"read": _dir(0, 0), "write": _dir(10, 40960, {100: 7, 200: 3})},  # an idle read first
               {"read": _dir(5, 20480, {100: 5}), "write": _dir(2, 8192, {100: 2})})
    got = totals(doc)
    assert got.runtime_ms == 1500
    assert got.dirs == {"write": (12, 49152, {100: 9, 200: 3}), "read": (5, 20480, {100: 5})}
    assert totals(_doc(0, 0, {"read": _dir(0, 0, {})})).dirs == {}  # no I/O and no bins: nothing
    assert totals(_doc(0, 0, {"read": _dir(3, 0)})).dirs == {"read": (3, 0, {})}  # I/O before any bin
    assert totals(_doc(0, 0, {"read": _dir(0, 0, {100: 1})})).dirs == {"read": (0, 0, {100: 1})}


def test_totals_read_missing_keys_as_nothing() -> None:
    """fio's documents always carry these keys; a job without them (or no job) adds nothing, not 1."""
    from diskbench.engines.fio.live import totals

    got = totals(_doc(None, None, {"read": _dir(4, None, {100: 4})}))
    assert (got.runtime_ms, got.dirs) == (0, {"read": (4, 0, {100: 4})})
    mixed = totals({"jobs": [{"job_runtime": 900, "elapsed": 2, "read": {"total_ios": 2}}, {"jobname": "x"}]})
    assert (mixed.runtime_ms, mixed.dirs) == (900, {"read": (2, 0, {})})
    assert totals({"jobs": []}).runtime_ms == 0 and totals({}).runtime_ms == 0


def test_an_interval_is_each_counters_own_difference() -> None:
    from diskbench.engines.fio.live import _Totals, interval

    before = _Totals(1000, {"read": (100, 409600, {100: 60, 200: 40})})
    after = _Totals(2500, {"read": (160, 655360, {100: 60, 200: 70, 300: 1}),
                           "write": (9, 36864, {400: 9})})  # a direction that starts in between
    got = interval(before, after)
    assert got is not None
    read, write = got["read"], got["write"]
    assert (read.seconds, read.ios, read.io_bytes, read.hist) == (1.5, 60, 245760, {200: 30, 300: 1})
    assert (write.seconds, write.ios, write.io_bytes, write.hist) == (1.5, 9, 36864, {400: 9})
    idle = interval(after, _Totals(3500, dict(after.dirs)))  # a second without any I/O: all zero
    assert idle is not None and (idle["read"].ios, idle["read"].io_bytes, idle["read"].hist) == (0, 0, {})


@pytest.mark.parametrize("went_back", ["ios", "bytes", "bin", "bin gone"])
def test_any_counter_going_back_is_a_reset(went_back: str) -> None:
    from diskbench.engines.fio.live import _Totals, interval

    before = _Totals(1000, {"read": (100, 409600, {100: 99, 200: 1})})
    ios, nbytes, bins = 150, 614400, {100: 149, 200: 1}
    if went_back == "ios":
        ios = 99
    elif went_back == "bytes":
        nbytes = 409599
    elif went_back == "bin":
        bins = {100: 98, 200: 52}
    else:  # the bin that held one I/O is gone from the later document
        bins = {100: 150}
    assert interval(before, _Totals(2000, {"read": (ios, nbytes, bins)})) is None


def test_no_time_between_two_documents_is_no_interval() -> None:
    from diskbench.engines.fio.live import _Totals, interval

    same = _Totals(1000, {"read": (100, 409600, {100: 100})})
    assert interval(same, _Totals(1000, {"read": (120, 491520, {100: 120})})) is None


def _text(doc: dict[str, object]) -> str:
    """A document as fio prints it: "fio version" first, two-space indents."""
    text = json.dumps({"fio version": "fio-3.33", **doc}, indent=2) + "\n"
    assert text.startswith(START)
    return text


def _feed(ramp_s: float, docs: list[dict[str, object]]) -> list[dict[str, object]]:
    live = FioEngine().live(ramp_s)
    return [dict(iv) for iv in live.feed("".join(_text(d) for d in docs))]


def test_the_ramps_documents_are_those_without_latencies() -> None:
    """fio records no latency until the ramp is over: a document with I/O but no bins is a baseline;
    the first with bins is measured from the reset (an interval from zero), the next one from it."""
    docs = [_doc(1000, 1, {"read": _dir(50, 204800)}),  # the ramp: I/Os and bytes, no bins
            _doc(1000, 2, {"read": _dir(20, 81920, {100: 20})}),  # reset at 1 s: 20 I/Os since
            _doc(2000, 3, {"read": _dir(45, 184320, {100: 45})})]
    got = _feed(1, docs)
    assert [(iv["read"].ios, iv["read"].seconds) for iv in got] == [(20, 1.0), (25, 1.0)]
    # however late the reset comes (a job's I/O can hold its loop past ramp_time), the ramp's
    # documents are baselines, and their I/Os never reach an interval
    late = [docs[0], _doc(2000, 2, {"read": _dir(100, 409600)}), _doc(3000, 5, {"read": _dir(150, 614400)}),
            _doc(1000, 6, {"read": _dir(20, 81920, {100: 20})})]
    assert [(iv["read"].ios, iv["read"].seconds) for iv in _feed(1, late)] == [(20, 1.0)]
    # a ramp's single I/O is the ramp's too (a QD1 job at a slow disk's pace)
    one = [_doc(1000, 1, {"read": _dir(1, 4096)}), _doc(1000, 2, {"read": _dir(20, 81920, {100: 20})})]
    assert [(iv["read"].ios, iv["read"].seconds) for iv in _feed(1, one)] == [(20, 1.0)]
    # no ramp: fio's figures start with the job, bins or not
    assert [(iv["read"].ios, iv["read"].seconds) for iv in _feed(0, late[:2])] == [(50, 1.0), (50, 1.0)]


def test_a_ramp_ends_when_every_jobs_latencies_are_recorded() -> None:
    """numjobs copies reset each at its own ramp's end: while one has not, the document is the ramp's
    (its I/Os would be counted in an interval that fio's figures do not hold)."""
    timed, ramp = {"read": _dir(30, 122880, {100: 30})}, {"read": _dir(400, 1638400)}
    docs = [_doc(1000, 2, {"read": _dir(300, 1228800)}, ramp),
            _doc(1010, 3, timed, ramp),  # the first job's reset came, the second's not yet
            _doc(1020, 3, timed, {"read": _dir(10, 40960, {100: 10})}),
            _doc(2020, 4, {"read": _dir(60, 245760, {100: 60})}, {"read": _dir(40, 163840, {100: 40})})]
    got = _feed(1, docs)
    assert [(iv["read"].ios, iv["read"].seconds) for iv in _feed(1, [docs[0], docs[2]])] == [(40, 1.02)]
    # a job that has done nothing yet (a third copy not started) holds no ramp back
    idle = {"read": _dir(0, 0)}
    assert [(iv["read"].ios, iv["read"].seconds) for iv in _feed(1, [docs[0], _doc(1020, 3, timed, idle)])] == [
        (30, 1.02)]
    assert [(iv["read"].ios, iv["read"].seconds, sum(iv["read"].hist.values())) for iv in got] == [
        (40, 1.02, 40), (60, 1.0, 60)]


def test_a_post_reset_document_without_completions_yet_is_a_baseline() -> None:
    """Just after the reset a job may have issued I/Os and completed none (no bins): a baseline; the
    next document, measured from zero, holds its I/Os."""
    docs = [_doc(900, 1, {"read": _dir(45, 184320)}), _doc(20, 2, {"read": _dir(3, 12288)}),
            _doc(1020, 3, {"read": _dir(50, 204800, {100: 49})})]
    assert [(iv["read"].ios, iv["read"].seconds) for iv in _feed(1, docs)] == [(50, 1.02)]


@pytest.mark.parametrize("ramp", [0, 1])
def test_documents_before_the_first_io_are_no_baseline(ramp: int) -> None:
    """While fio lays out a job's files it prints documents without I/O, with a run time of its own
    (fio 3.33: 25,179,927 ms) and an ``elapsed`` that starts over when the job does."""
    layout = [_doc(25179927 + 1000 * i, i, {"read": _dir(0, 0)}) for i in range(1, 7)]
    ramp_docs = [_doc(415, 1, {"read": _dir(209, 856064)})] if ramp else []
    run = [_doc(999, 3, {"read": _dir(501, 2052096, {100: 501})}),
           _doc(1999, 4, {"read": _dir(1001, 4100096, {100: 1001})})]
    got = _feed(ramp, layout + ramp_docs + run)
    assert [(iv["read"].ios, iv["read"].seconds) for iv in got] == [(501, 0.999), (500, 1.0)]


def test_documents_fed_a_few_characters_at_a_time_read_the_same() -> None:
    """A piece can end inside a document's first characters, with nothing before them to drop."""
    docs = [_doc(1000, 1, {"read": _dir(50, 204800, {100: 50})}), _doc(2000, 2, {"read": _dir(90, 368640, {100: 90})})]
    text = "".join(_text(d) for d in docs)
    live = FioEngine().live(0)
    got = [iv for i in range(0, len(text), 5) for iv in live.feed(text[i:i + 5])]
    assert [(iv["read"].ios, iv["read"].seconds) for iv in got] == [(50, 1.0), (40, 1.0)]


def test_a_document_that_repeats_the_last_is_no_interval() -> None:
    doc = _doc(2000, 3, {"read": _dir(45, 184320, {100: 45})})
    assert [iv["read"].ios for iv in _feed(0, [doc, doc])] == [45]


def test_control_characters_in_a_job_name_are_read() -> None:
    """fio writes a job name as it is, a tab or a newline unescaped: the documents still count."""
    doc = _doc(1000, 1, {"jobname": "a\tb", "read": _dir(7, 28672, {100: 7})})
    live = FioEngine().live(0)
    text = _text(doc).replace("\\t", "\t")
    assert "a\tb" in text
    assert [iv["read"].ios for iv in live.feed(text)] == [7]
