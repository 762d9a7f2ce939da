"""JSON Schemas of the documents the commands print with ``--format json``: one file per kind,
``<kind>.json`` for ``diskbench.<kind>/1``. They are the contract scripts rely on; the tests hold
every command's output against them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

KINDS = ("results", "compare", "runs", "plan", "history", "explain", "sizes", "doctor", "profiles", "cleanup", "gate")


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of ``diskbench.<kind>/1``."""
    loaded: dict[str, Any] = json.loads((Path(__file__).parent / f"{kind}.json").read_text(encoding="utf-8"))
    return loaded
