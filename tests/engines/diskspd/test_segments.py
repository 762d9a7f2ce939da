"""DiskSpd's part of a segmented stop: job: each segment's profile, and each segment as the rule's interval."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from diskbench.attribution.confidence import hist_quantile
from diskbench.engines.base import Place
from diskbench.engines.diskspd.engine import DiskspdEngine
from diskbench.engines.diskspd.parse import parse_diskspd
from diskbench.engines.diskspd.segments import DiskspdSegments, point_histogram

from ...conftest import plan_of
from .helpers import FIXTURES, XML_FILES, read

WINDOWS_MACHINE = """machines:
  - {name: win1, region: westeurope, size: Standard_D8ds_v4, os: windows,
     data_disks: [{type: Premium_LRS, size_gb: 1024, caching: None}], targets: {data: {lun: 0}}}
"""
XML = read(FIXTURES / "windows" / "xml" / "virtualclient_Results_DiskSpd_Xml_v2.0.21a_L_D.xml")


def _printed(column: str) -> dict[float, float]:
    """Every percentile DiskSpd printed in the XML, µs."""
    out = {}
    for bucket in ET.fromstring(XML).iterfind("./TimeSpan/Latency/Bucket"):
        value = bucket.findtext(column)
        if value is not None:
            out[float(bucket.findtext("Percentile") or "nan")] = float(value) * 1000
    return out


@pytest.mark.parametrize(("direction", "column"), [("read", "ReadMilliseconds"), ("write", "WriteMilliseconds"),
                                                   ("total", "TotalMilliseconds")])
def test_the_point_histogram_gives_back_every_percentile_diskspd_printed(direction: str, column: str) -> None:
    (group,) = parse_diskspd(XML, source="x").groups
    d = group.direction(direction)
    assert d is not None
    hist = point_histogram(d.clat, d.ios)
    assert sum(hist.values()) == d.ios
    printed = _printed(column)
    assert len(printed) > 100
    for p, value in printed.items():
        if 0 < p < 100:  # by the nearest-rank rule, as DiskSpd reads its own histogram
            assert hist_quantile(hist, p) == pytest.approx(value * 1000, abs=0.5), p


def test_a_segment_is_one_interval_of_each_direction() -> None:
    (group,) = parse_diskspd(XML, source="x").groups
    got = DiskspdSegments().sample([group])
    assert set(got) == {"read", "write"}  # the rule judges each direction; the total is their sum
    seconds = float(ET.fromstring(XML).findtext("./TimeSpan/TestTimeSeconds") or "nan")
    for name, sample in got.items():
        d = group.direction(name)
        assert d is not None and (sample.seconds, sample.ios, sample.io_bytes) == (seconds, d.ios, d.io_bytes)
    assert hist_quantile(got["read"].hist, 99) == _printed("ReadMilliseconds")[99.0] * 1000
    assert point_histogram(None, 10) == {} and DiskspdSegments().sample([]) == {}


def test_only_the_first_segment_warms_up() -> None:
    (unit,) = plan_of("name: p\ndefaults: {runtime: 60s, ramp_time: 7s, stop: {min: 10s}}\n"
                      "workloads: [{name: w, rw: randread}]\n" + WINDOWS_MACHINE).units
    assert unit.engine == "diskspd"
    engine, parts = DiskspdEngine(), DiskspdSegments()
    spans = []
    for first in (True, False):
        w = parts.workload(unit.workload, 5, first=first)
        assert w.stop == unit.workload.stop and w.rw == unit.workload.rw
        span = ET.fromstring(engine.render(unit, [Place(w, "t", "F:/d")], purpose="measure")).find(
            "TimeSpans/TimeSpan")
        assert span is not None
        spans.append((span.findtext("Duration"), span.findtext("Warmup")))
    assert spans == [("5", "7"), ("5", "0")]


def test_every_real_xml_run_is_a_sample() -> None:
    for path in XML_FILES:
        groups = parse_diskspd(read(path), source=str(path)).groups
        assert all(s.ios > 0 and s.seconds > 0 for s in DiskspdSegments().sample(groups).values())
