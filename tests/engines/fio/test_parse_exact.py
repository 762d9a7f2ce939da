"""The fio parser's every message and every merged figure, exactly.

test_parse.py and test_hardening.py check that real outputs parse to fio's numbers and that bad
input is refused; these pin what a user reads: the exact message of each refusal (where, what,
why), the edges of the rate checks (stat.c's arithmetic on the counts fio printed beside them),
and the figures diskbench computes itself when it merges jobs, worked out by hand from the
numbers fio printed in the fixtures (tests/fixtures/fio).
"""

from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from diskbench.engines.fio.parse import (
    KIB_NOTE,
    NO_IOS_NOTE,
    declared_config,
    extract_fio_document,
    parse_fio_document,
    parse_fio_output,
    parse_fio_text,
    stopped_by_signal,
)
from diskbench.errors import ParseError
from diskbench.model import GroupResult

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
HINT = "this is not what fio writes; was the file edited or cut?"


def fixture(name: str) -> dict[str, Any]:
    text = (FIXTURES / name).read_text()
    return json.loads(text[text.index("{"):text.rindex("}") + 1])  # type: ignore[no-any-return]


def job(name: str = "j", **read: Any) -> dict[str, Any]:
    """One fio 3.x job: 1000 reads of 4 KiB in 1000 ms (iops = 1000 x 1000 / 1000, bw_bytes =
    1000 x 4096000 / 1000), 990 at 2008 ns and 10 at 5024 ns (two bucket midpoints: 2008 = 1024 +
    15.5 x 32, 5024 = 4096 + 14.5 x 64), no writes."""
    r: dict[str, Any] = {
        "io_bytes": 4096000, "io_kbytes": 4000, "bw_bytes": 4096000, "bw": 4000, "iops": 1000.0, "runtime": 1000,
        "total_ios": 1000,
        "clat_ns": {"min": 1000, "max": 5024, "mean": 2000.0, "stddev": 100.0, "N": 1000,
                    "percentile": {"50.000000": 2008, "99.900000": 5024}, "bins": {"2008": 990, "5024": 10}}}
    r.update(read)
    w = {"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
         "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}
    return {"jobname": name, "groupid": 0, "error": 0, "usr_cpu": 1.5, "sys_cpu": 2.5,
            "job options": {"rw": "randread", "bs": "4k"}, "read": r, "write": w}


def doc(*jobs: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"fio version": "fio-3.33", "global options": {"iodepth": "1"}, "jobs": list(jobs or [job()]), **top}


def parsed(d: dict[str, Any], **kw: Any) -> list[GroupResult]:
    return parse_fio_output(json.dumps(d), source="x.json", **kw)


def refused(d: dict[str, Any] | str) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse_fio_output(d if isinstance(d, str) else json.dumps(d), source="x.json")
    return caught.value


def test_a_clean_job() -> None:
    (g,) = parsed(doc())
    assert (g.name, g.job_names, g.jobs, g.engine, g.engine_version, g.errors, g.notes) == (
        "j", ["j"], 1, "fio", "3.33", [], [])
    assert g.cpu_pct == 4.0 and g.hosts == []
    (read,) = g.directions
    assert (read.direction, read.iops, read.bw_bytes_per_s, read.ios, read.io_bytes, read.runtime_s) == (
        "read", 1000.0, 4096000.0, 1000, 4096000, 1.0)
    assert read.clat is not None
    assert (read.clat.min, read.clat.mean, read.clat.max, read.clat.stdev, read.clat.samples, read.clat.exact) == (
        1.0, 2.0, 5.024, 0.1, 1000, True)
    assert read.clat.percentiles == {"p50": 2.008, "p99.9": 5.024}
    assert read.clat.bins == {2008: 990, 5024: 10}
    assert g.declared == {"workload": {"rw": "randread", "bs": "4k", "iodepth": "1", "numjobs": "1"},
                          "target": {"path": ""}}


def _set(d: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    d = copy.deepcopy(d)
    node: Any = d
    keys = path.split("/")
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    if value is _DELETE:
        del node[keys[-1]]
    else:
        node[int(keys[-1]) if isinstance(node, list) else keys[-1]] = value
    return d


_DELETE = object()
J = "jobs/0/read"


@pytest.mark.parametrize(("path", "value", "message"), [
    (f"{J}/iops", "x", "job 'j' read.iops is str 'x', not a number"),
    (f"{J}/iops", True, "job 'j' read.iops is bool True, not a number"),
    (f"{J}/iops", -1, "job 'j' read.iops is negative (-1)"),
    (f"{J}/runtime", 1000.5, "job 'j' read.runtime is 1000.5, not a whole number"),
    (f"{J}/total_ios", 2**65, "job 'j' read.total_ios is larger than any counter fio keeps (3.69e+19)"),
    (f"{J}/io_bytes", "x", "job 'j' read.io_bytes is str 'x', not a number"),
    (f"{J}/clat_ns", [1], "job 'j' read.clat_ns is list, not an object"),
    (f"{J}/clat_ns/max", "x", "job 'j' read.clat_ns.max is str 'x', not a number"),
    (f"{J}/clat_ns/N", 1.5, "job 'j' read.clat_ns.N is 1.5, not a whole number"),
    (f"{J}/clat_ns/min", "x", "job 'j' read.clat_ns.min is str 'x', not a number"),
    (f"{J}/clat_ns/mean", "x", "job 'j' read.clat_ns.mean is str 'x', not a number"),
    (f"{J}/clat_ns/stddev", "x", "job 'j' read.clat_ns.stddev is str 'x', not a number"),
    (f"{J}/clat_ns/percentile", {"x": 2008}, "job 'j' read.clat_ns.percentile has the key 'x', not a percentile"),
    (f"{J}/clat_ns/percentile", {"100.5": 2008},
     "job 'j' read.clat_ns.percentile has the key '100.5', outside 0..100"),
    (f"{J}/clat_ns/percentile", {"50.0": 2000},
     "job 'j' read.clat_ns.percentile['50.0'] is 2000, which is not one of fio's latency bucket values"),
    (f"{J}/clat_ns/percentile", {"50.0": 2.5}, "job 'j' read.clat_ns.percentile.50.0 is 2.5, not a whole number"),
    # 5088 = 4096 + 15.5 x 64: the bucket after max's (5024)
    (f"{J}/clat_ns/percentile", {"50.0": 5088}, "job 'j' read.clat_ns.percentile['50.0'] is 5088, above the "
     "bucket of the largest latency fio measured (max, whose bucket is 5024)"),
    (f"{J}/clat_ns/percentile", {"50.0": 2**64}, "job 'j' read.clat_ns.percentile['50.0'] is 1.84e+19, beyond "
     "any latency fio's 64-bit counters hold"),
    (f"{J}/clat_ns/percentile", [1], "job 'j' read.clat_ns.percentile is list, not an object"),
    (f"{J}/clat_ns/bins", {"x1": 1000}, "job 'j' read.clat_ns.bins has the key 'x1', not a latency in the "
     "engine's unit"),
    (f"{J}/clat_ns/bins", {"2008": -1}, "job 'j' read.clat_ns.bins.2008 is negative (-1)"),
    (f"{J}/clat_ns/bins", {"2008": 1.5}, "job 'j' read.clat_ns.bins.2008 is 1.5, not a whole number"),
    (f"{J}/clat_ns/bins", {"2000": 1000},
     "job 'j' read.clat_ns.bins key is 2000, which is not one of fio's latency bucket values"),
    (f"{J}/clat_ns/bins", {"2008": 989, "5024": 10}, "job 'j' read.clat_ns.bins add up to 999 samples, but N is 1000"),
    (f"{J}/clat_ns/bins", [1], "job 'j' read.clat_ns.bins is list, not an object"),
    (f"{J}/runtime", 0, "job 'j' read has 1000 I/Os, 4096000 bytes and 1000 IOPS in a runtime of 0 ms; fio "
     "measures every I/O in its runtime"),
    (f"{J}/iops", 1001.0, "job 'j' read.iops is 1001.000000, but fio's 1000 I/Os in 1000 ms are 1000.000000 IOPS"),
    (f"{J}/bw_bytes", 4096002, "job 'j' read.bw_bytes is 4096002, but fio's 4096000 bytes in 1000 ms are "
     "4096000.0 B/s"),
    (f"{J}/bw", 3998, "job 'j' read.bw is 3998, but fio's 4096000 bytes in 1000 ms are 4000.0 KiB/s"),
    ("jobs/0/error", "x", "job 'j'.error is str 'x', not a number"),
    ("jobs/0/groupid", 1.5, "job 'j'.groupid is 1.5, not a whole number"),
    ("jobs/0/usr_cpu", "x", "job 'j'.usr_cpu is str 'x', not a number"),
    ("jobs/0/sys_cpu", -1, "job 'j'.sys_cpu is negative (-1)"),
    ("jobs/0/read", "x", "job 'j'.read is str, not an object"),
    ("jobs/0", 5, "jobs[0] is int, not an object"),
    ("jobs", {"j": 1}, "'jobs' is dict, not a list"),
])
def test_what_is_refused_and_how_it_is_said(path: str, value: Any, message: str) -> None:
    err = refused(_set(doc(), path, value))
    assert (err.message, err.hint) == (f"x.json: {message}", HINT)


def test_refusals_of_the_rates_without_their_fields() -> None:
    both = _set(_set(doc(), f"{J}/bw_bytes", _DELETE), f"{J}/bw", _DELETE)
    assert refused(both).message == "x.json: job 'j' read has neither bw_bytes nor bw for its 4096000 bytes"
    fio2 = _set(_set(doc(), f"{J}/clat_ns", _DELETE), f"{J}/clat", [1])
    assert refused(fio2).message == "x.json: job 'j' read.clat is list, not an object"
    no_name = _set(_set(doc(), "jobs/0/jobname", _DELETE), f"{J}/iops", "x")
    assert refused(no_name).message == "x.json: job '?' read.iops is str 'x', not a number"
    unnamed_cpu = _set(_set(doc(), "jobs/0/jobname", _DELETE), "jobs/0/usr_cpu", "x")
    assert refused(unnamed_cpu).message == "x.json: job None.usr_cpu is str 'x', not a number"
    no_group = _set(_set(doc(), "jobs/0/jobname", _DELETE), "jobs/0/groupid", 0.5)
    assert refused(no_group).message == "x.json: job '?'.groupid is 0.5, not a whole number"
    err = _set(_set(doc(), "jobs/0/jobname", _DELETE), "jobs/0/error", 0.5)
    assert refused(err).message == "x.json: job '?'.error is 0.5, not a whole number"


@pytest.mark.parametrize(("counts", "accepted"), [
    # runtime 0 ms: nothing may have been measured in it, by any of the four counts
    ({"runtime": 0, "total_ios": 0, "io_bytes": 0, "io_kbytes": 0, "iops": 0.0, "bw_bytes": 0, "bw": 5}, False),
    ({"runtime": 0, "total_ios": 0, "io_bytes": 0, "io_kbytes": 0, "iops": 1.0, "bw_bytes": 0, "bw": 0}, False),
    ({"runtime": 0, "total_ios": 0, "io_bytes": 4096, "io_kbytes": 4, "iops": 0.0, "bw_bytes": 0, "bw": 0}, False),
    ({"runtime": 0, "total_ios": 1, "io_bytes": 0, "io_kbytes": 0, "iops": 0.0, "bw_bytes": 0, "bw": 0}, False),
    ({"runtime": 0, "total_ios": 0, "io_bytes": 0, "io_kbytes": 0, "iops": 0.0, "bw_bytes": 0, "bw": 0}, True),
])
def test_a_runtime_of_zero(counts: dict[str, Any], accepted: bool) -> None:
    d = copy.deepcopy(doc())
    d["jobs"][0]["read"].update(counts)
    d["jobs"][0]["write"] = job()["read"]  # something measured, so that an empty read is not the only job
    if accepted:
        parsed(d)
    else:
        assert "in a runtime of 0 ms; fio measures every I/O in its runtime" in refused(d).message


# iops = 1000 x total_ios / runtime, printed with 6 decimals: within 1e-6 + 1e-9 x iops of it
EXACT = 1000.0 * 1999 / 2000  # 999.5
SLACK = 1e-6 + 1e-9 * EXACT


@pytest.mark.parametrize(("iops", "accepted"), [
    (EXACT - SLACK, True), (EXACT - SLACK - 1e-7, False), (EXACT + SLACK, True), (EXACT + SLACK + 1e-7, False),
    (999, True),  # a whole number: fio before 2.1.14 printed iops rounded down (999.5 -> 999)
    (998, False),  # less than one below
    (999.0, False),  # a float is printed to 6 decimals: 999.000000 is not 999.5
    (1000, False),  # rounded down, never up
])
def test_the_iops_check_at_its_edges(iops: float, accepted: bool) -> None:
    d = _set(doc(job(total_ios=1999, runtime=2000, io_bytes=1999 * 4096, io_kbytes=1999 * 4, bw_bytes=4093952,
                     bw=3998, iops=iops, clat_ns={"min": 1000, "max": 2008, "mean": 2000.0, "stddev": 1.0,
                                                  "N": 1999})), "global options", {})
    if accepted:
        assert parsed(d)[0].directions[0].iops == iops
    else:
        assert refused(d).message.startswith("x.json: job 'j' read.iops is ")


# bw_bytes = 1000 x io_bytes // runtime (rounded down): at most 1 B/s (plus 1e-9 relative) below
# the exact 1000 x 4097 / 1000 = 4097, and never above it; bw (KiB/s) likewise at most 1 KiB/s below
@pytest.mark.parametrize(("key", "value", "accepted"), [
    ("bw_bytes", 4097, True), ("bw_bytes", 4096, True), ("bw_bytes", 4095.99, False),
    ("bw_bytes", 4097 * (1 + 1e-9), True), ("bw_bytes", 4097.01, False),
    ("bw", 4097 / 1024, True), ("bw", 4097 / 1024 - 1, True), ("bw", 4097 / 1024 - 1.01, False),
    ("bw", 4097 / 1024 + 0.01, False),
])
def test_the_bandwidth_check_at_its_edges(key: str, value: float, accepted: bool) -> None:
    r = job(total_ios=1, io_bytes=4097, io_kbytes=4, bw_bytes=4097, bw=4, iops=1.0,
            clat_ns={"min": 1000, "max": 2008, "mean": 2000.0, "stddev": 1.0, "N": 1})
    del r["read"]["bw" if key == "bw_bytes" else "bw_bytes"]
    r["read"][key] = value
    if accepted:
        parsed(doc(r))
    else:
        assert refused(doc(r)).message.startswith(f"x.json: job 'j' read.{key} is ")


def test_fio_2_20_printed_kib_for_io_bytes() -> None:
    """fio 2.20's io_bytes is KiB (io_bytes >> 10, no io_kbytes): 518824 KiB are up to 1023 bytes
    more than 518824 x 1024, so bw_bytes may be up to 1000 x 1023 / runtime above 1000 x that / runtime."""
    (g,) = parse_fio_output((FIXTURES / "derived-fio-2.20-io_bytes-in-kib.json").read_text())
    assert g.notes == [KIB_NOTE]
    assert g.directions[0].io_bytes == 518824 * 1024
    d = fixture("derived-fio-2.20-io_bytes-in-kib.json")
    read = d["jobs"][0]["read"]
    high = 1000.0 * (read["io_bytes"] * 1024 + 1023) / read["runtime"]
    read["bw_bytes"] = math.floor(high)  # within the KiB rounding: accepted
    parse_fio_output(json.dumps(d))
    read["bw_bytes"] = math.floor(high) + 1
    assert "read.bw_bytes is" in refused(d).message


def test_fio_2_1_11_wrote_no_io_counts() -> None:
    (g,) = parse_fio_output((FIXTURES / "derived-fio-2.1.11-no-total_ios.json").read_text())
    assert g.notes == [KIB_NOTE, NO_IOS_NOTE]
    read = g.directions[0]
    assert (read.ios, read.iops, read.clat and read.clat.samples) == (0, 43215.0, 0)  # fio's own rate, kept
    # an unknown count is not "no I/O": no ramp_time warning
    assert read.warnings == []
    assert read.clat is not None and read.clat.mean == 368.719396


def test_jobs_without_io_counts_merge_by_runtime() -> None:
    """No total_ios (fio before 2.1.14): each job's I/Os are its IOPS x its runtime; the group's
    IOPS are their sum over the longest runtime, bandwidth all bytes over it (rounded down)."""
    a, b = job("a"), job("b")
    for j, (iops, runtime) in zip((a, b), ((1000, 1000), (500, 2000)), strict=True):
        r = j["read"]
        del r["total_ios"], r["clat_ns"]["N"], r["clat_ns"]["bins"], r["io_kbytes"]
        r.update(iops=iops, runtime=runtime, io_bytes=iops * runtime * 4 // 1000, bw_bytes=4096 * iops, bw=4 * iops)
    (g,) = parsed(doc(a, b))
    read = g.directions[0]
    # (1000 x 1000 + 500 x 2000) / 2000 = 1000; bytes 4000 + 4000 KiB as printed x 1024 = 8192000, / 2 s
    assert (read.iops, read.ios, read.io_bytes, read.bw_bytes_per_s, read.runtime_s) == (
        1000.0, 0, 8192000, 4096000.0, 2.0)
    assert read.clat is None
    assert g.notes == [KIB_NOTE, NO_IOS_NOTE, "a+b read: the latency of 2 jobs cannot be merged: fio before 2.1.14 "
                       "wrote no I/O counts to weight them by (fio merges them itself with group_reporting)"]
    assert g.jobs == 2 and g.job_names == ["a", "b"]


def test_two_jobs_merged_by_fios_group_rule() -> None:
    """multi-job-numjobs2-two-groups.json: two reporting groups of two jobs each (no group_reporting,
    no bins). Each group: all I/Os over the longest runtime, bytes likewise (rounded down), min of
    mins, max of maxes, sample-weighted mean, pooled sample stdev; percentiles sample-weighted (not
    exact, said so)."""
    seq, rnd = parse_fio_output((FIXTURES / "multi-job-numjobs2-two-groups.json").read_text())
    d = fixture("multi-job-numjobs2-two-groups.json")
    for g, (direction, jobs) in zip((seq, rnd), (("read", d["jobs"][:2]), ("write", d["jobs"][2:])), strict=True):
        parts = [j[direction] for j in jobs]
        ios = sum(p["total_ios"] for p in parts)
        nbytes = sum(p["io_bytes"] for p in parts)
        runtime = max(p["runtime"] for p in parts)
        (got,) = g.directions
        assert (got.ios, got.io_bytes, got.runtime_s) == (ios, nbytes, runtime / 1000)
        assert got.iops == 1000 * ios / runtime and got.bw_bytes_per_s == (1000 * nbytes) // runtime
        lat = [p["clat_ns"] for p in parts]
        n = sum(x["N"] for x in lat)
        mean = sum(x["N"] * x["mean"] for x in lat) / n
        var = sum((x["N"] - 1) * x["stddev"] ** 2 + x["N"] * (x["mean"] - mean) ** 2 for x in lat) / (n - 1)
        assert got.clat is not None and got.clat.samples == n
        assert got.clat.mean == pytest.approx(mean / 1000, abs=1e-6)
        assert got.clat.stdev == pytest.approx(math.sqrt(var) / 1000, abs=1e-6)
        assert (got.clat.min, got.clat.max) == (min(x["min"] for x in lat) / 1000, max(x["max"] for x in lat) / 1000)
        assert got.clat.exact is False and got.clat.bins is None
        for key in ("1.000000", "50.000000", "99.900000"):
            weighted = sum(x["N"] * x["percentile"][key] for x in lat) / n / 1000
            assert got.clat.percentiles[f"p{float(key):g}"] == pytest.approx(weighted, rel=1e-9)
        assert g.notes == [f"{g.name} {direction}: percentiles of 2 series are sample-weighted means, not merged "
                           "exactly (no latency bins: use --output-format=json+)"]
        cpu = [j["usr_cpu"] + j["sys_cpu"] for j in jobs]
        assert g.cpu_pct == pytest.approx(sum(cpu) / 2) and g.jobs == 2
    assert seq.cpu_pct == pytest.approx((0.333111 + 3.064624 + 0.5 + 3.066667) / 2)  # fio's printed figures


def test_merged_bins_give_exact_percentiles_and_pooled_spread() -> None:
    """Two jobs with bins: the group's bins are their sum; two jobs of 1000 samples, means 2.0 and
    3.0 µs, stdev 0.1 each: mean 2.5, pooled sample variance (999 x 0.01 x 2 + 1000 x 0.25 x 2) / 1999."""
    a = job("a")
    b = job("b")
    b["read"]["clat_ns"]["mean"] = 3000.0
    (g,) = parsed(doc(a, b))
    clat = g.directions[0].clat
    assert clat is not None and clat.exact and clat.samples == 2000
    assert clat.bins == {2008: 1980, 5024: 20}
    assert clat.percentiles == {"p50": 2.008, "p99.9": 5.024}  # 1998 < 1998.0000000000000001 -> 5024 at p99.9
    assert clat.mean == 2.5 and clat.stdev == pytest.approx(math.sqrt((999 * 0.01 * 2 + 1000 * 0.25 * 2) / 1999))
    assert clat.bin_ns == 1.0
    one = job("one")
    one["read"]["clat_ns"].update(N=1, mean=2000.0, stddev=0.0, bins={"2008": 1}, max=2008, percentile={"50.0": 2008})
    one["read"].update(total_ios=1, io_bytes=4096, io_kbytes=4, bw_bytes=4096, bw=4, iops=1.0)
    two = copy.deepcopy(one)
    two["jobname"] = "two"
    (g,) = parsed(doc(one, two))
    assert g.directions[0].clat is not None and g.directions[0].clat.stdev == pytest.approx(0.0)


def test_percentiles_without_bins() -> None:
    bare = job()
    del bare["read"]["clat_ns"]["bins"]
    (g,) = parsed(doc(bare))
    clat = g.directions[0].clat
    assert clat is not None and clat.percentiles == {"p50": 2.008, "p99.9": 5.024} and clat.bins is None
    none = copy.deepcopy(bare)
    del none["read"]["clat_ns"]["percentile"]
    (g,) = parsed(doc(none))
    assert g.notes == ["j read: fio reported no latency percentiles (clat_percentiles=0?); min, mean and max only"]
    assert g.directions[0].clat is not None and g.directions[0].clat.percentiles == {}
    (g,) = parsed(doc(none, _set(none, "jobname", "k")))
    assert g.notes == ["j+k read: fio reported no latency percentiles (clat_percentiles=0?); min, mean and max only"]


def test_one_job_with_unknown_counts_keeps_fios_latency() -> None:
    fio2 = job()
    r = fio2["read"]
    del r["total_ios"], r["clat_ns"]["N"], r["io_kbytes"]
    r["io_bytes"] = 4000
    (g,) = parsed(doc(fio2))
    clat = g.directions[0].clat
    assert clat is not None
    assert (clat.samples, clat.exact, clat.mean, clat.stdev, clat.min, clat.max) == (0, True, 2.0, 0.1, 1.0, 5.024)
    assert clat.percentiles == {"p50": 2.008, "p99.9": 5.024} and clat.bins == {2008: 990, 5024: 10}
    assert clat.bin_ns == 1.0
    del r["clat_ns"]["percentile"], r["clat_ns"]["bins"]
    (g,) = parsed(doc(fio2))
    assert g.notes[-1] == "j read: fio reported no latency percentiles (clat_percentiles=0?); min, mean and max only"
    assert g.directions[0].clat is not None and g.directions[0].clat.bins is None


def test_a_failed_job_and_the_cpu_of_all_jobs() -> None:
    """job-error-rc1: job 'bad' failed with error 22 (EINVAL); 'ok' ran. CPU is the mean per job:
    (10.7 + 45.4 + 0.0 + 0.0) / 2 = 28.05."""
    (g,) = parse_fio_output((FIXTURES / "job-error-rc1.stdout.json").read_text())
    assert g.errors == ["job 'bad' failed: error 22 (Invalid argument)"]
    assert g.job_names == ["ok", "bad"] and g.cpu_pct == pytest.approx(28.05) and g.name == "ok+bad"
    odd = doc(_set(job(), "error", 5000), _set(job("k"), "error", 0))
    assert parsed(odd)[0].errors == ["job 'j' failed: error 5000 (unknown)"]
    assert parsed(doc(_set(job(), "error", 4095)))[0].errors == [f"job 'j' failed: error 4095 ({os.strerror(4095)})"]
    assert parsed(doc(_set(job(), "error", 4096)))[0].errors == ["job 'j' failed: error 4096 (unknown)"]
    assert parsed(doc(_set(job(), "error", 1)))[0].errors == ["job 'j' failed: error 1 (Operation not permitted)"]
    unnamed = _set(_set(job(), "error", 1), "jobname", _DELETE)
    assert parsed(doc(unnamed))[0].errors == ["job '?' failed: error 1 (Operation not permitted)"]
    assert parsed(doc(_set(job(), "usr_cpu", _DELETE)))[0].cpu_pct is None


def test_the_ramp_time_warning() -> None:
    (g,) = parse_fio_output((FIXTURES / "ramp-time-eats-the-whole-size-bytes-without-ios.json").read_text())
    (write,) = g.directions
    assert write.warnings == [
        "fio counted 66,584,576 bytes but no I/O in a 10 ms runtime: the job did its whole size during ramp_time, "
        "so nothing was measured (set time_based: true, or a larger size)"]
    assert parsed(doc())[0].directions[0].warnings == []


def test_a_run_stopped_by_a_signal_or_short_of_its_runtime() -> None:
    text = (FIXTURES / "sigint-output-file-time-based-rc128.json").read_text()
    doc_, (g,) = parse_fio_text(text)
    assert g.errors == ["fio was stopped by signal 2 (SIGINT) ('fio: terminating on signal 2'): these are the "
                        "figures of 2.389 s of its declared 10 s runtime, a partial run"]
    (g,) = parse_fio_output((FIXTURES / "derived-sigint-time-based-no-signal-line.json").read_text())
    assert g.errors == ["fio measured 2.389 s of its declared 10 s runtime (time_based): it was stopped early "
                        "(interrupted?), and these are the figures of a partial run"]
    # a signal without a name, and no declared runtime
    (g,) = parse_fio_document(doc(), stopped_by=99)
    assert g.errors == ["fio was stopped by signal 99 ('fio: terminating on signal 99'): these are the figures of "
                        "1 s, a partial run"]


def _timed(runtime: str, ran_ms: int, **opts: str) -> list[str]:
    r = job(runtime=ran_ms, total_ios=ran_ms, io_bytes=4096 * ran_ms, io_kbytes=4 * ran_ms, bw_bytes=4096000,
            bw=4000, iops=1000.0, clat_ns={"min": 1000, "max": 2008, "mean": 2000.0, "stddev": 1.0, "N": ran_ms})
    d = doc(r, **{"global options": {"runtime": runtime, "time_based": "1", **opts}})
    return parsed(d)[0].errors


def test_short_of_the_declared_runtime_at_the_edge() -> None:
    """A time_based job that measured less than 90% of its runtime was stopped: 9 s of 10 is not, 8.999 s is."""
    assert _timed("10", 9000) == []
    assert _timed("10s", 8999) == ["fio measured 8.999 s of its declared 10 s runtime (time_based): it was stopped "
                                   "early (interrupted?), and these are the figures of a partial run"]
    assert _timed("2m", 107999)[0].startswith("fio measured 107.999 s of its declared 120 s runtime")
    assert _timed("1h", 3_239_999)[0].startswith("fio measured 3240 s of its declared 3600 s runtime")
    assert _timed("20000ms", 17999)[0].startswith("fio measured 17.999 s of its declared 20 s runtime")
    assert _timed(" 10 SEC ", 8999)[0].startswith("fio measured 8.999 s of its declared 10 s runtime")
    assert _timed("10", 8999, time_based="on")[0].startswith("fio measured")
    assert _timed("10", 8999, time_based="yes")[0].startswith("fio measured")
    assert _timed("10", 8999, time_based="true")[0].startswith("fio measured")
    assert _timed("10", 8999, time_based="0") == []  # not time_based: a size-bound job ends when it is done
    assert _timed("10", 8999, exitall="1") == []  # fio may end it early itself
    assert _timed("10", 8999, steadystate="iops:0.1") == []
    assert _timed("10", 8999, number_ios="100") == []
    assert _timed("forever", 8999) == [] and _timed("10 fortnights", 8999) == [] and _timed("1" * 16, 1) == []
    steady = doc(job(runtime=10), **{"global options": {"runtime": "100", "time_based": "1"}})
    steady["jobs"][0]["steadystate"] = {}
    steady["jobs"][0]["read"].update(total_ios=10, io_bytes=40960, io_kbytes=40, iops=1000.0)
    steady["jobs"][0]["read"]["clat_ns"].update(N=10, bins={"2008": 10}, max=2008, percentile={"50.0": 2008})
    assert parsed(steady)[0].errors == []


def test_the_signal_line() -> None:
    assert stopped_by_signal("x\nfio: terminating on signal 2\n") == 2
    assert stopped_by_signal("  fio: terminating on signal 15  ") == 15
    assert stopped_by_signal("fio: terminating on signal 130") == 130
    assert stopped_by_signal("fio: terminating on signal 1234") is None  # no such signal: not fio's line
    assert stopped_by_signal("fio: terminating on signal two") is None
    assert stopped_by_signal("nothing here") is None
    text = "fio: terminating on signal 2\n" + json.dumps(doc())
    (g,) = parse_fio_output(text)
    assert g.errors[0].startswith("fio was stopped by signal 2 (SIGINT)")


def test_finding_the_document() -> None:
    d = json.dumps(doc())
    assert extract_fio_document("note: a\nnote: b\n" + d + "\nRun status group 0 (all jobs):\n")["jobs"]
    two = json.dumps(doc(job("first"))) + "\n" + d
    assert extract_fio_document(two)["jobs"][0]["jobname"] == "j"  # the last of a status-interval run
    # a damaged document before a complete one is an interim dump cut short: the complete one stands
    assert extract_fio_document(d[:60] + "\n" + d)["jobs"][0]["jobname"] == "j"
    assert extract_fio_document('{"not": "fio"}\n' + d)["jobs"][0]["jobname"] == "j"


def _no_doc(text: str) -> ParseError:
    with pytest.raises(ParseError) as caught:
        extract_fio_document(text, "x.json")
    return caught.value


def test_what_is_not_a_document() -> None:
    d = json.dumps(doc(), indent=1)
    cut = _no_doc("one\ntwo\n" + d[:200])
    assert (cut.message, cut.hint) == ("x.json: the fio JSON document starting at line 3 is cut off or damaged",
                                       "the run did not finish writing its output; run it again")
    late = _no_doc(d + "\n" + d[:200])
    line = d.count("\n") + 2
    assert (late.message, late.hint) == (
        f"x.json: the last fio JSON document (line {line}) is cut off; the 1 complete one(s) before it are interim "
        "status dumps, not the result", "the run did not finish writing its output; run it again")
    # the "fio version" key must be near the start (within 400 characters) for a damaged object to be fio's
    padded = '{"padding": "' + "x" * 390 + '", "fio version": "fio-3.33", "jobs": [{'
    assert _no_doc(padded).message == "x.json: no fio JSON document found"
    near = '{"padding": "' + "x" * 370 + '", "fio version": "fio-3.33", "jobs": [{'
    assert _no_doc(near).message == "x.json: the fio JSON document starting at line 1 is cut off or damaged"
    none = _no_doc("fio: pid=12, err=2/file:filesetup.c:1, func=open, error=No such file\nfio: second\n")
    assert (none.message, none.hint) == (
        "x.json: no fio JSON document found (fio: pid=12, err=2/file:filesetup.c:1, func=open, error=No such file)",
        "run fio with --output-format=json or json+")
    assert _no_doc(" fio: indented\n").message == "x.json: no fio JSON document found"
    spd = _no_doc("Command Line: diskspd -b4K -d10 x.dat\n")
    assert (spd.message, spd.hint) == ("x.json: this is DiskSpd output, not fio's",
                                       "diskbench's fio parser cannot read it")
    assert _no_doc("x" * 20001 + "<Results>").message == "x.json: no fio JSON document found"  # past the sniffed head
    assert _no_doc("x" * 19991 + "<Results>").message == "x.json: this is DiskSpd output, not fio's"
    err = _no_doc('{"fio version": "3", "jobs": [], "x": NaN}')
    assert err.message == "x.json: the JSON contains NaN, which fio never writes"
    controls = json.dumps(doc()).replace('"j"', '"j\x01k"', 1)  # fio does not escape control characters
    assert extract_fio_document(controls)["jobs"][0]["jobname"] == "j\x01k"
    deep = _no_doc("[" * 100_000 + "]" * 100_000 + '{"fio version"' + "[" * 100_000)
    assert deep.message in ("x.json: the JSON is nested too deeply to be fio output",
                            "x.json: no fio JSON document found")


def test_groups_names_and_counts() -> None:
    a, b = job("a"), _set(job("b"), "groupid", 1)
    assert [g.name for g in parsed(doc(a, b))] == ["a", "b"]
    assert [g.name for g in parsed(doc(a, _set(job("a"), "groupid", 1)))] == ["a@group0", "a@group1"]
    assert [g.name for g in parsed(doc(a, _set(job("a"), "groupid", 1)), per_job=True)] == ["a@group0", "a@group1"]
    assert [g.name for g in parsed(doc(a, job("b")), per_job=True)] == ["a", "b"]
    merged = parse_fio_document(doc(a, b), merge_all=True)
    assert [(g.name, g.jobs) for g in merged] == [("a+b", 2)]
    assert [g.name for g in parsed(doc(_set(job(), "jobname", _DELETE)))] == [""]
    unnamed = parse_fio_document(doc(_set(job(), "jobname", _DELETE), _set(job("x"), "jobname", _DELETE)),
                                 per_job=True)
    assert [g.name for g in unnamed] == [""]
    assert parse_fio_document({"jobs": [job()]})[0].engine_version == "unknown"


@pytest.mark.parametrize(("numjobs", "entries", "jobs"), [
    ("4", 1, 4), (" 4 ", 1, 4), ("1", 1, 1), ("x", 1, 1), ("0", 1, 1), (str(2**31), 1, 1),
    (str(2**31 - 1), 1, 2**31 - 1),
    ("4", 2, 2),  # two entries: each is its own job, whatever numjobs says
])
def test_how_many_jobs_an_entry_stands_for(numjobs: str, entries: int, jobs: int) -> None:
    js = [_set(job(f"j{i}"), "job options", {"numjobs": numjobs}) for i in range(entries)]
    assert parse_fio_document(doc(*js), merge_all=True)[0].jobs == jobs


def test_jobs_per_host_in_client_server_mode() -> None:
    (g,) = parse_fio_output((FIXTURES / "client-server-2servers-group-reporting.jsonplus.stdout.txt").read_text())
    assert g.hosts == ["127.0.0.1", "127.0.0.2"]
    one = _set(_set(job("a"), "hostname", "h1"), "job options", {"numjobs": "3"})
    two = _set(_set(job("a"), "hostname", "h2"), "job options", {"numjobs": "3"})
    assert parse_fio_document(doc(one, two))[0].jobs == 6  # each server's entry is its group of 3


def test_nothing_to_report() -> None:
    assert refused({"fio version": "fio-3.33", "jobs": [{"jobname": "All clients"}]}).message == (
        "x.json: fio output has no job results")
    empty = job()
    empty["read"] = job()["write"]
    assert refused(doc(empty)).message == "x.json: fio output has no job that did any I/O"
    (failed,) = parsed(doc(_set(empty, "error", 5)))  # a job that failed before any I/O is still reported
    assert (failed.errors, failed.directions) == (["job 'j' failed: error 5 (Input/output error)"], [])


def test_mixed_directions_and_the_total() -> None:
    """randrw-70-30-8k.json: read and write of one job run at once: the total's rates are their sums."""
    (g,) = parse_fio_output((FIXTURES / "randrw-70-30-8k.json").read_text())
    read, write, total = g.directions
    d = fixture("randrw-70-30-8k.json")["jobs"][0]
    assert (read.iops, write.iops) == (d["read"]["iops"], d["write"]["iops"])
    assert total.iops == pytest.approx(d["read"]["iops"] + d["write"]["iops"])
    assert total.bw_bytes_per_s == d["read"]["bw_bytes"] + d["write"]["bw_bytes"]
    assert total.ios == d["read"]["total_ios"] + d["write"]["total_ios"]
    assert total.runtime_s == max(d["read"]["runtime"], d["write"]["runtime"]) / 1000
    assert g.notes == ["randrw-70-30-8k total: percentiles of 2 series are sample-weighted means, not merged exactly "
                       "(no latency bins: use --output-format=json+)"]
    (mixed,) = parse_fio_output((FIXTURES / "randrw-70-30-unified-rw-reporting-both.json").read_text())
    m = fixture("randrw-70-30-unified-rw-reporting-both.json")["jobs"][0]["mixed"]
    assert mixed.directions[-1].direction == "total" and mixed.directions[-1].iops == m["iops"]


def test_declared_configuration() -> None:
    """What the job file asked for, from fio's own echo: the job's options over the global ones."""
    full = {"rw": "randwrite", "bs": "8k", "iodepth": "32", "numjobs": "4", "filename": "/dev/nvme0n1"}
    assert declared_config({"global options": full}, [{}]) == {
        "workload": {"rw": "randwrite", "bs": "8k", "iodepth": "32", "numjobs": "4"},
        "target": {"raw": "/dev/nvme0n1"}}
    assert declared_config({"global options": {"readwrite": "randrw", "directory": "/mnt/x"}}, [{}]) == {
        "workload": {"rw": "randrw", "bs": "4k", "iodepth": "1", "numjobs": "1"}, "target": {"path": "/mnt/x"}}
    assert declared_config({"global options": {"size": "1G"}}, [{"job options": {"filename": "f"}}]) == {
        "workload": {"rw": "read", "bs": "4k", "iodepth": "1", "numjobs": "1"}, "target": {"path": "f"}}
    own = [{"job options": {"bs": "64k", "filename": "/data/f"}}]
    assert declared_config({"global options": full}, own)["workload"]["bs"] == "64k"
    assert declared_config({"global options": full}, own)["target"] == {"path": "/data/f"}
    assert declared_config({"global options": {"rw": "read", "filename": "/dev/x", "directory": "/d"}}, [{}])[
        "target"] == {"raw": "/dev/x"}
    assert declared_config({}, [{}]) == {} and declared_config({"global options": "x"}, [{"job options": 3}]) == {}
    assert declared_config({"global options": full}, []) != {}
    two = [{"job options": {"bs": "4k"}}, {"job options": {"bs": "8k"}}]
    assert declared_config({"global options": full}, two) == {}  # different jobs: no one configuration
    same = [{"job options": {"bs": "4k"}}, {"job options": {"bs": "4k"}}]
    assert declared_config({"global options": full}, same)["workload"]["bs"] == "4k"
    assert declared_config({"global options": {"iodepth": 8}}, [{}])["workload"]["iodepth"] == "8"
