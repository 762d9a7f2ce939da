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
from .helpers import FIXTURES, WINE_FILES, XML_FILES, elementtree, read

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


def _diskspd_figures(path: object) -> dict[str, dict[str, float]]:
    """What DiskSpd printed in one real 2.2 result, per direction: counts, bytes, time, p0/p99/p100 (µs)."""
    from pathlib import Path

    assert isinstance(path, Path)
    root = elementtree(read(path))
    seconds = float(root.findtext("./TimeSpan/TestTimeSeconds") or "nan")
    targets = root.findall("./TimeSpan/Thread/Target")
    points = {b.findtext("Percentile"): b for b in root.iterfind("./TimeSpan/Latency/Bucket")}
    out = {}
    for name, tag in (("read", "Read"), ("write", "Write")):
        out[name] = {"ios": sum(int(t.findtext(f"{tag}Count") or 0) for t in targets),
                     "bytes": sum(int(t.findtext(f"{tag}Bytes") or 0) for t in targets), "seconds": seconds,
                     **{f"p{p}": float(points[p].findtext(f"{tag}Milliseconds") or "nan") * 1000
                        for p in ("0", "99", "100")}}
    return out


def test_real_diskspd_2_2_segments_are_samples_and_merge_to_its_sums() -> None:
    """Three segments of one diskbench job (4k 70/30 random, 2 threads x QD4: the profiles diskbench
    renders, checked with -Rpxml, the first with a 1 s warm-up, the others -W0) as DiskSpd 2.2.0 wrote
    them (fixtures/diskspd-wine/README.md): each is an interval of the rule with DiskSpd's own counts,
    and their merge holds DiskSpd's sums and, for the p99, the bracket of the three printed p99s."""
    assert len(WINE_FILES) == 3
    printed = [_diskspd_figures(p) for p in WINE_FILES]
    runs = [parse_diskspd(read(p), source=str(p)).groups for p in WINE_FILES]
    for groups, figures in zip(runs, printed, strict=True):
        samples = DiskspdSegments().sample(groups)
        for name in ("read", "write"):
            s, f = samples[name], figures[name]
            assert (s.ios, s.io_bytes, s.seconds) == (f["ios"], f["bytes"], f["seconds"])
            assert sum(s.hist.values()) == s.ios
            assert hist_quantile(s.hist, 99) == pytest.approx(f["p99"] * 1000)  # ns: DiskSpd's own p99
    (merged,) = DiskspdSegments().merge(runs)
    seconds = sum(f["read"]["seconds"] for f in printed)
    for name in ("read", "write"):
        d = merged.direction(name)
        assert d is not None and d.clat is not None
        ios, nbytes = (sum(f[name][k] for f in printed) for k in ("ios", "bytes"))
        assert (d.ios, d.io_bytes, d.runtime_s) == (ios, nbytes, seconds)
        assert d.iops == pytest.approx(ios / seconds, rel=1e-12)
        p99s = [f[name]["p99"] for f in printed]
        assert d.clat.bounds["p99"] == (pytest.approx(min(p99s)), pytest.approx(max(p99s)))
        assert d.clat.percentiles["p99"] == pytest.approx(max(p99s))
        assert (d.clat.min, d.clat.max) == (pytest.approx(min(f[name]["p0"] for f in printed)),
                                            pytest.approx(max(f[name]["p100"] for f in printed)))
    assert merged.notes[-1].startswith("3 DiskSpd runs merged")


def test_diskspd_2_2_writes_an_unknown_power_scheme_unescaped() -> None:
    """Why the parser mends one attribute: the real file is not well-formed XML as DiskSpd wrote it."""
    text = read(WINE_FILES[0])
    assert '<PowerScheme Name="<unknown>" Guid=""/>' in text
    with pytest.raises(ET.ParseError):
        ET.fromstring(text)
    facts = parse_diskspd(text, source="f").facts
    assert facts["power_scheme"] == "<unknown>" and facts["version"] == "2.2.0"
