"""tests/fixtures/diskspd is a byte-exact copy of shared/fixtures/diskspd (checked when that folder is here)."""

from __future__ import annotations

import pytest

from .helpers import FIXTURES, SHARED_CANDIDATES

SHARED = next((p for p in SHARED_CANDIDATES if p.is_dir()), None)


@pytest.mark.skipif(SHARED is None, reason="no shared/fixtures/diskspd on this machine")
def test_vendored_diskspd_fixtures_match_shared() -> None:
    assert SHARED is not None
    theirs = {p.relative_to(SHARED): p.read_bytes() for p in SHARED.rglob("*") if p.is_file()}
    ours = {p.relative_to(FIXTURES): p.read_bytes() for p in FIXTURES.rglob("*") if p.is_file()}
    assert ours == theirs, "tests/fixtures/diskspd differs from shared/fixtures/diskspd: copy it again"
