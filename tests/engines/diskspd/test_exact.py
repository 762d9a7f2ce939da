"""DiskSpd parsing pinned piece by piece: decoding, checked numbers, percentile keys, rate bounds.

The fixture tests compare whole runs with what DiskSpd printed; these pin the small conversions
every figure goes through, with the expected values worked out beside each case, and the exact
message of each refusal.
"""

from __future__ import annotations

import math

import pytest

from diskbench.engines.diskspd.parse import decode_output, parse_diskspd, sniff
from diskbench.engines.diskspd.results import pooled
from diskbench.engines.diskspd.values import count, digits, ms_to_us, number, percentile_key, rate_bounds
from diskbench.errors import ParseError

from .helpers import FIXTURES, TEXT_FILES, XML_FILES, Counters, read, xml_2_2


def test_decoding_what_windows_writes() -> None:
    text = "Command Line: diskspd -b4K µs\r\n"
    assert decode_output(b"\xef\xbb\xbf" + text.encode()) == text  # UTF-8 with a BOM
    assert decode_output(text.encode()) == text
    assert decode_output(b"\xff\xfe" + text.encode("utf-16-le")) == text  # PowerShell 5.1's `>`: UTF-16LE + BOM
    assert decode_output(b"\xfe\xff" + text.encode("utf-16-be")) == text
    assert decode_output(text.encode("utf-16-le")) == text  # UTF-16LE without a BOM: every other byte 0
    assert decode_output(b"ab") == "ab" and decode_output(b"a\x00b") == "a\x00b"  # too short to tell: UTF-8
    assert decode_output(b"\x00a\x00b") == "\x00a\x00b"  # starts with a NUL: not little-endian text
    assert decode_output(b"a\x00\x00\x00") == "a\x00"  # "a" and a NUL in UTF-16LE
    assert decode_output(b"ab\x00\x00") == "ab\x00\x00"  # byte 1 is not a NUL: UTF-8
    assert decode_output(b"a\xffb") == "a\ufffdb"  # invalid UTF-8 is replaced, not an exception
    assert decode_output(b"\xef\xbb\xbfa\xff") == "a\ufffd"
    assert decode_output(b"\xff\xfea\x00\x00\xd8") == "a\ufffd"  # a lone surrogate at the end


@pytest.mark.parametrize("path", [*XML_FILES, *TEXT_FILES], ids=lambda p: p.name)
def test_utf16_read_as_utf8_is_repaired_with_a_note(path: object) -> None:
    from pathlib import Path

    assert isinstance(path, Path)
    text = read(path)
    wrong = ("\ufeff" + text).encode("utf-16-le").decode("utf-8", errors="replace")  # UTF-16 read as UTF-8
    assert sniff(wrong)
    plain = parse_diskspd(text, source="f")
    repaired = parse_diskspd(wrong, source="f")
    note = ("the file is UTF-16 but was read as UTF-8 (read it with decode_output); non-ASCII characters may be lost")
    assert all(g.notes[0] == note for g in repaired.groups)
    assert [d.iops for g in repaired.groups for d in g.directions] == [d.iops for g in plain.groups
                                                                      for d in g.directions]
    bom = parse_diskspd("\ufeff" + text, source="f")
    assert [g.notes for g in bom.groups] == [g.notes for g in plain.groups]


@pytest.mark.parametrize(("text", "value"), [
    ("0", 0.0), ("12", 12.0), (" 1.5 ", 1.5), ("1.", 1.0), (".5", 0.5), ("+3", 3.0), ("1e3", 1000.0), ("2E-1", 0.2),
    (str(2**64), float(2**64)),
])
def test_numbers(text: str, value: float) -> None:
    assert number(text, "x") == value


@pytest.mark.parametrize(("text", "message"), [
    ("abc", "IOPS is 'abc', not a number"), ("", "IOPS is '', not a number"),
    ("1.2.3", "IOPS is '1.2.3', not a number"),
    ("nan", "IOPS is 'nan', not a finite number"), ("-inf", "IOPS is '-inf', not a finite number"),
    ("Infinity", "IOPS is 'Infinity', not a finite number"), ("1e999", "IOPS is '1e999', not a finite number"),
    ("-1", "IOPS is negative (-1)"), ("-0.5", "IOPS is negative (-0.5)"),
    ("1.9e19", "IOPS is 1.9e+19, larger than any counter DiskSpd keeps (2^64)"),
    ("x" * 40, f"IOPS is {'x' * 30!r}, not a number"),
])
def test_what_is_not_a_number(text: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        number(text, "IOPS")
    assert caught.value.message == message


def test_counts() -> None:
    assert count("42", "n") == 42 and count(" 7 ", "n") == 7 and count("1e3", "n") == 1000
    assert count(str(2**64), "n") == 2**64
    assert count("12345678901234567890", "n") == 12345678901234567890  # exactly: not through a float
    assert digits("123") and not digits("²") and not digits("1.0") and not digits("")
    for text, message in ((str(2**64 + 1), f"n is {str(2**64 + 1)}..., larger than any counter DiskSpd keeps (2^64)"),
                          ("1.5", "n is 1.5, not a whole number"), ("x", "n is 'x', not a number")):
        with pytest.raises(ParseError) as caught:
            count(text, "n")
        assert caught.value.message == message


def test_milliseconds_and_percentile_keys() -> None:
    assert ms_to_us(0.123) == 123.0 and ms_to_us(1.0005) == 1000.5 and ms_to_us(2.4749999) == 2475.0
    assert percentile_key("50") == "p50" and percentile_key(99.9) == "p99.9" and percentile_key("99.99") == "p99.99"
    assert percentile_key("99.999") == "p99.999" and percentile_key("99.9999") == "p99.9999"
    # pkey keeps 6 significant digits: 99.99999 would read p100; DiskSpd's labels keep theirs
    assert percentile_key("99.99999") == "p99.99999" and percentile_key("99.9999999") == "p99.9999999"
    assert percentile_key("0") == "p0" and percentile_key("100") == "p100"


def test_rate_bounds() -> None:
    # 1000 I/Os over a time printed as 10.00 s (so 9.995 .. 10.005 s), the rate printed to 0.01:
    # 1000 / 10.005 - 0.005 .. 1000 / 9.995 + 0.005
    low, high = rate_bounds(1000, 10.0, 0.01, 0.01)
    assert low == pytest.approx(1000 / 10.005 - 0.005) and high == pytest.approx(1000 / 9.995 + 0.005)
    assert rate_bounds(1000, 0.004, 0.01, 0.01)[1] == math.inf  # a time this short could be almost zero
    assert rate_bounds(1000, 0.005, 0.01, 0.01)[1] == math.inf
    assert rate_bounds(1000, 10.0, 0.0, 0.0) == (100.0, 100.0)


def test_pooled_spread_as_diskspd_computes_it() -> None:
    # two parts of 10 samples, means 1 and 3, stdev 0: mean 2, population variance (10 x 1 + 10 x 1) / 20 = 1
    assert pooled([(10, 1.0, 0.0), (10, 3.0, 0.0)]) == (2.0, 1.0)
    # with their own spread: (10 x (1 + 1) + 30 x (4 + 0.25)) / 40 = 3.6875; mean (10 + 30 x 2.5) / 40 = 2.125
    mean, sd = pooled([(10, 0.625, 1.0), (30, 2.625, 2.0)])
    assert mean == pytest.approx(2.125) and sd == pytest.approx(math.sqrt((10 * (1 + 1.5**2) + 30 * (4 + 0.5**2)) / 40))
    assert pooled([]) == (0.0, 0.0) and pooled([(0, 5.0, 1.0)]) == (0.0, 0.0)
    assert pooled([(3, 2.0, 0.0)]) == (2.0, 0.0)


def test_an_empty_file() -> None:
    with pytest.raises(ParseError) as caught:
        parse_diskspd("\ufeff \n", source="out.txt")
    assert caught.value.message == ("out.txt: the file is empty (DiskSpd writes an empty file when it fails: see its "
                                    "stderr)")


# --- text output, edited one line at a time ------------------------------------------------------
VC_TEXT = FIXTURES / "windows" / "text" / "virtualclient_Results_DiskSpd_Text_v2.0.21a_L_D.txt"
ROW = "     0 |        43524096 |        10626 |       1.38 |     {iops} |    2.179 |      38.48 |     1.037 | {file}"
TOTAL = "total:          43524096 |        10626 |       1.38 |     {iops} |    2.179 |      38.48 |     1.037"
HEAD = "thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s |  AvgLat  | {a} | {b} |  file"


def edited(line: int, new: str | None) -> str:
    """The VirtualClient text output (DiskSpd 2.0.21a, -L -D, 30.01 s) with one line replaced or removed."""
    lines = read(VC_TEXT).split("\n")
    if new is None:
        del lines[line - 1]
    else:
        lines[line - 1] = new
    return "\n".join(lines)


@pytest.mark.parametrize(("line", "new", "message"), [
    (62, ROW.format(iops="354.0", file="diskspd.dat (1024MiB)"),
     "'Write IO' section: '354.0' is not a DiskSpd iops figure (truncated?)"),
    (62, ROW.format(iops="354.05", file="").rstrip(" |"), "'Write IO' section: a row has 8 columns, the header 9 "
     "(truncated?)"),
    (46, HEAD.format(a="IopsSD", b="LatStdDev"), "'Total IO' section: unknown column 'IopsSD'"),
    (46, HEAD.format(a="IopsStdDev", b="LatStdDev").replace("thread |       bytes", "bytes |       thread"),
     "'Total IO' section: the header does not start with 'thread' and end with 'file'"),
    (46, HEAD.format(a="IopsStdDev", b="file").removesuffix("|  file") + "| LatStdDev",
     "'Total IO' section: the header does not start with 'thread' and end with 'file'"),
    (46, "", "'Total IO' section has no column header (truncated?)"),
    (55, "", "'Read IO' section ends before its total row (truncated?)"),
    (64, "totals:" + TOTAL.format(iops="354.05")[6:], "'Write IO' section has no total row (truncated?)"),
    (64, TOTAL.format(iops="354.0"), "'Write IO' section total row: '354.0' is not a DiskSpd iops figure (truncated?)"),
    (50, "total:         146169856 |        35686 |       4.64 |    1189.03 |    0.840 |     129.18 |     1.051 | x",
     "'Total IO' section total row: '1.051 | x' is not a DiskSpd lat_stddev figure (truncated?)"),
    (48, "     0 |       146169856 |        35686 |       4.64 |    1189.03 |    0.840 |     129.18 |     1.05 | d",
     "'Total IO' section: '1.05' is not a DiskSpd lat_stddev figure (truncated?)"),
    (62, ROW.format(iops="354.05", file="d").replace("10626", "9" * 40),
     f"'Write IO' section: ios is {'9' * 30}..., larger than any counter DiskSpd keeps (2^64)"),
    # 10626 I/Os over 30.005 .. 30.015 s, printed to 0.01: 354.02 .. 354.15 IOPS
    (62, ROW.format(iops="364.05", file="d"),
     "'Write IO' section, thread 0: iops 364.05 is not its count over the test time (354.02..354.15)"),
    (64, TOTAL.format(iops="364.05"),
     "'Write IO' section, thread total: iops 364.05 is not its count over the test time (354.02..354.15)"),
    (62, ROW.format(iops="354.05", file="d").replace("1.38", "1.48"),
     "'Write IO' section, thread 0: mibps 1.48 is not its count over the test time (1.38..1.39)"),
    (62, ROW.format(iops="354.05", file="d").replace("10626", "10627"),
     "thread 0 of the 'Total IO' section: ios 35686 is not the read and write rows' 25060 + 10627"),
    (57, "total:         102645761 |        25060 |       3.26 |     834.98 |    0.272 |      94.24 |     0.185",
     "the 'Total IO' total row: bytes 146169856 is not the read and write rows' 102645761 + 43524096"),
    (48, "     0 |       146169856 |        35686 |       4.64 |    1189.03 |    0.840 |     129.18 |     1.051 | d\n"
     "     1 |       1 |        1 |       0.00 |    0.03 |    0.840 |     129.18 |     1.051 | d",
     "the 'Total IO', 'Read IO' and 'Write IO' sections have different numbers of rows"),
    (77, "   99th |      0.877 |      6.107", "latency distribution row '99th |      0.877 |      6.107' is incomplete "
     "(truncated?)"),
    (77, "   99th |      0.877 |      6.107 |      4.71", "latency distribution row '99th |      0.877 |      6.107 |"
     "      4.71' is incomplete (truncated?)"),
    (73, "   50th |      0.100 |      1.833 |      0.297",
     "latency distribution row '50th': 0.100 ms is below the row above (DiskSpd's percentiles rise)"),
    (73, "   50th |      0.232 |      1.833 |      0.2x7", "latency distribution row '50th |      0.232 |      1.833 |"
     "      0.2x7' is incomplete (truncated?)"),
    (71, "   25th |      0.036 |      1.209 |      0.036", "a latency distribution table ends before its 'max' row "
     "(truncated?)"),
    (69, "  %ile |  Read (ms) | Write (ms) | Total (ms)",
     "latency was measured but the latency distribution table is missing (truncated?)"),
    (32, "actual test time:       30.0s", "no 'actual test time' line (truncated?)"),
    (32, "actual test time:       0.00s", "the test time is 0 s: nothing was measured"),
    (45, "Total  IO", "no 'Total IO' section (truncated?)"),
])
def test_an_edited_text_output_says_what_is_wrong(line: int, new: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_diskspd(edited(line, new), source="t.txt")
    assert caught.value.message == f"t.txt: {message}"


def test_edits_within_the_rounding_are_kept_with_a_note() -> None:
    # 355.05 IOPS: 0.25% above the 354.15 the count allows, within the 1% an edited file may be off
    out = parse_diskspd(edited(62, ROW.format(iops="355.05", file="diskspd.dat (1024MiB)")), source="t.txt")
    (g,) = out.groups
    assert g.notes[0] == ("DiskSpd's printed rates differ from its I/O counts over its printed test time by more than "
                          "their rounding (up to 0.25%): the file may have been edited; the printed IOPS are kept")
    assert [d.iops for d in g.directions] == [834.98, 354.05, 1189.03]  # the printed totals
    na = parse_diskspd(edited(48, "     0 |       146169856 |        35686 |       4.64 |    1189.03 |    0.840 |"
                              "     129.18 |     N/A | diskspd.dat (1024MiB)"), source="t.txt")
    assert na.groups[0].directions[-1].clat is not None


def test_what_the_text_header_tells() -> None:
    facts = parse_diskspd(read(VC_TEXT), source="t.txt").facts
    assert (facts["layout"], facts["measure_latency"], facts["cpu_usage_percent"], facts["thread_count"]) == (
        "windows 2.0/2.1", True, 0.82, 1)  # the CPU table's 'avg.' row printed 0.82%
    assert (facts["block_sizes"], facts["test_time_seconds"], facts["format"]) == ({"diskspd.dat": 4096}, 30.01,
                                                                                 "text")
    layouts = {p.name: parse_diskspd(read(p), source="f").facts["layout"] for p in TEXT_FILES if p.suffix != ".md"}
    assert layouts == {
        "diskspd-for-linux_randrw70-30_4K_t2_o4_L_D_Sh.txt": "diskspd-for-linux",
        "diskspd-for-linux_seqread_64K_t1_o2_Sd_noL.txt": "diskspd-for-linux",
        "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-MultiNumaMultiGroup_TRIMMED.txt": "windows 2.2",
        "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-SingleGroup.txt": "windows 2.2",
        "virtualclient_DiskSpdExample-WriteOnly-v2.2.0_160threads_TRIMMED.txt": "windows 2.1",
        "virtualclient_Results_DiskSpd_Text_v2.0.21a_L_D.txt": "windows 2.0/2.1"}
    no_lat = [p for p in TEXT_FILES if "noL" in p.name][0]
    assert "measure_latency" not in parse_diskspd(read(no_lat), source="f").facts
    assert parse_diskspd(edited(43, "avg.|   0.82 %|   0.10%|    0.72%|  99.18%"), source="t").facts[
        "cpu_usage_percent"] == 0.10  # the first figure printed as DiskSpd prints one
    assert parse_diskspd(edited(43, " total|   0.82%|   0.10%|    0.72%|  99.18%"), source="t").facts[
        "cpu_usage_percent"] is None
    sized = edited(17, "                block size: 4KiB")
    assert parse_diskspd(sized, source="t").facts["block_sizes"] == {"diskspd.dat": 4096}
    assert parse_diskspd(edited(17, "                block size: 2MiB"), source="t").facts["block_sizes"] == {
        "diskspd.dat": 2 * 1024 * 1024}
    assert parse_diskspd(sized, source="t").facts["layout"] == "windows 2.1"
    with pytest.raises(ParseError) as caught:
        parse_diskspd(edited(17, "                block size: 9999999999TiB"), source="t")  # 1.1e22 bytes
    assert caught.value.message == "t: 'block size: 9999999999' is larger than any DiskSpd block"
    with pytest.raises(ParseError) as caught:
        parse_diskspd(edited(17, "                block size: 99999999999999999999"), source="t")
    assert caught.value.message == ("t: 'block size' is 99999999999999999999..., larger than any counter DiskSpd "
                                    "keeps (2^64)")


# --- XML output, edited one element at a time ----------------------------------------------------
VC_XML = FIXTURES / "windows" / "xml" / "virtualclient_Results_DiskSpd_Xml_v2.0.21a_L_D.xml"
TEST_TIME = "<TestTimeSeconds>120.01</TestTimeSeconds>"


@pytest.mark.parametrize(("old", "new", "message"), [
    (TEST_TIME, "<TestTimeSeconds>0</TestTimeSeconds>", "<TimeSpan> 1: <TestTimeSeconds> is 0: no measured time"),
    (TEST_TIME, "<TestTimeSeconds>0.005</TestTimeSeconds>",
     "<TimeSpan> 1: <TestTimeSeconds> is 0.005, less than DiskSpd's 0.01 s resolution"),
    (TEST_TIME, "", "<TimeSpan> 1: <TestTimeSeconds> is missing"),
    (TEST_TIME, "<TestTimeSeconds>abc</TestTimeSeconds>", "<TimeSpan> 1: <TestTimeSeconds> is 'abc', not a number"),
    (TEST_TIME, TEST_TIME + "<Error>out of memory</Error>", "DiskSpd reported: out of memory"),
    ("<ReadCount>37162</ReadCount>", "<ReadCount>0</ReadCount>",
     "<TimeSpan> 1 thread 0 <Target>: <ReadCount> is 0 but <ReadBytes> is 152215552"),
    ("<IOCount>52915</IOCount>", "<IOCount>52916</IOCount>",
     "<TimeSpan> 1 thread 0 <Target>: <IOCount> is 52916, not the sum of its read and write figures (52915)"),
    ("<BytesCount>216739840</BytesCount>", "<BytesCount>1</BytesCount>",
     "<TimeSpan> 1 thread 0 <Target>: <BytesCount> is 1, not the sum of its read and write figures (216739840)"),
    ("<ReadCount>37162</ReadCount>", "<ReadCount>x</ReadCount>",
     "<TimeSpan> 1 thread 0 <Target>: <ReadCount> is 'x', not a number"),
    ("<ReadCount>37162</ReadCount>", "", "<TimeSpan> 1 thread 0 <Target>: <ReadCount> is missing"),
    ("<Path>diskspd.test</Path>\n                <BytesCount>", "<BytesCount>",
     "<TimeSpan> 1 thread 0 <Target>: <Path> is missing"),
    ("<Id>0</Id>\n            <Target>", "<Target>", "<TimeSpan> 1 <Thread>: <Id> is missing"),
    ("<Percentile>0</Percentile>", "", "<TimeSpan> 1 <Latency>: a <Bucket> has no <Percentile>"),
    ("<Percentile>0</Percentile>", "<Percentile>101</Percentile>",
     "<TimeSpan> 1 <Latency> <Bucket>: <Percentile> is 101, above 100"),
    ("<Percentile>0</Percentile>", "<Percentile>x</Percentile>",
     "<TimeSpan> 1 <Latency> <Bucket>: <Percentile> is 'x', not a number"),
    ("<ReadMilliseconds>0.045</ReadMilliseconds>", "<ReadMilliseconds>99.045</ReadMilliseconds>",
     "<TimeSpan> 1 <Latency> Read: the latency percentiles fall (99045 µs, then 94 µs)"),
    ("<ReadMilliseconds>0.045</ReadMilliseconds>", "<ReadMilliseconds>x</ReadMilliseconds>",
     "<TimeSpan> 1 <Latency>: <ReadMilliseconds> is 'x', not a number"),
    # the average must lie within the points, each printed to 1 µs: 45 - 1 .. 33846 + 1
    ("<AverageReadMilliseconds>2.477</AverageReadMilliseconds>",
     "<AverageReadMilliseconds>0.043</AverageReadMilliseconds>",
     "<TimeSpan> 1 <Latency> Read: the average latency (43 µs) is outside its minimum and maximum (45..33846 µs)"),
    ("<AverageReadMilliseconds>2.477</AverageReadMilliseconds>",
     "<AverageReadMilliseconds>33.848</AverageReadMilliseconds>",
     "<TimeSpan> 1 <Latency> Read: the average latency (33848 µs) is outside its minimum and maximum (45..33846 µs)"),
    ("<ReadLatencyStdev>2.732</ReadLatencyStdev>", "<ReadLatencyStdev>x</ReadLatencyStdev>",
     "<TimeSpan> 1 <Latency>: <ReadLatencyStdev> is 'x', not a number"),
    ('Read="332"', 'Read="x"', "<Iops> <Bucket> Read is 'x', not a number"),
    ('ReadAvgLatencyMilliseconds="2.378"', 'ReadAvgLatencyMilliseconds="x"',
     "<Iops> <Bucket> ReadAvgLatencyMilliseconds is 'x', not a number"),
    ("<UsagePercent>0.99</UsagePercent>", "<UsagePercent>x</UsagePercent>",
     "<CpuUtilization> <Average> <UsagePercent> is 'x', not a number"),
    ('ActiveProcessors="4"', 'ActiveProcessors="x"',
     "<ProcessorTopology> <Group> ActiveProcessors is 'x', not a number"),
    ("<BlockSize>4096</BlockSize>", "<BlockSize>x</BlockSize>", "<Profile> <Target>: <BlockSize> is 'x', not a number"),
    ("<IoBucketDuration>1000</IoBucketDuration>", "<IoBucketDuration>x</IoBucketDuration>",
     "<Profile>: <IoBucketDuration> is 'x', not a number"),
    ("<Results>", "<!DOCTYPE x><Results>", "DiskSpd XML never has a DOCTYPE or entities; refusing to parse this one"),
    ("<Results>", '<!ENTITY x "y"><Results>',
     "DiskSpd XML never has a DOCTYPE or entities; refusing to parse this one"),
])
def test_an_edited_xml_output_says_what_is_wrong(old: str, new: str, message: str) -> None:
    text = read(VC_XML)
    assert old in text
    with pytest.raises(ParseError) as caught:
        parse_diskspd(text.replace(old, new, 1), source="r.xml")
    assert caught.value.message == f"r.xml: {message}"


def test_the_edges_of_the_xml_checks() -> None:
    text = read(VC_XML)
    # exactly DiskSpd's resolution is a measured time
    (g,) = parse_diskspd(text.replace(TEST_TIME, "<TestTimeSeconds>0.01</TestTimeSeconds>", 1), source="r").groups
    assert g.directions[0].iops == 37162 / 0.01
    # the average 1 µs outside the points is DiskSpd's rounding: accepted
    for avg in ("0.044", "33.847"):
        parse_diskspd(text.replace("<AverageReadMilliseconds>2.477", f"<AverageReadMilliseconds>{avg}", 1), source="r")
    bare = text.replace("<Path>diskspd.test</Path>", "<Path>R&D.test</Path>")  # DiskSpd does not escape paths
    assert parse_diskspd(bare, source="r").groups[0].job_names == ["R&D.test"]
    assert parse_diskspd(text.replace("<Path>diskspd.test</Path>", "<Path>a&amp;b&#38;c</Path>"),
                         source="r").groups[0].job_names == ["a&b&c"]
    with pytest.raises(ParseError) as caught:
        parse_diskspd(text.replace("<Results>", "<Profile>", 1).replace("</Results>", "</Profile>"), source="r")
    assert caught.value.message == ("r: the root element is <Profile>, not DiskSpd's <Results> (a DiskSpd profile, as "
                                    "-Rp prints it: it holds no results)")
    with pytest.raises(ParseError) as caught:
        parse_diskspd('<?xml version="1.0"?>\n<Results><System/></Results>', source="r")
    assert caught.value.message == "r: no <TimeSpan> results in the DiskSpd XML"
    with pytest.raises(ParseError) as caught:
        parse_diskspd("<Results><TimeSpan><TestTimeSeconds>1</TestTimeSeconds></TimeSpan></Results>", source="r")
    assert caught.value.message == "r: <TimeSpan> 1: no <Thread>/<Target> counters"
    with pytest.raises(ParseError) as caught:
        parse_diskspd(text[: len(text) // 2], source="r")
    assert caught.value.message.startswith("r: not well-formed DiskSpd XML (") and caught.value.message.endswith(
        "); the file may be truncated")


def test_series_and_facts_of_the_xml() -> None:
    """The first two seconds of thread 0: 332 reads at 2.378 ms mean, 119 writes at 1.761 ms; then
    262 at 2.994 and 107 at 1.815. Their total is the I/O-weighted mean: (332 x 2378 + 119 x 1761) /
    451 = 2215.2 µs, (262 x 2994 + 107 x 1815) / 369 = 2652.122 µs."""
    out = parse_diskspd(read(VC_XML), source="r.xml")
    read_, write, total = out.groups[0].directions
    assert read_.series is not None and write.series is not None and total.series is not None
    assert (read_.series.iops[:2], read_.series.lat_mean_us and read_.series.lat_mean_us[:2]) == (
        [332.0, 262.0], [2378.0, 2994.0])
    assert (write.series.iops[:2], write.series.lat_mean_us and write.series.lat_mean_us[:2]) == (
        [119.0, 107.0], [1761.0, 1815.0])
    assert total.series.iops[:2] == [451.0, 369.0] and total.series.lat_mean_us is not None
    assert total.series.lat_mean_us[:2] == [2215.2, 2652.122]
    assert total.series.interval_s == 1.0 and total.series.bw_bytes_per_s is not None
    assert total.series.bw_bytes_per_s[:2] == [451.0 * 4096, 369.0 * 4096]
    assert (read_.clat and read_.clat.min, read_.clat and read_.clat.max) == (45.0, 33846.0)
    facts = {k: v for k, v in out.facts.items() if k != "profile_xml"}
    assert facts == {
        "format": "xml", "computer_name": "QuickTest2", "version": "2.0.21a", "version_date": "2018/9/21",
        "run_time": "2021/04/14 23:25:42 UTC", "power_scheme": None, "processors": 4, "processor_groups": 1,
        "heterogeneous_cores": None, "command_line": None, "test_time_seconds": [120.01], "targets": ["diskspd.test"],
        "block_sizes": {"diskspd.test": 4096}, "duration_s": 120, "warmup_s": 15, "cooldown_s": 0, "thread_count": 0,
        "rand_seed": 0, "measure_latency": True, "iops_interval_ms": 1000, "cpu_usage_percent": 0.99,
        "source_file": "r.xml"}
    assert out.facts["profile_xml"].startswith("<Profile>")
    slow = parse_diskspd(read(VC_XML).replace("<IoBucketDuration>1000", "<IoBucketDuration>500", 1), source="r")
    assert slow.groups[0].directions[0].series is not None and slow.groups[0].directions[0].series.interval_s == 0.5
    assert slow.facts["iops_interval_ms"] == 500
    off = parse_diskspd(read(VC_XML).replace("<CalculateIopsStdDev>true", "<CalculateIopsStdDev>false", 1),
                        source="r")
    assert off.facts["iops_interval_ms"] is None
    upper = parse_diskspd(read(VC_XML).replace("<MeasureLatency>true", "<MeasureLatency>TRUE", 1), source="r")
    assert upper.facts["measure_latency"] is True


# --- per-second buckets and per-target groups (DiskSpd 2.2 layout, helpers.xml_2_2) --------------
def test_buckets_without_latency_have_rates_only() -> None:
    rows = [Counters(0, "x.dat", 30, 10, buckets=[(2, 1), (1, 0), (0, 0)])]
    (g,) = parse_diskspd(xml_2_2(rows, latency=False, seconds=3.0), source="s").groups
    for d in g.directions:
        assert d.series is not None and d.series.lat_mean_us is None, d.direction
    assert [d.series.iops for d in g.directions if d.series] == [[2.0, 1.0, 0.0], [1.0, 0.0, 0.0], [3.0, 1.0, 0.0]]


def test_buckets_with_latency() -> None:
    """helpers.xml_2_2 writes each bucket's mean (read 0.5 ms, or the target's, write 1.0 ms), min (half)
    and max (3x). On x.dat, thread 0 does 1 read and 1 write in second 1, 3 reads in second 2,
    nothing in second 3; thread 1 one read at 0.7 ms in second 1. Per target, the threads' rates add
    and their means weigh by I/Os: read (500 + 700) / 2 = 600 µs; total (2 x 750 + 700) / 3 = 733.3 µs."""
    rows = [Counters(0, "x.dat", 40, 10, buckets=[(1, 1), (3, 0), (0, 0)]),
            Counters(1, "x.dat", 40, 10, read_ms=(0.7, 0.1), buckets=[(1, 0)]),
            Counters(0, "y.dat", 30, 0, buckets=[(1, 0)] * 3)]
    x, _ = parse_diskspd(xml_2_2(rows, seconds=3.0), source="s", per_target=True).groups
    r, w, t = x.directions
    assert r.series is not None and w.series is not None and t.series is not None
    assert (r.series.iops, r.series.lat_mean_us) == ([2.0, 3.0, 0.0], [600.0, 500.0, None])
    assert (w.series.iops, w.series.lat_mean_us) == ([1.0, 0.0, 0.0], [1000.0, None, None])
    assert (t.series.iops, t.series.lat_mean_us) == ([3.0, 3.0, 0.0], [pytest.approx(733.333), 500.0, None])
    # the target's min and max latency come from the buckets: 250 µs (half of 0.5 ms) .. 2100 (3 x 0.7 ms)
    assert r.clat is not None and (r.clat.min, r.clat.max) == (250.0, 2100.0)
    assert w.clat is not None and (w.clat.min, w.clat.max) == (500.0, 3000.0)


def test_a_target_without_io_in_a_multi_target_run() -> None:
    rows = [Counters(0, "x.dat", 100, 50, buckets=[(10, 5)] * 10), Counters(0, "y.dat", 0, 0)]
    x, y = parse_diskspd(xml_2_2(rows), source="s", per_target=True).groups
    assert [d.direction for d in x.directions] == ["read", "write", "total"]
    assert [d.clat is not None for d in x.directions] == [True, True, False]  # no per-target total average
    assert (y.directions, y.errors) == ([], ["DiskSpd completed no I/O in the measured time"])
