"""DiskSpd parsing at its edges: files cut at each boundary, optional elements left out, several
targets and runs in one file, and the exact notes a result carries.

The figures expected here are the ones DiskSpd printed in the vendored outputs
(tests/fixtures/diskspd, the same as ../shared/fixtures/diskspd) or are worked out beside the
case; each refusal is pinned by its whole message, since the message is what a user reads.
"""

from __future__ import annotations

import pytest

from diskbench.engines.diskspd import decode_output, parse_diskspd, sniff
from diskbench.engines.diskspd.results import NO_LATENCY, NO_SERIES, POINTS_NOT_HISTOGRAM, TEXT_NO_SERIES
from diskbench.engines.diskspd.values import count, number
from diskbench.errors import ParseError

from .helpers import FIXTURES, Counters, read, xml_2_2

TEXT = FIXTURES / "windows" / "text"
VC_TEXT = TEXT / "virtualclient_Results_DiskSpd_Text_v2.0.21a_L_D.txt"
SINGLE = TEXT / "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-SingleGroup.txt"
MULTINUMA = TEXT / "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-MultiNumaMultiGroup_TRIMMED.txt"
NTJCBS = TEXT / "ntjcbs_disk-test_README_v2.2_3runs.md"
LINUX = FIXTURES / "linux" / "diskspd-for-linux_randrw70-30_4K_t2_o4_L_D_Sh.txt"
LINUX_NOL = FIXTURES / "linux" / "diskspd-for-linux_seqread_64K_t1_o2_Sd_noL.txt"
VC_XML = FIXTURES / "windows" / "xml" / "virtualclient_Results_DiskSpd_Xml_v2.0.21a_L_D.xml"
LINUX_NOTE = "diskspd-for-linux divides by the requested duration ('test time'), not a measured one"
LINUX_TOTAL_NOTE = ("diskspd-for-linux over-counts earlier threads in its 'Total' percentiles when several threads "
                    "ran; read and write percentiles are right")
BIG = "99999999999999999999999"  # 1e23: more than any 64-bit counter DiskSpd keeps


def error(text: str, source: str = "f", **kw: bool) -> str:
    with pytest.raises(ParseError) as caught:
        parse_diskspd(text, source=source, **kw)
    assert caught.value.message.startswith(f"{source}: ")
    return caught.value.message.removeprefix(f"{source}: ")


def lines_of(path: object) -> list[str]:
    return read(path).split("\n")  # type: ignore[arg-type]


def replaced(path: object, line: int, new: str) -> str:
    """``path``'s text with line ``line`` (1-based, as ``cat -n`` shows it) replaced."""
    lines = lines_of(path)
    lines[line - 1] = new
    return "\n".join(lines)


def cut_after(path: object, line: int) -> str:
    """``path``'s text up to and including line ``line``, as a file cut there ends (no newline)."""
    return "\n".join(lines_of(path)[:line])


# --- the notes and facts of whole files ---------------------------------------------------------------
def test_every_note_of_the_windows_text_output() -> None:
    out = parse_diskspd(read(VC_TEXT), source="t")
    (g,) = out.groups
    # -L (percentile points) and -D (IopsStdDev column, "gathering IOPS" line); nothing else to say
    assert g.notes == [POINTS_NOT_HISTOGRAM, TEXT_NO_SERIES] and g.errors == []
    assert (g.engine, g.engine_version, g.name, g.jobs) == ("diskspd", "unknown", "diskspd.dat", 1)
    assert (out.facts["targets"], "runs" in out.facts) == (["diskspd.dat"], False)
    # the latency figures DiskSpd printed in the 'total:' rows, per direction (ms -> µs)
    assert [(d.direction, d.clat and (d.clat.mean, d.clat.stdev)) for d in g.directions] == [
        ("read", (272.0, 185.0)), ("write", (2179.0, 1037.0)), ("total", (840.0, 1051.0))]


def test_every_note_of_the_linux_text_outputs() -> None:
    (g,) = parse_diskspd(read(LINUX), source="l").groups
    assert g.notes == [LINUX_NOTE, LINUX_TOTAL_NOTE, POINTS_NOT_HISTOGRAM, TEXT_NO_SERIES]
    assert (g.engine, g.engine_version, g.errors) == ("diskspd-for-linux", "unknown", [])
    assert [d.clat is not None and d.clat.exact for d in g.directions] == [True, True, False]
    (n,) = parse_diskspd(read(LINUX_NOL), source="l").groups  # neither -L nor -D
    assert n.notes == [LINUX_NOTE, NO_LATENCY, NO_SERIES]
    assert [(d.direction, d.clat) for d in n.directions] == [("read", None)]


def test_a_file_with_the_iopsstddev_column_but_no_input_parameters_had_d() -> None:
    """VirtualClient trimmed away this file's 'Input parameters' (so its 'gathering IOPS' line), but
    its sections keep the IopsStdDev column that only -D prints."""
    out = parse_diskspd(read(MULTINUMA), source="m")
    (g,) = out.groups
    assert g.notes[1:] == [POINTS_NOT_HISTOGRAM, TEXT_NO_SERIES]
    assert out.facts["targets"] == [r"C:\dskspd\testfile.dat"]  # no 'path:' line: the rows' file cells


def test_the_first_line_of_a_file_is_part_of_its_header() -> None:
    text = read(SINGLE).lstrip("\n")  # as captured without DiskSpd's leading blank line
    assert text.startswith("Command Line: ")
    assert parse_diskspd(text, source="s").facts["command_line"] == (
        r"C:\dskspd\amd64\diskspd.exe -c1G -b4K -r4K -t4 -o16 -w100 -d10 -Suw -W5 -D -L -Rtext C:\diskspd-test.dat")


def test_two_runs_pasted_into_one_file_are_two_results() -> None:
    one = read(SINGLE)
    out = parse_diskspd(one + one, source="two")
    assert [g.name for g in out.groups] == [r"C:\diskspd-test.dat", r"C:\diskspd-test.dat #2"]
    assert [g.directions[0].iops for g in out.groups] == [508.09, 508.09]  # as printed, each
    assert len(out.facts["runs"]) == 2 and out.facts["command_line"].startswith(r"C:\dskspd")
    three = parse_diskspd(one * 3, source="three").groups
    assert [g.name for g in three] == [r"C:\diskspd-test.dat", r"C:\diskspd-test.dat #2", r"C:\diskspd-test.dat #3"]


def test_a_second_run_cut_before_its_results() -> None:
    one = read(SINGLE)
    # the second run's "Command Line:" is line 2 of the copy appended after the first run's 104 lines
    assert one.count("\n") == 104
    assert error(one + "\nCommand Line: diskspd -d10 x.dat\n\nInput parameters:\n", "cut") == (
        "the DiskSpd run starting at line 106 has no results (truncated?)")


def test_lone_carriage_returns_end_lines_too() -> None:
    text = read(VC_TEXT)
    assert parse_diskspd(text.replace("\n", "\r"), source="cr").groups == parse_diskspd(text, source="cr").groups


def test_what_is_not_a_diskspd_text_output() -> None:
    assert error("hello\n", "h") == "no DiskSpd 'Results for timespan' section found"
    assert error(cut_after(VC_TEXT, 27), "c") == ("the DiskSpd text has its input parameters but no 'Results for' "
                                                  "section (the run did not finish, or the file is truncated)")
    linux = read(LINUX).replace("test time:         3s\n", "")
    assert error(linux, "l") == "no 'test time' line (truncated?)"


# --- a text output cut at each boundary of a section -------------------------------------------------
@pytest.mark.parametrize(("line", "message"), [
    (45, "'Total IO' section has no column header (truncated?)"),  # the title, nothing after it
    (46, "'Total IO' section has no column header (truncated?)"),  # the header, not even its dashes
    (47, "'Total IO' section has no total row (truncated?)"),  # the dashes under the header
    (48, "'Total IO' section has no total row (truncated?)"),  # the thread row
    (49, "'Total IO' section has no total row (truncated?)"),  # the dashes above the total row
    (50, "no 'Read IO' section (truncated?)"),  # the total row: this section is whole
])
def test_a_text_output_cut_inside_its_first_section(line: int, message: str) -> None:
    assert error(cut_after(VC_TEXT, line), "c") == message


# --- figures beyond DiskSpd's counters, and long ones ------------------------------------------------
def test_a_figure_larger_than_any_diskspd_counter_names_where_it_is() -> None:
    row = "     0 |       146169856 |        35686 |       {mib} |    1189.03 |    0.840 |     129.18 |     1.051 | d"
    assert error(replaced(VC_TEXT, 48, row.format(mib=BIG + ".64"))) == (
        "'Total IO' section: mibps is 1e+23, larger than any counter DiskSpd keeps (2^64)")
    assert error(replaced(VC_TEXT, 85, f"    max |      7.990 |     35.257 | {BIG}.257")) == (
        "latency distribution row 'max' is 1e+23, larger than any counter DiskSpd keeps (2^64)")
    assert error(replaced(VC_TEXT, 32, f"actual test time:       {BIG}.01s")) == (
        "the test time is 1e+23, larger than any counter DiskSpd keeps (2^64)")
    assert error(replaced(VC_TEXT, 43, f"avg.|   {BIG}.82%|   0.10%|    0.72%|  99.18%")) == (
        "the CPU 'avg.' row is 1e+23, larger than any counter DiskSpd keeps (2^64)")
    # 2^64 bytes exactly is the largest block size a 64-bit counter holds (16777216 TiB = 2^24 x 2^40)
    edge = parse_diskspd(replaced(VC_TEXT, 17, "                block size: 16777216TiB"), source="t")
    assert edge.facts["block_sizes"] == {"diskspd.dat": 2**64}


def test_a_long_bad_figure_is_quoted_to_30_characters() -> None:
    junk = "1.0" + "x" * 40
    row = f"     0 |       146169856 |        35686 |       4.64 |    {junk} |    0.840 |     129.18 |     1.051 | d"
    assert error(replaced(VC_TEXT, 48, row)) == (
        f"'Total IO' section: {junk[:30]!r} is not a DiskSpd iops figure (truncated?)")
    for text, message in ((f"1e999{'0' * 40}", "not a finite number"), (f"-{'1' * 40}", "negative")):
        with pytest.raises(ParseError) as caught:
            number(text, "x")
        assert message in caught.value.message and text[:30] in caught.value.message
        assert text[:31] not in caught.value.message
    with pytest.raises(ParseError) as caught:
        count("1.5" + "0" * 40, "n")
    assert caught.value.message == f"n is {'1.5' + '0' * 27}, not a whole number"


# --- rates against counts ------------------------------------------------------------------------------
def test_diskspd_for_linux_rates_are_held_to_whole_seconds() -> None:
    """diskspd-for-linux divides by the whole seconds it prints (3 s here): thread 0's 21184 I/Os
    are 7061.33 I/O per s, within 0.005 of 21184 / 3 = 7061.333. Printed as 7062.33 it is 0.014%
    beyond that; it would be within the rounding of a time printed to 0.01 s (21184 / 2.995 =
    7073.1), so only the Linux rule notices."""
    text = read(LINUX).replace("  7061.33 |", "  7062.33 |", 1)
    (g,) = parse_diskspd(text, source="l").groups
    assert g.notes[0] == ("DiskSpd's printed rates differ from its I/O counts over its printed test time by more "
                          "than their rounding (up to 0.01%): the file may have been edited; the printed IOPS are "
                          "kept")


def test_a_rate_below_its_count_is_measured_against_the_count() -> None:
    """21184 / 3 - 0.005 = 7061.328 is the least thread 0's rate may read. Printed as 6991.00 it is
    70.33 below: 0.996% of the 7061.33 the count allows (kept, with a note), though 1.006% of the
    6991.00 printed."""
    (g,) = parse_diskspd(read(LINUX).replace("  7061.33 |", "  6991.00 |", 1), source="l").groups
    assert "(up to 1.00%)" in g.notes[0]


def test_a_small_rate_is_measured_against_itself() -> None:
    """Thread 2 wrote 5230592 bytes (4.988 MiB) in 10.00 s: at most 4.988 / 9.995 + 0.005 = 0.504
    MiB/s. Printed 0.51, that is 1.2% too high: beyond the 1% an edited file may be off."""
    row = ("     2 |         5230592 |         1277 |       0.51 |     127.65 |  125.298 |       1.55 |    26.047 | "
           r"C:\diskspd-test.dat (1GiB)")
    assert error(replaced(SINGLE, 61, row)) == ("'Total IO' section, thread 2: mibps 0.51 is not its count over the "
                                                "test time (0.49..0.50)")


# --- latency tables ------------------------------------------------------------------------------------
def test_a_total_row_without_a_latency_spread_has_no_latency() -> None:
    """DiskSpd prints N/A for LatStdDev where it has no spread: that direction's latency is left out, and said."""
    row = "total:          43524096 |        10626 |       1.38 |     354.05 |    2.179 |      38.48 |       N/A"
    (g,) = parse_diskspd(replaced(VC_TEXT, 64, row), source="t").groups
    assert [(d.direction, d.clat is not None) for d in g.directions] == [("read", True), ("write", False),
                                                                        ("total", True)]
    assert g.notes[0] == "write: DiskSpd gave no complete latency figures for this direction"


def _two_targets_mixed() -> str:
    """ntjcbs' first run (4 threads, 60/40 random, -L) with thread 3 on a second target and a chart
    per target, as DiskSpd 2.2 prints them ('Latency distribution: <path>')."""
    text = read(NTJCBS)
    run = text[text.index("Command Line:"):text.index("## WD 850X")]
    lines = run.split("\n")
    for i, ln in enumerate(lines):
        if ln.startswith("     3 |"):
            lines[i] = ln.replace(r"c:\diskspd\testfile.dat (10MiB)", r"d:\other.dat (10MiB)")
    run = "\n".join(lines)
    chart = run[run.index("  %-ile |"):].rstrip("\n")
    other = chart.replace("4.460 |      1.773 |      4.460", "4.470 |      1.783 |      4.470")
    per_target = (f"Latency distribution: c:\\diskspd\\testfile.dat\n{chart}\n\n"
                  f"Latency distribution: d:\\other.dat\n{other}\n\n")
    return run.replace("Total latency distribution:\n", per_target + "Total latency distribution:\n")


def test_per_target_groups_of_a_mixed_run_use_diskspds_per_thread_figures() -> None:
    text = _two_targets_mixed()
    c, d = parse_diskspd(text, source="n", per_target=True).groups
    assert (c.name, d.name, c.jobs, d.jobs) == (r"c:\diskspd\testfile.dat", r"d:\other.dat", 3, 1)
    # d: thread 3's own printed rows. I/O per s as printed; latency from its AvgLat and LatStdDev
    # (ms), its min and max from its own chart
    assert [(x.direction, x.iops, x.ios) for x in d.directions] == [
        ("read", 63461.32, 1904555), ("write", 42358.52, 1271233), ("total", 105819.83, 3175788)]
    assert [(x.clat.mean, x.clat.stdev, x.clat.max) for x in d.directions if x.clat] == [
        (87.0, 106.0, 4470.0), (34.0, 10.0, 1783.0), (66.0, 86.0, 4470.0)]
    # c: threads 0, 1 and 2, their printed rates added, to the 0.01 DiskSpd prints (read: 64206.07 +
    # 63484.08 + 61988.74; added as floats that would read 189678.88999999998)
    assert [x.iops for x in c.directions] == [189678.89, 126478.54, 316157.43]
    assert c.directions[2].clat is not None and c.directions[2].clat.max == 4460.0
    assert all(POINTS_NOT_HISTOGRAM in g.notes for g in (c, d))


def test_charts_are_found_by_their_headings_in_any_order() -> None:
    """The same run with the 2.0/2.1 headings: 'total:' over the run's chart, then a bare path over
    each target's (here after a blank line, which is skipped)."""
    text = _two_targets_mixed()
    start = text.index("Latency distribution: c:")
    per_target = text[start:text.index("Total latency distribution:\n")]
    whole = text[text.index("Total latency distribution:\n"):].replace("Total latency distribution:", "total:")
    bare = per_target.replace("Latency distribution: ", "").replace("dat\n  %-ile", "dat\n\n  %-ile")
    text = text[:start] + whole.rstrip("\n") + "\n\n" + bare
    c, d = parse_diskspd(text, source="n", per_target=True).groups
    assert [x.clat and x.clat.max for x in d.directions] == [4470.0, 1783.0, 4470.0]
    assert [x.clat and x.clat.max for x in c.directions] == [4460.0, 1773.0, 4460.0]
    (whole_run,) = parse_diskspd(text, source="n").groups
    assert [x.clat and x.clat.max for x in whole_run.directions] == [4460.0, 1773.0, 4460.0]


def test_a_single_target_split_by_target_is_the_whole_run() -> None:
    (g,) = parse_diskspd(read(VC_TEXT), source="t", per_target=True).groups
    assert g.name == "diskspd.dat" and g.directions[0].iops == 834.98
    assert g.directions[0].clat is not None and g.directions[0].clat.percentiles["p50"] == 232.0  # 50th: 0.232 ms


def _without_thread_rows(path: object, threads: tuple[str, ...]) -> str:
    return "\n".join(ln for ln in lines_of(path) if not any(ln.startswith(f"     {t} |") for t in threads))


def test_a_file_trimmed_of_thread_rows_uses_diskspds_totals() -> None:
    trimmed = ("the per-thread rows do not add up to DiskSpd's totals (a trimmed file?); the totals are used")
    (g,) = parse_diskspd(_without_thread_rows(SINGLE, ("3",)), source="s").groups
    assert g.notes[0] == trimmed and g.directions[0].iops == 508.09 and g.jobs == 3
    (bare,) = parse_diskspd(_without_thread_rows(SINGLE, ("0", "1", "2", "3")), source="s").groups
    assert (bare.name, bare.notes[0], bare.jobs, bare.directions[0].ios) == ("diskspd", trimmed, 0, 5083)


def test_a_trimmed_file_cannot_be_split_by_target() -> None:
    text = _two_targets_mixed().replace(r"d:\other.dat (10MiB)", r"c:\diskspd\testfile.dat (10MiB)")
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        if ln.startswith("     2 |"):
            lines[i] = ln.replace(r"c:\diskspd\testfile.dat (10MiB)", r"d:\other.dat (10MiB)")
    trimmed = "\n".join(ln for ln in lines if not ln.startswith("     3 |"))
    assert error(trimmed, "n", per_target=True) == (
        "the per-thread rows do not add up to DiskSpd's totals; cannot split the run by target")


def test_a_file_cell_without_a_size_is_the_path() -> None:
    text = read(VC_TEXT).replace("diskspd.dat (1024MiB)", "diskspd.dat")
    assert parse_diskspd(text, source="t", per_target=True).groups[0].name == "diskspd.dat"


def test_the_power_scheme_line_marks_the_2_2_layout() -> None:
    text = read(SINGLE).replace("Total latency distribution:", "total:")
    assert parse_diskspd(text, source="s").facts["layout"] == "windows 2.2"


# --- XML: optional elements left out -----------------------------------------------------------------------
MINIMAL_XML = """<Results>
  <TimeSpan>
    <TestTimeSeconds>2.00</TestTimeSeconds>
    <Iops>
      <Bucket SampleMillisecond="1000" Read="3" Total="3"/>
      <Bucket SampleMillisecond="2000" Read="1" Total="1"/>
    </Iops>
    <Thread>
      <Id>0</Id>
      <Target>
        <Path>x.dat</Path>
        <ReadBytes>16384</ReadBytes>
        <ReadCount>4</ReadCount>
        <WriteBytes>0</WriteBytes>
        <WriteCount>0</WriteCount>
      </Target>
    </Thread>
  </TimeSpan>
</Results>
"""


def test_an_xml_result_with_only_what_diskspd_always_writes() -> None:
    """No <System>, no <Profile>, no CPU figures, no latency; per-second buckets without a Write
    attribute: 4 reads in 2.00 s are 2 IOPS, the seconds 3 and 1, each 1 s long (DiskSpd's default
    bucket), and no per-second bandwidth (the block size is in the <Profile>)."""
    out = parse_diskspd(MINIMAL_XML, source="m.xml")
    (g,) = out.groups
    (r,) = g.directions
    assert (r.iops, r.bw_bytes_per_s, r.clat) == (2.0, 8192.0, None)
    assert r.series is not None and (r.series.iops, r.series.interval_s, r.series.bw_bytes_per_s) == (
        [3.0, 1.0], 1.0, None)
    assert (g.engine_version, g.hosts, g.notes, g.errors) == ("unknown", [], [NO_LATENCY], [])
    assert (out.facts["profile_xml"], out.facts["cpu_usage_percent"]) == (None, None)
    assert "computer_name" not in out.facts


def test_optional_profile_elements_left_out() -> None:
    text = read(VC_XML)
    for gone in ("<MeasureLatency>true</MeasureLatency>", "<Cooldown>0</Cooldown>",
                 "<IoBucketDuration>1000</IoBucketDuration>", "<BlockSize>4096</BlockSize>",
                 ' ActiveProcessors="4"'):
        assert gone in text
        text = text.replace(gone, "", 1)
    out = parse_diskspd(text, source="v.xml")
    assert (out.facts["measure_latency"], out.facts["cooldown_s"], out.facts["processors"]) == (None, None, None)
    assert out.facts["duration_s"] == 120
    series = out.groups[0].directions[0].series
    assert series is not None and series.interval_s == 1.0  # DiskSpd's default: 1000 ms
    assert series.bw_bytes_per_s is None  # no block size: no bandwidth per second


def test_the_xml_latency_figures_of_each_direction() -> None:
    """The VirtualClient XML's <Latency>: averages 2.477 / 1.767 / 2.266 ms, stdev 2.732 / 0.508 / 2.329."""
    (g,) = parse_diskspd(read(VC_XML), source="v").groups
    assert [(d.direction, d.clat and (d.clat.mean, d.clat.stdev)) for d in g.directions] == [
        ("read", (2477.0, 2732.0)), ("write", (1767.0, 508.0)), ("total", (2266.0, 2329.0))]
    assert g.errors == []


def test_a_write_only_latency_block_keeps_its_write_figures() -> None:
    """A <Latency> with no read average (as for a run without reads): write and total still read."""
    text = read(VC_XML).replace("<AverageReadMilliseconds>2.477</AverageReadMilliseconds>", "", 1)
    (g,) = parse_diskspd(text, source="v").groups
    assert [(d.direction, d.clat and d.clat.mean) for d in g.directions] == [
        ("read", None), ("write", 1767.0), ("total", 2266.0)]
    assert g.notes[0] == "read: DiskSpd gave no complete latency figures for this direction"


def test_latency_without_its_maximum_is_incomplete() -> None:
    text = read(VC_XML)
    start = text.index("<Percentile>100</Percentile>")
    text = text[:text.rindex("<Bucket>", 0, start)] + text[text.index("</Bucket>", start) + len("</Bucket>"):]
    (g,) = parse_diskspd(text, source="v").groups
    assert [d.clat for d in g.directions] == [None, None, None]
    assert g.notes[:3] == [f"{d}: DiskSpd gave no complete latency figures for this direction"
                           for d in ("read", "write", "total")]


def test_a_single_write_is_a_direction() -> None:
    """One write I/O is a write direction; with no write latency in the <Latency> block, that is said."""
    text = xml_2_2([Counters(0, "x.dat", 10, 1, buckets=[(10, 1)])], seconds=1.0)
    text = text.replace("      <AverageWriteMilliseconds>1.000</AverageWriteMilliseconds>\n", "", 1)
    (g,) = parse_diskspd(text, source="s").groups
    assert [(d.direction, d.ios, d.clat is not None) for d in g.directions] == [
        ("read", 10, True), ("write", 1, False), ("total", 11, True)]
    assert g.notes[0] == "write: DiskSpd gave no complete latency figures for this direction"


def test_the_average_may_reach_the_maximum_but_not_pass_it() -> None:
    """helpers.xml_2_2's read points rise by 10 µs a label, to 1170 µs at 100 (1160 at 99.9999999).
    An average of 1.170 ms is the maximum: accepted; 1.172 ms is beyond its 1 µs rounding."""
    text = xml_2_2([Counters(0, "x.dat", 10, 0)], iops=False)
    parse_diskspd(text.replace("<AverageReadMilliseconds>0.500", "<AverageReadMilliseconds>1.170", 1), source="s")
    assert error(text.replace("<AverageReadMilliseconds>0.500", "<AverageReadMilliseconds>1.172", 1)) == (
        "<TimeSpan> 1 <Latency> Read: the average latency (1172 µs) is outside its minimum and maximum (100..1170 µs)")


def _two_threads_two_targets() -> str:
    """The VirtualClient XML with its one thread copied as thread 1 on a second target."""
    text = read(VC_XML)
    start, end = text.index("        <Thread>"), text.index("        </Thread>") + len("        </Thread>\n")
    thread = text[start:end]
    other = thread.replace("<Id>0</Id>", "<Id>1</Id>", 1).replace("<Path>diskspd.test</Path>",
                                                                  "<Path>other.test</Path>")
    return text[:end] + other + text[end:]


def test_per_target_latency_of_the_xml_is_each_targets_own() -> None:
    """Thread 1 is a copy of thread 0 on other.test: its group has thread 0's per-target averages
    (2.477 / 1.767 / 2.266 ms, stdev 2.732 / 0.508 / 2.329) and the min and max of its buckets."""
    _, other = parse_diskspd(_two_threads_two_targets(), source="v", per_target=True).groups
    assert other.name == "other.test"
    assert [(d.direction, d.clat and (d.clat.mean, d.clat.stdev)) for d in other.directions] == [
        ("read", (2477.0, 2732.0)), ("write", (1767.0, 508.0)), ("total", (2266.0, 2329.0))]
    # the least and the most of its buckets' minimums and maximums: 0.045 and 33.846 ms, which are
    # also DiskSpd's 0th and 100th percentiles of the run
    read_ = other.directions[0].clat
    assert read_ is not None and (read_.min, read_.max) == (45.0, 33846.0)
    assert other.notes[0] == ("per-target latency: DiskSpd gives only mean and stdev per target here (no "
                              "percentiles); the run's percentiles cover all targets")


def test_per_target_groups_without_latency() -> None:
    rows = [Counters(0, "x.dat", 10, 0, buckets=[(5, 0)] * 2), Counters(1, "y.dat", 20, 0, buckets=[(10, 0)] * 2)]
    x, y = parse_diskspd(xml_2_2(rows, latency=False, seconds=2.0), source="s", per_target=True).groups
    assert [(g.name, g.directions[0].iops, g.directions[0].clat) for g in (x, y)] == [("x.dat", 5.0, None),
                                                                                      ("y.dat", 10.0, None)]
    assert x.notes == [NO_LATENCY]


@pytest.mark.parametrize(("old", "new", "message"), [
    ("<AverageReadLatencyMilliseconds>2.477</AverageReadLatencyMilliseconds>",
     "<AverageReadLatencyMilliseconds>x</AverageReadLatencyMilliseconds>",
     "<Thread> <Target> 'diskspd.test': <AverageReadLatencyMilliseconds> is 'x', not a number"),
    ("<LatencyStdev>2.329</LatencyStdev>\n                <Iops>", "<LatencyStdev>x</LatencyStdev>\n<Iops>",
     "<Thread> <Target> 'diskspd.test': <LatencyStdev> is 'x', not a number"),
    ("<AverageWriteMilliseconds>1.767</AverageWriteMilliseconds>",
     "<AverageWriteMilliseconds>x</AverageWriteMilliseconds>",
     "<TimeSpan> 1 <Latency>: <AverageWriteMilliseconds> is 'x', not a number"),
    ("<IOCount>52915</IOCount>", "<IOCount>x</IOCount>",
     "<TimeSpan> 1 thread 0 <Target>: <IOCount> is 'x', not a number"),
    ("<WriteCount>15753</WriteCount>", "<WriteCount>0</WriteCount>",
     "<TimeSpan> 1 thread 0 <Target>: <WriteCount> is 0 but <WriteBytes> is 64524288"),
    ("<ReadBytes>152215552</ReadBytes>", "", "<TimeSpan> 1 thread 0 <Target>: <ReadBytes> is missing"),
    ("<WriteCount>15753</WriteCount>", "", "<TimeSpan> 1 thread 0 <Target>: <WriteCount> is missing"),
    ("<WriteBytes>64524288</WriteBytes>", "", "<TimeSpan> 1 thread 0 <Target>: <WriteBytes> is missing"),
])
def test_each_xml_problem_names_its_element(old: str, new: str, message: str) -> None:
    text = read(VC_XML)
    assert text.count(old) == 1  # the run's own element, or its one target's
    assert error(text.replace(old, new)) == message


def test_a_long_path_is_quoted_to_60_characters() -> None:
    path = "C:\\" + "d" * 70 + ".dat"
    text = read(VC_XML).replace("<Path>diskspd.test</Path>", f"<Path>{path}</Path>")
    at = text.index("<AverageReadLatencyMilliseconds>")
    text = text[:at] + text[at:].replace("<AverageReadLatencyMilliseconds>2.477",
                                         "<AverageReadLatencyMilliseconds>x", 1)
    assert error(text) == f"<Thread> <Target> {path[:60]!r}: <AverageReadLatencyMilliseconds> is 'x', not a number"


# --- XML: what surrounds the document ----------------------------------------------------------------------
def test_an_xml_result_after_other_output_or_before_a_prompt() -> None:
    text = read(VC_XML)
    expected = parse_diskspd(text, source="v").groups
    before = "WARNING: diskspd.exe was started with -Rxml\r\n" + text
    assert sniff(before)
    assert parse_diskspd(before, source="v").groups == expected
    assert parse_diskspd(text + "\nPS C:\\bench> \n", source="v").groups == expected


def test_two_xml_documents_in_one_file_are_refused() -> None:
    text = read(VC_XML)
    assert error(text + text).startswith("not well-formed DiskSpd XML (")


def test_an_xml_document_of_another_kind_is_named() -> None:
    assert error("<Foo/>") == "the root element is <Foo>, not DiskSpd's <Results>"
    profile = '\n<?xml version="1.0" encoding="UTF-8"?>\n<Profile>\n  <TimeSpans/>\n</Profile>\n'
    assert error(profile) == ("the root element is <Profile>, not DiskSpd's <Results> (a DiskSpd profile, as -Rp "
                              "prints it: it holds no results)")


def test_a_truncated_xml_result_is_still_diskspds() -> None:
    head = "<Results>\n  <System>\n"
    assert sniff(head)
    assert error(head).startswith("not well-formed DiskSpd XML (")
    # ... also as UTF-16 read as UTF-8 (its byte-order mark becomes two replacement characters)
    wrong = (b"\xff\xfe" + head.encode("utf-16-le")).decode("utf-8", errors="replace")
    assert wrong.startswith("\ufffd\ufffd<\x00")
    assert sniff(wrong)
    assert error(wrong).startswith("not well-formed DiskSpd XML (")


# --- decoding ----------------------------------------------------------------------------------------------
def test_decoding_edges() -> None:
    assert decode_output(b"\x00" * 8) == "\x00" * 8  # a file of NULs (allocated, never written): not UTF-16
    assert decode_output(b"a\x00b\x00\x00\xd8") == "ab\ufffd"  # UTF-16LE, no BOM: a lone surrogate is replaced


def test_utf16_is_assumed_only_when_more_than_a_quarter_are_nuls() -> None:
    """UTF-16 text read as UTF-8 is half NULs; a file with a quarter or fewer is not repaired."""
    text = read(VC_TEXT)
    n = len(text) // 3  # n NULs in len(text) + n characters: exactly a quarter
    assert (len(text) + n) // 4 == n
    quarter = parse_diskspd("\x00" * n + text, source="q").groups[0]
    assert not any("UTF-16" in note for note in quarter.notes)
    more = parse_diskspd("\x00" * (n + 1) + text, source="q").groups[0]
    assert more.notes[0].startswith("the file is UTF-16 but was read as UTF-8")
