"""Broken DiskSpd files: every problem is one line naming the file, never a traceback or fio's message."""

from __future__ import annotations

from pathlib import Path

import pytest

from diskbench.engines.diskspd import parse_diskspd, sniff
from diskbench.errors import ParseError

from .helpers import ALL_FILES, FIXTURES, REPO, TEXT_FILES, read

FIO_FIXTURES = REPO / "tests" / "fixtures" / "fio"


def _offsets(n: int) -> list[int]:
    """Cuts spread over the file, plus the last characters (inside the final figure)."""
    spread = [n * k // 40 for k in range(1, 40)]
    return sorted({*spread, *range(max(n - 12, 1), n)})


def _error(text: str, source: str) -> str:
    with pytest.raises(ParseError) as info:
        parse_diskspd(text, source=source)
    message = str(info.value)
    assert message.startswith(f"{source}: ") and "\n" not in message and "fio" not in message
    return message


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_truncated_files_fail_or_keep_only_complete_runs(path: Path) -> None:
    text = read(path)
    full = parse_diskspd(text, source="f").groups
    for cut in _offsets(len(text)):
        part = text[:cut]
        if cut >= 200:
            assert sniff(part), cut
        try:
            groups = parse_diskspd(part, source="cut.txt").groups
        except ParseError as exc:
            assert str(exc).startswith("cut.txt: ") and "\n" not in str(exc)
            continue
        # What parses must be whole runs: the same figures as the complete file's first runs.
        assert groups == full[: len(groups)], cut
        if len(full) == 1:
            assert not text[cut:].strip(), f"a cut at {cut} of {len(text)} went unnoticed"


def test_wrong_root_element() -> None:
    assert "root element is <Foo>" in _error("<Foo><Bar/></Foo>", "x.xml")
    profile = "<Profile>\n  <TimeSpans>\n  </TimeSpans>\n</Profile>\n"
    assert "a DiskSpd profile, as -Rp prints it" in _error(profile, "p.xml")
    assert not sniff("<Foo/>")


def test_empty_and_non_diskspd_files() -> None:
    assert "empty" in _error("", "e.xml")
    assert "empty" in _error("\n \r\n", "e.xml")
    assert "no DiskSpd 'Results for timespan' section" in _error("hello\nworld\n", "h.txt")


@pytest.mark.parametrize("title", ["Total IO", "Read IO", "Write IO"])
def test_text_with_a_missing_section(title: str) -> None:
    text = read(FIXTURES / "windows" / "text" / "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-SingleGroup.txt")
    broken = text.replace(f"\n{title}\n", "\nSomething else\n", 1)
    assert f"no '{title}' section" in _error(broken, "s.txt")


def test_text_without_its_latency_chart() -> None:
    text = read(FIXTURES / "windows" / "text" / "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-SingleGroup.txt")
    broken = text[: text.index("Total latency distribution:")]
    assert "latency distribution table is missing" in _error(broken, "s.txt")


def test_text_with_input_parameters_only() -> None:
    text = read(FIXTURES / "windows" / "text" / "virtualclient_DiskSpdExample-WriteOnly-v2.2.0-SingleGroup.txt")
    assert "no 'Results for' section" in _error(text[: text.index("Results for")], "s.txt")


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("<ReadCount>37162</ReadCount>", "<ReadCount>many</ReadCount>", "<ReadCount> is 'many', not a number"),
    ("<TestTimeSeconds>120.01</TestTimeSeconds>", "", "<TestTimeSeconds> is missing"),
    ("<TestTimeSeconds>120.01</TestTimeSeconds>", "<TestTimeSeconds>0.00</TestTimeSeconds>", "no measured time"),
    ("<Results>", "<!DOCTYPE r [<!ENTITY a 'b'>]><Results>", "never has a DOCTYPE"),
    ("</Results>", "</Result>", "not well-formed DiskSpd XML"),
    ("<Path>diskspd.test</Path>\n                <BytesCount>", "<BytesCount>", "<Path> is missing"),
])
def test_broken_xml(old: str, new: str, expected: str) -> None:
    text = read(FIXTURES / "windows" / "xml" / "virtualclient_Results_DiskSpd_Xml_v2.0.21a_L_D.xml")
    assert old in text
    assert expected in _error(text.replace(old, new, 1), "b.xml")


def test_xml_without_results_timespan() -> None:
    text = read(FIXTURES / "windows" / "xml" / "perfkitbenchmarker_diskspd_result_v2.0.21a_noL.xml")
    start, end = text.index("   <TimeSpan>\n      <TestTimeSeconds>"), text.index("</Results>")
    assert "no <TimeSpan> results" in _error(text[:start] + text[end:], "n.xml")


def test_fio_outputs_are_not_diskspd() -> None:
    fio = [p for p in FIO_FIXTURES.rglob("*") if p.is_file()]
    assert fio
    for path in fio:
        assert not sniff(path.read_bytes().decode("utf-8", errors="replace")), path.name


def test_every_diskspd_fixture_is_sniffed() -> None:
    for path in [*ALL_FILES, *TEXT_FILES]:
        assert sniff(read(path)), path.name
