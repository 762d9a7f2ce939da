"""Inputs that must not fool the parser: each case is an error naming the file and what is wrong,
or a result with a note where the result is still right."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from diskbench.engines.fio.parse import parse_fio_output
from diskbench.errors import ParseError

from ...conftest import diskbench

BASE = "randread-4k-numjobs4-group-reporting.jsonplus.json"


def _doc(fio_fixtures: Path, name: str = BASE) -> dict[str, Any]:
    text = (fio_fixtures / name).read_text()
    return json.loads(text[text.index("{"):text.rindex("}") + 1])  # type: ignore[no-any-return]


def _error(text: str) -> str:
    with pytest.raises(ParseError) as info:
        parse_fio_output(text, source="x.json")
    message = str(info.value)
    assert message.startswith("x.json: ") and "\n" not in message
    return message


def test_truncated_final_document_of_a_status_interval_run_is_an_error(fio_fixtures: Path) -> None:
    doc = _doc(fio_fixtures)
    interim, final = copy.deepcopy(doc), json.dumps(doc, indent=2)
    interim["jobs"][0]["read"]["total_ios"] -= 1000
    text = json.dumps(interim, indent=2) + "\n" + final[: len(final) // 2]
    assert "the last fio JSON document (line" in _error(text) and "interim status dumps" in _error(text)
    assert "cut off" in _error(final[: len(final) // 3])  # a single document cut short


@pytest.mark.parametrize(("where", "value", "expected"), [
    (("read", "iops"), float("nan"), "contains NaN"),
    (("read", "iops"), float("inf"), "contains Infinity"),
    (("read", "iops"), -5.0, "read.iops is negative"),
    (("read", "total_ios"), "x", "read.total_ios is str"),
    (("read", "runtime"), 10**30, "larger than any counter fio keeps"),
    (("read", "clat_ns"), [1, 2], "read.clat_ns is list, not an object"),
    (("read",), "x", "read is str, not an object"),
])
def test_values_fio_never_writes_are_errors(fio_fixtures: Path, where: tuple[str, ...], value: object,
                                            expected: str) -> None:
    doc = _doc(fio_fixtures)
    node = doc["jobs"][0]
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    assert expected in _error(json.dumps(doc))


def test_negative_bins_are_errors_not_silently_dropped_percentiles(fio_fixtures: Path) -> None:
    doc = _doc(fio_fixtures)
    bins = doc["jobs"][0]["read"]["clat_ns"]["bins"]
    key = next(iter(bins))
    bins[key] = -1
    assert "bins." in _error(json.dumps(doc)) and "is negative" in _error(json.dumps(doc))
    doc = _doc(fio_fixtures)
    doc["jobs"][0]["read"]["clat_ns"]["bins"]["-7"] = 3
    assert "bins has the key '-7'" in _error(json.dumps(doc))


def test_deep_nesting_is_an_error() -> None:
    assert "nested too deeply" in _error('{"fio version": "fio-3.33", "jobs": ' + "[" * 100000 + "]" * 100000 + "}")


def test_diskspd_output_is_named_as_such(tmp_path: Path) -> None:
    xml = '<Results><System><ComputerName>w</ComputerName></System><Profile><Progress>0</Progress></Profile></Results>'
    assert "this is DiskSpd output, not fio's" in _error(xml)
    text = "Command Line: diskspd -c1G -d10 -r -w0 -t1 -o8 -b4K testfile.dat\n\nInput parameters:\n"
    assert "this is DiskSpd output" in _error(text)


def test_empty_bins_keep_fios_own_percentiles(fio_fixtures: Path) -> None:
    doc = _doc(fio_fixtures)
    clat = doc["jobs"][0]["read"]["clat_ns"]
    clat["bins"] = {}
    (g,) = parse_fio_output(json.dumps(doc))
    got = g.directions[0].clat
    assert got is not None and got.percentiles["p99"] == clat["percentile"]["99.000000"] / 1000


def test_no_percentiles_gives_a_note(fio_fixtures: Path) -> None:
    doc = _doc(fio_fixtures)
    clat = doc["jobs"][0]["read"]["clat_ns"]
    del clat["percentile"], clat["bins"]
    (g,) = parse_fio_output(json.dumps(doc))
    assert g.directions[0].clat is not None and g.directions[0].clat.percentiles == {}
    assert any("clat_percentiles=0" in n for n in g.notes)


def test_trimwrite_gets_a_total(fio_fixtures: Path) -> None:
    doc = _doc(fio_fixtures)
    job = doc["jobs"][0]
    job["trim"], job["write"] = copy.deepcopy(job["read"]), copy.deepcopy(job["read"])
    job["read"] = {"total_ios": 0, "io_bytes": 0}
    (g,) = parse_fio_output(json.dumps(doc))
    assert [d.direction for d in g.directions] == ["write", "trim", "total"]
    assert g.directions[2].ios == 2 * job["write"]["total_ios"]


def test_a_job_name_in_two_reporting_groups_gives_two_distinct_results(fio_fixtures: Path) -> None:
    doc = _doc(fio_fixtures)
    second = copy.deepcopy(doc["jobs"][0])
    second["groupid"] = 1
    doc["jobs"].append(second)
    names = [g.name for g in parse_fio_output(json.dumps(doc))]
    assert len(set(names)) == 2 and names[1].endswith("@group1")


def test_import_exit_codes_for_bad_files(tmp_path: Path, fio_fixtures: Path) -> None:
    doc = _doc(fio_fixtures)
    doc["jobs"][0]["read"]["iops"] = float("nan")
    bad = tmp_path / "nan.json"
    bad.write_text(json.dumps(doc))
    out = diskbench("import", str(bad), "--format", "json", db=tmp_path / "db.sqlite")
    assert out.returncode == 2 and out.stdout == "" and "NaN" in out.stderr and "Traceback" not in out.stderr
    deep = tmp_path / "deep.json"
    deep.write_text('{"fio version": "x", "jobs": ' + "[" * 50000 + "]" * 50000 + "}")
    out = diskbench("import", str(deep), db=tmp_path / "db.sqlite")
    assert out.returncode == 2 and "nested too deeply" in out.stderr  # 2: a bad input file
