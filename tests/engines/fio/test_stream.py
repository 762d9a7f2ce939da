"""Big status-interval files: only the tail is read, with the same results and errors as a
whole-file parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from diskbench.engines.fio.parse import parse_fio_output
from diskbench.engines.fio.stream import SMALL, last_document_text
from diskbench.errors import ParseError
from diskbench.importer import import_file
from diskbench.store import Store


def _big(tmp_path: Path, fio_fixtures: Path, last: str) -> Path:
    doc = (fio_fixtures / "randread-4k-numjobs4-group-reporting.jsonplus.json").read_text().strip() + "\n"
    path = tmp_path / "status.json"
    path.write_text(doc * (SMALL // len(doc) + 10) + last)
    assert path.stat().st_size > SMALL
    return path


def test_the_tail_holds_the_last_document(tmp_path: Path, fio_fixtures: Path) -> None:
    last = (fio_fixtures / "randread-4k-qd16.json").read_text()
    path = _big(tmp_path, fio_fixtures, last + "\nfio: some trailing note\n")
    tail = last_document_text(path)
    assert tail is not None and len(tail) <= 1 << 20
    expected = parse_fio_output(last)
    imported = import_file(path, store=Store(tmp_path / "s.sqlite"))
    assert [r.result.iops for r in imported.results] == [d.iops for g in expected for d in g.directions]
    assert (Path(imported.run["artifacts_dir"]) / "status.json.gz").exists()


def test_a_cut_last_document_is_still_an_error(tmp_path: Path, fio_fixtures: Path) -> None:
    last = (fio_fixtures / "randread-4k-qd16.json").read_text()
    path = _big(tmp_path, fio_fixtures, last[: len(last) // 2])
    assert last_document_text(path) is None  # left to the whole-file parser, which says where
    with pytest.raises(ParseError, match="cut off"):
        import_file(path, store=None)
