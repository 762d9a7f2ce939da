from __future__ import annotations

import pytest

from ...conftest import FIO_FIXTURES, SHARED_FIXTURES


@pytest.mark.skipif(not (SHARED_FIXTURES / "fio").is_dir(), reason="no shared/fixtures beside this clone")
def test_vendored_fio_fixtures_match_shared() -> None:
    shared = SHARED_FIXTURES / "fio"
    theirs = {p.relative_to(shared): p.read_bytes() for p in shared.rglob("*") if p.is_file()}
    ours = {p.relative_to(FIO_FIXTURES): p.read_bytes() for p in FIO_FIXTURES.rglob("*") if p.is_file()}
    assert ours == theirs, "tests/fixtures/fio differs from shared/fixtures/fio: copy it again"
