"""What the importers' fuzz tests share: the verdicts (a result with finite numbers, or a one-line
error naming the file) and ``diskbench import`` run in this process, so thousands of mutated files
go through the real CLI in seconds.

A file is written, then ``diskbench.cli.main(["import", path, "--no-store", "--format", "json"])``
runs: it must exit 0 (strict JSON on stdout, every number finite) or 2 (a bad input file, one
``error:`` line), never 70 (an internal error) and never with a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from diskbench.cli import main
from diskbench.model import GroupResult

BAD_INPUT = 2  # the exit-code table's "bad input: ... a file to import"


def assert_finite(groups: list[GroupResult]) -> None:
    """Every figure of a parsed result is a finite number, never negative."""
    for g in groups:
        assert g.jobs >= 0
        for d in g.directions:
            numbers = [d.iops, d.bw_bytes_per_s, d.ios, d.io_bytes, d.runtime_s]
            if d.clat is not None:
                c = d.clat
                numbers += [c.min, c.mean, c.max, c.stdev, c.samples, *c.percentiles.values()]
            assert all(math.isfinite(x) and x >= 0 for x in numbers), (g.name, d.direction, numbers)


def _numbers(node: Any) -> Iterator[float]:
    if isinstance(node, dict):
        for value in node.values():
            yield from _numbers(value)
    elif isinstance(node, list):
        for value in node:
            yield from _numbers(value)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield node


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"non-finite {name} in diskbench's JSON output")

    return json.loads(text, parse_constant=refuse)


def import_in_process(path: Path) -> tuple[int, str, str]:
    """``diskbench import PATH --no-store --format json`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["import", str(path), "--no-store", "--format", "json"])
        except SystemExit as exc:
            code = int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return code, out.getvalue(), err.getvalue()


def check_import(path: Path) -> int:
    """The CLI's verdict on ``path`` is a result or a one-line bad-input error; returns the exit code."""
    code, out, err = import_in_process(path)
    assert code != 70 and "internal error" not in err and "Traceback" not in err, err
    assert code in (0, BAD_INPUT), (code, err)
    if code == 0:
        doc = _strict(out)
        assert all(math.isfinite(x) and x >= 0 for r in doc["results"] for x in _numbers(r.get("clat_us") or {})
                   if not isinstance(x, bool)), doc["results"]
        for r in doc["results"]:
            assert all(math.isfinite(r[k]) and r[k] >= 0 for k in ("iops", "bw_bytes_per_s", "ios", "io_bytes"))
    else:
        assert out == "" and err.startswith("error: ") and err.count("\n") == 1, err
    return code
