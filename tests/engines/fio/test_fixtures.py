"""tests/fixtures/fio is shared/fixtures/fio (real fio runs) plus the files diskbench's own tests
made, each of which its README names and says how it was made."""

from __future__ import annotations

import re

import pytest

from ...conftest import FIO_FIXTURES, SHARED_FIXTURES

OWN_HEADING = "## Files made for diskbench's own tests (not in shared/fixtures/fio)"


@pytest.mark.skipif(not (SHARED_FIXTURES / "fio").is_dir(), reason="no shared/fixtures beside this clone")
def test_vendored_fio_fixtures_match_shared() -> None:
    shared = SHARED_FIXTURES / "fio"
    theirs = {p.relative_to(shared): p.read_bytes() for p in shared.rglob("*") if p.is_file()}
    ours = {p.relative_to(FIO_FIXTURES): p.read_bytes() for p in FIO_FIXTURES.rglob("*") if p.is_file()}
    readme = ours.pop(next(p for p in ours if str(p) == "README.md")).decode()
    shared_readme = theirs.pop(next(p for p in theirs if str(p) == "README.md")).decode()
    assert readme.startswith(shared_readme.rstrip("\n") + "\n\n" + OWN_HEADING), "README.md: shared's, then ours"
    own = set(re.findall(r"^\| `([^`]+)` \|", readme.split(OWN_HEADING, 1)[1], re.MULTILINE))
    assert {str(p) for p in ours.keys() - theirs.keys()} == own, "a file of ours is not in the README's table"
    assert {p: ours.get(p) for p in theirs} == theirs, "tests/fixtures/fio differs from shared/fixtures/fio"
