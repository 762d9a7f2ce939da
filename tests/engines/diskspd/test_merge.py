"""Merging DiskSpd runs (a segmented stop: job's segments) against what DiskSpd itself printed.

The oracle is each real output's own figures, read from the file as DiskSpd printed them (the
text's ``total:`` rows, ``actual test time`` and latency chart; the XML's counters and percentile
buckets), never a value diskbench computed: counts and time must be the sums of the printed ones,
minimum and maximum the least and largest printed, and each merged percentile must lie in the
bracket of the printed ones, two-sided, with the bracket's ends the printed extremes.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from diskbench.engines.diskspd.merge import merge_runs
from diskbench.engines.diskspd.parse import parse_diskspd
from diskbench.model import GroupResult

from .helpers import FIXTURES, chart_row, read, section_total

THREE = read(FIXTURES / "windows" / "text" / "ntjcbs_disk-test_README_v2.2_3runs.md")
RUNS = ["Command Line:" + part.split("\n## ")[0] for part in THREE.split("Command Line:")[1:]]  # three whole outputs
XML = read(FIXTURES / "windows" / "xml" / "virtualclient_Results_DiskSpd_Xml_v2.0.21a_L_D.xml")
LABELS = {"25th": "p25", "50th": "p50", "75th": "p75", "90th": "p90", "95th": "p95", "99th": "p99",
          "3-nines": "p99.9", "4-nines": "p99.99", "5-nines": "p99.999", "6-nines": "p99.9999",
          "7-nines": "p99.99999", "8-nines": "p99.999999", "9-nines": "p99.9999999"}
COLUMN = {"read": 0, "write": 1, "total": 2}
SECTION = {"read": "Read IO", "write": "Write IO", "total": "Total IO"}


def _parsed(text: str) -> list[GroupResult]:
    return parse_diskspd(text, source="segment").groups


def _printed_seconds(text: str) -> float:
    found = re.search(r"actual test time:\s*([\d.]+)s", text)
    assert found
    return float(found.group(1))


@pytest.mark.parametrize("runs", [RUNS[:2], RUNS], ids=["two", "three"])
def test_merged_text_runs_sum_what_diskspd_printed(runs: list[str]) -> None:
    assert len(RUNS) == 3 and all(r.count("actual test time:") == 1 for r in RUNS)
    (merged,) = merge_runs([_parsed(r) for r in runs])
    seconds = sum(_printed_seconds(r) for r in runs)
    for d in merged.directions:
        printed = [section_total(r, SECTION[d.direction]) for r in runs]
        assert d.ios == sum(int(p["I/Os"]) for p in printed)
        assert d.io_bytes == sum(int(p["bytes"]) for p in printed)
        assert d.runtime_s == pytest.approx(seconds, abs=1e-9)
        assert d.iops == pytest.approx(d.ios / seconds, rel=1e-12)
        assert d.bw_bytes_per_s == pytest.approx(d.io_bytes / seconds, rel=1e-12)
        assert d.clat is not None and d.clat.samples == d.ios
        # DiskSpd prints each run's mean to 1 µs: the merged mean is their I/O-weighted mean to that
        weighted = sum(p["AvgLat"] * p["I/Os"] for p in printed) / sum(p["I/Os"] for p in printed) * 1000
        assert abs(d.clat.mean - weighted) <= 0.5 + 1e-9
        col = COLUMN[d.direction]
        mins = [chart_row(r, "min")[col] for r in runs]
        maxes = [chart_row(r, "max")[col] for r in runs]
        assert d.clat.min == pytest.approx(min(m for m in mins if m is not None) * 1000)
        assert d.clat.max == pytest.approx(max(m for m in maxes if m is not None) * 1000)
        assert d.clat.bounds is not None and set(d.clat.bounds) == set(LABELS.values())
        for label, key in LABELS.items():
            values = [chart_row(r, label)[col] for r in runs]
            lo, hi = min(v for v in values if v is not None) * 1000, max(v for v in values if v is not None) * 1000
            assert d.clat.bounds[key] == (pytest.approx(lo), pytest.approx(hi))  # the bracket, both ends
            assert lo - 1e-9 <= d.clat.percentiles[key] <= hi + 1e-9  # the figure shown lies in it ...
            assert d.clat.percentiles[key] == pytest.approx(hi)  # ... at its upper end: never understated
        assert not d.clat.exact  # the runs disagree: the percentiles are bounds, marked ~
    assert any(n.startswith(f"{len(runs)} DiskSpd runs merged") and "upper bound" in n for n in merged.notes)


def _xml_counts(text: str) -> dict[str, int]:
    """ReadCount/WriteCount/ReadBytes/WriteBytes summed over every thread's targets, as printed."""
    root = ET.fromstring(text)
    out = {}
    for tag in ("ReadCount", "WriteCount", "ReadBytes", "WriteBytes"):
        out[tag] = sum(int(e.text or "0") for e in root.iterfind("./TimeSpan/Thread/Target/" + tag))
    return out


def _xml_percentiles(text: str, column: str) -> dict[str, float]:
    root = ET.fromstring(text)
    out = {}
    for bucket in root.iterfind("./TimeSpan/Latency/Bucket"):
        value = bucket.findtext(column)
        if value is not None:
            out[bucket.findtext("Percentile") or ""] = float(value) * 1000
    return out


def test_runs_that_agree_merge_exactly_and_the_xml_counts_add_up() -> None:
    """Two copies of one real XML: every count doubles, the time too, the per-second series runs on,
    and a bracket whose ends meet is the exact percentile (no ~)."""
    (merged,) = merge_runs([_parsed(XML), _parsed(XML)])
    counts = _xml_counts(XML)
    seconds = float(ET.fromstring(XML).findtext("./TimeSpan/TestTimeSeconds") or "nan")
    read_, write = merged.direction("read"), merged.direction("write")
    assert read_ is not None and write is not None
    assert (read_.ios, write.ios) == (2 * counts["ReadCount"], 2 * counts["WriteCount"])
    assert (read_.io_bytes, write.io_bytes) == (2 * counts["ReadBytes"], 2 * counts["WriteBytes"])
    assert read_.runtime_s == pytest.approx(2 * seconds) and read_.iops == pytest.approx(counts["ReadCount"] / seconds)
    printed = _xml_percentiles(XML, "ReadMilliseconds")
    assert read_.clat is not None and read_.clat.exact and len(printed) > 100
    assert read_.clat.min == pytest.approx(printed["0"]) and read_.clat.max == pytest.approx(printed["100"])
    assert read_.clat.percentiles["p99"] == pytest.approx(printed["99"])
    assert read_.series is not None and len(read_.series.iops) == 2 * 120


def test_a_text_run_and_an_xml_run_bracket_each_printed_percentile() -> None:
    """Two different real runs (text and XML): each merged percentile both runs printed lies within
    their two printed values, and only those both printed are merged."""
    (merged,) = merge_runs([_parsed(RUNS[2]), _parsed(XML)])
    xml_points = _xml_percentiles(XML, "ReadMilliseconds")
    d = merged.direction("read")
    assert d is not None and d.clat is not None and d.clat.bounds is not None
    for label, key in LABELS.items():
        if key[1:] not in xml_points:
            assert key not in d.clat.percentiles  # the XML stops at 7 nines: no bracket, no figure
            continue
        a, b = chart_row(RUNS[2], label)[0], xml_points[key[1:]]
        assert a is not None
        lo, hi = sorted((a * 1000, b))
        assert d.clat.bounds[key] == (pytest.approx(lo), pytest.approx(hi)) and d.clat.percentiles[key] == hi
    assert d.ios == int(section_total(RUNS[2], "Read IO")["I/Os"]) + _xml_counts(XML)["ReadCount"]
    assert not math.isnan(d.clat.mean)


def test_a_single_run_is_its_own_result() -> None:
    groups = _parsed(RUNS[0])
    assert merge_runs([groups]) is groups
