"""DiskSpd -Rxml results: golden values computed here with ElementTree, and the fixture README's figures."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from diskbench.engines.diskspd import decode_output, parse_diskspd, sniff
from diskbench.errors import ParseError

from .helpers import FIXTURES, WINE_FILES, XML_FILES, Counters, default_percentiles, elementtree, read, xml_2_2

VC_XML = FIXTURES / "windows" / "xml" / "virtualclient_Results_DiskSpd_Xml_v2.0.21a_L_D.xml"
PKB_XML = FIXTURES / "windows" / "xml" / "perfkitbenchmarker_diskspd_result_v2.0.21a_noL.xml"


def _sums(root: ET.Element) -> dict[str, tuple[int, int]]:
    targets = root.findall("./TimeSpan/Thread/Target")
    r = (sum(int(t.findtext("ReadCount") or 0) for t in targets),
         sum(int(t.findtext("ReadBytes") or 0) for t in targets))
    w = (sum(int(t.findtext("WriteCount") or 0) for t in targets),
         sum(int(t.findtext("WriteBytes") or 0) for t in targets))
    return {"read": r, "write": w, "total": (r[0] + w[0], r[1] + w[1])}


@pytest.mark.parametrize("path", XML_FILES, ids=lambda p: p.name)
def test_counts_and_rates_match_elementtree_sums(path: Path) -> None:
    root = elementtree(read(path))
    seconds = float(root.findtext("./TimeSpan/TestTimeSeconds") or "nan")
    sums = _sums(root)
    (group,) = parse_diskspd(read(path), source=str(path)).groups
    expected = [d for d in ("read", "write") if sums[d][0]]
    if len(expected) == 2:
        expected.append("total")
    assert [d.direction for d in group.directions] == expected
    for d in group.directions:
        ios, nbytes = sums[d.direction]
        assert (d.ios, d.io_bytes, d.runtime_s) == (ios, nbytes, seconds)
        assert d.iops == pytest.approx(ios / seconds, rel=1e-12)
        assert d.bw_bytes_per_s == pytest.approx(nbytes / seconds, rel=1e-12)
    assert group.engine == "diskspd" and group.engine_version == root.findtext("System/Tool/Version")
    assert group.hosts == [root.findtext("System/ComputerName")]


@pytest.mark.parametrize("path", XML_FILES, ids=lambda p: p.name)
def test_percentiles_are_diskspds_own(path: Path) -> None:
    root = elementtree(read(path))
    (group,) = parse_diskspd(read(path), source=str(path)).groups
    lat = root.find("./TimeSpan/Latency")
    if lat is None:
        assert all(d.clat is None for d in group.directions)
        assert "latency was not recorded (DiskSpd ran without -L)" in group.notes
        return
    for d in group.directions:
        tag = {"read": "Read", "write": "Write", "total": "Total"}[d.direction]
        points = {b.findtext("Percentile"): float(b.findtext(f"{tag}Milliseconds") or "nan")
                  for b in lat.findall("Bucket")}
        assert d.clat is not None and d.clat.bins is None and d.clat.exact
        assert d.clat.min == pytest.approx(points.pop("0") * 1000)
        assert d.clat.max == pytest.approx(points.pop("100") * 1000)
        assert len(d.clat.percentiles) == len(points) == 106
        for label, ms in points.items():
            assert d.clat.percentiles[f"p{label}"] == pytest.approx(ms * 1000), label
        assert d.clat.samples == d.ios
    assert any("cannot be merged exactly" in n for n in group.notes)


def test_virtualclient_xml_matches_the_readme_figures() -> None:
    (group,) = parse_diskspd(read(VC_XML), source="vc.xml").groups
    r, w, t = (group.direction(x) for x in ("read", "write", "total"))
    assert r and w and t and r.clat and w.clat and t.clat
    assert (round(r.iops, 2), round(w.iops, 2), round(t.iops, 2)) == (309.66, 131.26, 440.92)
    assert (round(r.bw_bytes_per_s / 2**20, 2), round(w.bw_bytes_per_s / 2**20, 2)) == (1.21, 0.51)
    assert (r.clat.mean, w.clat.mean, t.clat.mean) == (2477.0, 1767.0, 2266.0)
    assert [x.clat.percentiles["p50"] for x in (r, w, t)] == [2250.0, 1657.0, 2128.0]
    assert [x.clat.percentiles["p99"] for x in (r, w, t)] == [21897.0, 4184.0, 19270.0]
    assert [x.clat.percentiles["p99.9"] for x in (r, w, t)] == [23166.0, 6649.0, 23046.0]
    assert [x.clat.max for x in (r, w, t)] == [33846.0, 10958.0, 33846.0]
    assert "p99.9999999" in t.clat.percentiles and "p100" not in t.clat.percentiles


def test_virtualclient_xml_series_are_the_iops_buckets() -> None:
    root = ET.fromstring(read(VC_XML))
    buckets = root.findall("./TimeSpan/Iops/Bucket")
    (group,) = parse_diskspd(read(VC_XML), source="vc.xml").groups
    for d in group.directions:
        assert d.series is not None and d.series.interval_s == 1.0 and d.series.source == "diskspd -D"
        attr = {"read": "Read", "write": "Write", "total": "Total"}[d.direction]
        assert d.series.iops == [float(b.get(attr) or 0) for b in buckets]
        assert d.series.bw_bytes_per_s == [v * 4096 for v in d.series.iops]
    read_series = group.direction("read")
    assert read_series and read_series.series and read_series.series.lat_mean_us
    assert read_series.series.lat_mean_us[:2] == [2378.0, 2994.0]
    assert len(read_series.series.iops) == 120
    # the mean of the per-second rates is the run's rate, give or take the last partial second
    assert sum(read_series.series.iops) / 120 == pytest.approx(read_series.iops, rel=0.01)


def test_pkb_xml_readme_figures_and_missing_series_note() -> None:
    (group,) = parse_diskspd(read(PKB_XML), source="pkb.xml").groups
    (r,) = group.directions
    assert (round(r.iops, 2), round(r.bw_bytes_per_s / 2**20, 2), r.series) == (3030.31, 189.39, None)
    assert group.jobs == 4 and "no per-second series (DiskSpd ran without -D)" in group.notes


def test_facts_name_the_machine_and_the_run() -> None:
    facts = parse_diskspd(read(VC_XML), source="vc.xml").facts
    assert facts["version"] == "2.0.21a" and facts["computer_name"] == "QuickTest2"
    assert facts["test_time_seconds"] == [120.01] and facts["duration_s"] == 120 and facts["warmup_s"] == 15
    assert facts["processors"] == 4 and facts["measure_latency"] is True and facts["iops_interval_ms"] == 1000
    assert facts["format"] == "xml" and facts["source_file"] == "vc.xml"
    assert facts["profile_xml"].startswith("<Profile>")


def _multi_target() -> str:
    rows = [Counters(0, r"C:\a.dat", 700, 300, buckets=[(70, 30)] * 10),
            Counters(0, r"D:\b&c.dat", 400, 100, read_ms=(0.25, 0.05), buckets=[(40, 10)] * 10),
            Counters(1, r"C:\a.dat", 650, 350, read_ms=(0.75, 0.1), buckets=[(65, 35)] * 10),
            Counters(1, r"D:\b&c.dat", 450, 50, buckets=[(45, 5)] * 10)]
    return xml_2_2(rows, seconds=10.0)


def test_a_2_2_multi_target_run_totals_and_per_target_groups() -> None:
    text = _multi_target()
    assert sniff(text)
    out = parse_diskspd(text, source="multi.xml")
    (total,) = out.groups
    assert total.name == r"C:\a.dat+D:\b&c.dat" and total.jobs == 2 and total.engine_version == "2.2.0"
    r = total.direction("read")
    assert r and r.ios == 700 + 400 + 650 + 450 and r.iops == pytest.approx(220.0)
    assert r.clat and r.clat.percentiles["p50"] == pytest.approx(1000 * default_percentiles()["50"][0], abs=5e-4)
    assert out.facts["power_scheme"] == "Balanced" and out.facts["heterogeneous_cores"] == "false"

    a, b = parse_diskspd(text, source="multi.xml", per_target=True).groups
    assert (a.name, b.name) == (r"C:\a.dat", r"D:\b&c.dat")
    ar, br = a.direction("read"), b.direction("read")
    assert ar and br and ar.ios == 1350 and br.ios == 850 and ar.iops == pytest.approx(135.0)
    # per-target mean latency: thread figures pooled by their I/O counts
    assert ar.clat and ar.clat.mean == pytest.approx((700 * 500 + 650 * 750) / 1350, abs=1e-6)
    pooled_var = (700 * (100**2 + (500 - ar.clat.mean) ** 2) + 650 * (100**2 + (750 - ar.clat.mean) ** 2)) / 1350
    assert ar.clat.stdev == pytest.approx(math.sqrt(pooled_var))
    assert ar.clat.percentiles == {} and ar.clat.min == 250.0 and ar.clat.max == 2250.0  # from -D buckets
    assert ar.series and ar.series.iops == [135.0] * 10
    assert any("only mean and stdev per target" in n for n in a.notes)


def test_per_target_latency_without_series_is_left_out_with_a_note() -> None:
    rows = [Counters(0, "x.dat", 10, 0), Counters(0, "y.dat", 20, 0)]
    a, _ = parse_diskspd(xml_2_2(rows, iops=False), source="s.xml", per_target=True).groups
    (r,) = a.directions
    assert r.clat is None and r.series is None
    assert any("no complete latency figures" in n for n in a.notes)


def test_a_run_without_latency_or_series() -> None:
    text = xml_2_2([Counters(0, "x.dat", 100, 0)], latency=False, iops=False, seconds=4.0)
    (g,) = parse_diskspd(text, source="s.xml").groups
    (r,) = g.directions
    assert r.clat is None and r.series is None and r.iops == 25.0
    assert "latency was not recorded (DiskSpd ran without -L)" in g.notes
    assert "no per-second series (DiskSpd ran without -D)" in g.notes


def test_utf16_file_as_powershell_writes_it() -> None:
    data = b"\xff\xfe" + read(VC_XML).replace("\n", "\r\n").encode("utf-16-le")
    text = decode_output(data)
    (g,) = parse_diskspd(text, source="u16.xml").groups
    assert g.direction("total") and round(g.direction("total").iops, 2) == 440.92  # type: ignore[union-attr]
    # read with the wrong codec (as a UTF-8 importer would), it still parses, with a note
    wrong = data.decode("utf-8", errors="replace")
    assert sniff(wrong)
    (g2,) = parse_diskspd(wrong, source="u16.xml").groups
    assert g2.direction("total").ios == g.direction("total").ios  # type: ignore[union-attr]
    assert any("UTF-16" in n for n in g2.notes)


def test_interrupted_run_is_diskspds_own_error() -> None:
    text = ("<Results>\n  <System><ComputerName>x</ComputerName></System>\n  <TimeSpan>\n    <Error>The test was "
            "interrupted before the measurements began. No results are displayed.</Error>\n  </TimeSpan>\n</Results>\n")
    with pytest.raises(ParseError, match=r"^i\.xml: DiskSpd reported: The test was interrupted"):
        parse_diskspd(text, source="i.xml")


@pytest.mark.parametrize("name", ["<unknown>", "<a & b>", "Balanced"])
def test_the_power_scheme_is_read_as_diskspd_named_it(name: str) -> None:
    """DiskSpd 2.2 puts the name into the attribute unescaped ("<unknown>" when it has none: the Wine
    files); the parser mends the attribute and keeps the name as it was."""
    (path,) = WINE_FILES[:1]
    text = read(path).replace('Name="<unknown>"', f'Name="{name}"')
    assert parse_diskspd(text, source="f").facts["power_scheme"] == name

