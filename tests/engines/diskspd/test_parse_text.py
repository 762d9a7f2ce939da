"""DiskSpd text results (Windows 2.0 to 2.2 and diskspd-for-linux) checked against the totals DiskSpd printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from diskbench.engines.diskspd import parse_diskspd
from diskbench.model import DirectionResult

from .helpers import FIXTURES, TEXT_FILES, chart_row, read, section_total

TEXT = FIXTURES / "windows" / "text"
LINUX = FIXTURES / "linux"
NTJCBS = TEXT / "ntjcbs_disk-test_README_v2.2_3runs.md"
SECTION = {"read": "Read IO", "write": "Write IO", "total": "Total IO"}
COLUMN = {"read": 0, "write": 1, "total": 2}


def _runs(text: str) -> list[str]:
    """The text of each run, cut at its 'Results for' heading (independently of the parser)."""
    parts = re.split(r"^(?=Command Line:)", text, flags=re.MULTILINE)
    runs = [p for p in parts if re.search(r"^Results for (timespan|job) \d+:", p, re.MULTILINE)]
    return runs or [text]


def _check_direction(d: DirectionResult, run: str, linux: bool, rates: bool = True) -> None:
    printed = section_total(run, SECTION[d.direction])
    seconds = float(re.search(r"test time:\s*([\d.]+)s", run).group(1))  # type: ignore[union-attr]
    assert (d.ios, d.io_bytes, d.runtime_s) == (printed["I/Os"], printed["bytes"], seconds)
    assert d.iops == printed["I/O per s"]  # DiskSpd's own figure, as it printed it
    # Bandwidth is bytes over the time, which DiskSpd printed with two decimals (diskspd-for-linux: whole
    # seconds, which it divides by); it divided by the unrounded time.
    slack = 0.0 if linux else 0.005 / seconds
    if not rates:
        return _check_latency(d, run, printed)
    mib = printed.get("MiB/s", printed.get("MB/s"))
    assert d.bw_bytes_per_s / 2**20 == pytest.approx(mib, rel=slack, abs=0.006)
    _check_latency(d, run, printed)


def _check_latency(d: DirectionResult, run: str, printed: dict[str, float]) -> None:
    if "AvgLat" in printed or "AvgLat(ms)" in printed:
        assert d.clat is not None
        assert d.clat.mean == pytest.approx(printed.get("AvgLat", printed.get("AvgLat(ms)")) * 1000)
        assert d.clat.stdev == pytest.approx(printed["LatStdDev"] * 1000)
        for label, key in (("50th", "p50"), ("90th", "p90"), ("99th", "p99"), ("3-nines", "p99.9"),
                           ("4-nines", "p99.99"), ("9-nines", "p99.9999999"), ("25th", "p25"), ("75th", "p75")):
            assert d.clat.percentiles[key] == pytest.approx(chart_row(run, label)[COLUMN[d.direction]] * 1000)
        assert d.clat.min == pytest.approx(chart_row(run, "min")[COLUMN[d.direction]] * 1000)
        assert d.clat.max == pytest.approx(chart_row(run, "max")[COLUMN[d.direction]] * 1000)
        assert d.clat.samples == d.ios and d.clat.bins is None
    else:
        assert d.clat is None


# VirtualClient's authors trimmed this file by hand and its printed rates no longer fit its printed
# time (see test_edited_multinuma_file_is_inconsistent_in_itself): its bandwidth is not compared.
EDITED = "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-MultiNumaMultiGroup_TRIMMED.txt"


@pytest.mark.parametrize("path", TEXT_FILES, ids=lambda p: p.name)
def test_every_text_fixture_matches_what_diskspd_printed(path: Path) -> None:
    text = read(path)
    linux = path.parent.name == "linux"
    out = parse_diskspd(text, source=str(path))
    runs = _runs(text)
    assert len(out.groups) == len(runs)
    for group, run in zip(out.groups, runs, strict=True):
        assert group.engine == ("diskspd-for-linux" if linux else "diskspd")
        expected = [d for d in ("read", "write") if section_total(run, SECTION[d])["I/Os"] > 0]
        if len(expected) == 2:
            expected.append("total")
        assert [d.direction for d in group.directions] == expected
        for d in group.directions:
            _check_direction(d, run, linux, rates=path.name != EDITED)
            assert d.series is None


def test_ntjcbs_readme_figures_three_runs_in_one_markdown_file() -> None:
    out = parse_diskspd(read(NTJCBS), source="README.md")
    assert [g.name for g in out.groups] == [r"c:\diskspd\testfile.dat", r"e:\diskspd\testfile.dat",
                                            r"d:\diskspd\testfile.dat"]
    total = out.groups[0].direction("total")
    # README: 421977.26 IOPS, 1648.35 MiB/s, AvgLat 0.066 ms; the printed 30.01 s is rounded
    assert total and total.iops == 421977.26 and total.clat
    assert total.clat.mean == 66.0
    assert total.bw_bytes_per_s / 2**20 == pytest.approx(1648.35, rel=0.005 / 30.01)
    assert out.facts["layout"] == "windows 2.2" and len(out.facts["runs"]) == 3
    assert out.facts["runs"][1]["command_line"].endswith(r"-L e:\diskspd\testfile.dat")
    assert out.facts["computer_name"] == "Nate-desktop" and out.facts["cores"] == 16


def test_virtualclient_single_group_figures() -> None:
    out = parse_diskspd(read(TEXT / "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-SingleGroup.txt"), source="vc")
    (g,) = out.groups
    (w,) = g.directions
    assert w.direction == "write" and w.iops == 508.09 and w.clat and w.clat.mean == 125800.0  # as printed
    assert g.jobs == 4 and g.hosts == ["alexwill-dskspd"]
    assert "no per-second series: DiskSpd's text output has none (run with -D -Rxml)" in g.notes
    assert out.facts["block_sizes"] == {r"C:\diskspd-test.dat": 4096} and out.facts["iops_interval_ms"] == 1000


def test_trimmed_file_uses_diskspds_totals_and_says_so() -> None:
    path = TEXT / "virtualclient_DiskSpdExample-WriteOnly-v2.2.0_160threads_TRIMMED.txt"
    (g,) = parse_diskspd(read(path), source="t").groups
    (w,) = g.directions
    assert w.ios == 2017883745 and w.clat and w.clat.percentiles["p99.99999"] == 2247379.0
    assert any("do not add up" in n for n in g.notes)


def test_version_2_0_text_heading_and_rates() -> None:
    out = parse_diskspd(read(TEXT / "virtualclient_Results_DiskSpd_Text_v2.0.21a_L_D.txt"), source="t")
    t = out.groups[0].direction("total")
    assert t and t.iops == 1189.03 and out.facts["layout"] == "windows 2.0/2.1"


def test_linux_notes_requested_duration_and_total_percentile_bug() -> None:
    (g,) = parse_diskspd(read(LINUX / "diskspd-for-linux_randrw70-30_4K_t2_o4_L_D_Sh.txt"), source="l").groups
    r, w, t = g.directions
    assert r.clat and r.clat.exact and t.clat and not t.clat.exact
    assert any("requested duration" in n for n in g.notes) and any("over-counts" in n for n in g.notes)
    (g2,) = parse_diskspd(read(LINUX / "diskspd-for-linux_seqread_64K_t1_o2_Sd_noL.txt"), source="l").groups
    assert [d.direction for d in g2.directions] == ["read"] and g2.directions[0].clat is None
    assert "latency was not recorded (DiskSpd ran without -L)" in g2.notes


def test_crlf_and_tabs_as_captured_raw_on_windows() -> None:
    text = read(TEXT / "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-SingleGroup.txt")
    raw = parse_diskspd(text.replace("\n", "\r\n"), source="crlf").groups
    assert raw[0].directions == parse_diskspd(text, source="lf").groups[0].directions


def _two_target_2_2_text() -> str:
    """A 2.2 text output with two targets: per-target charts headed 'Latency distribution: <path>'."""
    base = read(TEXT / "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-SingleGroup.txt")
    base = base.replace("     2 |         5230592 |         1277 |       0.50 |     127.65 |  125.298 |       1.55 |"
                        "    26.047 | C:\\diskspd-test.dat (1GiB)",
                        "     2 |         5230592 |         1277 |       0.50 |     127.65 |  125.298 |       1.55 |"
                        "    26.047 | D:\\other.dat (1GiB)")
    base = base.replace("     2 |               0 |            0 |       0.00 |       0.00 |    0.000 |       0.00 |"
                        "       N/A | C:\\diskspd-test.dat (1GiB)",
                        "     2 |               0 |            0 |       0.00 |       0.00 |    0.000 |       0.00 |"
                        "       N/A | D:\\other.dat (1GiB)")
    chart = base[base.index("  %-ile |"):]
    per_target = (f"Latency distribution: C:\\diskspd-test.dat\n{chart}\n"
                  f"Latency distribution: D:\\other.dat\n{chart.replace('164.312', '170.000')}\n")
    return base.replace("Total latency distribution:\n", per_target + "Total latency distribution:\n")


def test_per_target_groups_from_2_2_per_target_charts() -> None:
    text = _two_target_2_2_text()
    (whole,) = parse_diskspd(text, source="two").groups
    assert whole.name == r"C:\diskspd-test.dat+D:\other.dat" and whole.directions[0].ios == 5083
    a, b = parse_diskspd(text, source="two", per_target=True).groups
    assert (a.name, b.name, a.jobs, b.jobs) == (r"C:\diskspd-test.dat", r"D:\other.dat", 3, 1)
    (aw,), (bw,) = a.directions, b.directions
    assert aw.ios == 1265 + 1275 + 1266 and bw.ios == 1277
    assert bw.clat and bw.clat.max == 170000.0 and bw.clat.mean == 125298.0 and bw.clat.stdev == 26047.0
    assert aw.clat and aw.clat.max == 164312.0


def test_edited_multinuma_file_is_inconsistent_in_itself() -> None:
    text = read(TEXT / EDITED)
    row = re.search(r"^\s+0 \|\s+(\d+) \|\s+(\d+) \|\s+[\d.]+ \|\s+([\d.]+) \|", text, re.MULTILINE)
    assert row and "actual test time:\t5.00s" in text
    ios, iops = int(row.group(2)), float(row.group(3))
    assert ios / 5.00 == pytest.approx(613.0) and iops == 611.41  # printed rate implies 5.013 s
    (g,) = parse_diskspd(text, source="e").groups
    assert g.directions[0].iops == 1215.24  # DiskSpd's printed figure is kept, and the mismatch said
    assert any("differ from its I/O counts over its printed test time" in n and "0.16%" in n for n in g.notes)
