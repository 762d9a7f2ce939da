"""Fixtures of the Linux platform's tests: loop devices of a test's own, detached by their names at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_safety_rule import Loops


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[Loops]:
    made = Loops(tmp_path)
    try:
        yield made
    finally:
        made.close()
