"""Fuzzing the DiskSpd readers: whatever the input, a result with finite numbers or a one-line ParseError.

DiskSpd XML (the real files, with their per-second buckets cut to a few to keep examples small,
and 2.2 documents written by helpers.xml_2_2) has element texts and attributes replaced by NaN,
infinities, 1e999, negative, 40-digit, fractional and non-numeric values, and elements dropped,
doubled or nested in another; DiskSpd text has its figures replaced the same way and lines
dropped or doubled. Each mutated file goes through ``parse_diskspd`` and through ``diskbench
import`` in this process (2,000 examples, sometimes as UTF-16 with a byte-order mark, as
PowerShell's ``>`` writes it): exit 0 or 2, never 70, no traceback, strict JSON out.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diskbench.engines.diskspd import parse_diskspd
from diskbench.engines.diskspd.xml_result import document
from diskbench.errors import ParseError

from ..fuzzing import assert_finite, check_import
from .helpers import TEXT_FILES, XML_FILES, Counters, read, xml_2_2

FIGURES = st.sampled_from(["NaN", "nan", "inf", "-inf", "Infinity", "1e999", "-1e999", "-100", "-0.5", "0", "0.00",
                           "1234567890" * 4, "9" * 400 + ".00", "18446744073709551616", "18446744073709551615",
                           "1.5", "0.001", "1e-300", "²", "٣", "x", "", "1e10", "N/A", "12.345", "1,5", "0x10"])
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


KEPT_PERCENTILES = {"0", "25", "50", "90", "99", "99.9", "100"}


def _small_xml(text: str) -> str:
    """An XML result with its per-second buckets cut to the first three and its latency points to
    a few (a few KB instead of 200: the same elements, in fewer copies). Read as the parser reads it
    (``document``: DiskSpd 2.2's unescaped power scheme name repaired)."""
    root = document(text)
    for iops in root.iter("Iops"):
        for bucket in iops.findall("Bucket")[3:]:
            iops.remove(bucket)
    for latency in root.iter("Latency"):
        for bucket in latency.findall("Bucket"):
            if bucket.findtext("Percentile") not in KEPT_PERCENTILES:
                latency.remove(bucket)
    return ET.tostring(root, encoding="unicode")


XML_DOCS = [_small_xml(text) for text in [*(read(p) for p in XML_FILES),
    xml_2_2([Counters(0, r"C:\a.dat", 1000, 400, buckets=[(500, 200), (500, 200)]),
             Counters(1, r"D:\b.dat", 300, 0, block=65536, buckets=[(150, 0), (150, 0)])], seconds=2.0),
    xml_2_2([Counters(0, r"C:\a.dat", 0, 900)], latency=False, iops=False),
]]
TEXT_DOCS = [read(p) for p in TEXT_FILES]


def _parse_or_error(text: str, source: str) -> None:
    try:
        groups = parse_diskspd(text, source=source).groups
    except ParseError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"{source}: ")
        return
    assert_finite(groups)


def _mutate_xml(data: st.DataObject, root: ET.Element) -> None:
    parents = {child: p for p in root.iter() for child in p}
    el = data.draw(st.sampled_from([root, *parents]))
    kind = data.draw(st.sampled_from(["text", "text", "attribute", "drop", "double", "nest"]))
    parent = parents.get(el)
    if kind == "text" or (kind == "attribute" and not el.attrib):
        el.text = data.draw(FIGURES)
    elif kind == "attribute":
        el.set(data.draw(st.sampled_from(sorted(el.attrib))), data.draw(FIGURES))
    elif parent is None:
        return
    elif kind == "drop":
        parent.remove(el)
    elif kind == "double":
        parent.insert(list(parent).index(el), ET.fromstring(ET.tostring(el)))
    else:
        wrapper = ET.Element(data.draw(st.sampled_from(["Results", "TimeSpan", "Target", "Bucket", "x"])))
        parent.insert(list(parent).index(el), wrapper)
        parent.remove(el)
        wrapper.append(el)


def _mutate_text(data: st.DataObject, text: str) -> str:
    lines = text.split("\n")
    numbered = [i for i, ln in enumerate(lines) if _NUMBER.search(ln)]
    i = data.draw(st.sampled_from(numbered))
    kind = data.draw(st.sampled_from(["figure", "figure", "figure", "drop", "double"]))
    if kind == "figure":
        figures = list(_NUMBER.finditer(lines[i]))
        m = figures[data.draw(st.integers(0, len(figures) - 1))]
        lines[i] = lines[i][:m.start()] + data.draw(FIGURES) + lines[i][m.end():]
    elif kind == "drop":
        del lines[i]
    else:
        lines.insert(i, lines[i])
    return "\n".join(lines)


def _write(data: st.DataObject, path: Path, text: str) -> None:
    """As DiskSpd's output reaches users: UTF-8, or UTF-16 with a BOM and CRLF (PowerShell's ``>``)."""
    if data.draw(st.integers(0, 7)) == 0:
        path.write_bytes(text.replace("\n", "\r\n").encode("utf-16"))
    else:
        path.write_text(text)


@settings(max_examples=1000, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_xml_through_the_parser_and_the_cli(data: st.DataObject, tmp_path: Path) -> None:
    root = ET.fromstring(data.draw(st.sampled_from(XML_DOCS)))
    for _ in range(data.draw(st.integers(1, 3))):
        _mutate_xml(data, root)
    text = ET.tostring(root, encoding="unicode")
    _parse_or_error(text, "fuzz.xml")
    path = tmp_path / "fuzz.xml"
    _write(data, path, text)
    check_import(path)


@settings(max_examples=1000, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_text_through_the_parser_and_the_cli(data: st.DataObject, tmp_path: Path) -> None:
    text = data.draw(st.sampled_from(TEXT_DOCS))
    for _ in range(data.draw(st.integers(1, 3))):
        text = _mutate_text(data, text)
    _parse_or_error(text, "fuzz.txt")
    path = tmp_path / "fuzz.txt"
    _write(data, path, text)
    check_import(path)
