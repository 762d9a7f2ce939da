"""Fuzzing the fio parser: whatever the input, a result with finite numbers or a one-line ParseError.

Mutations of every fixture (truncation at many offsets, type swaps, NaN and infinities, huge and
negative numbers, deep nesting) through the parser, and a few through ``diskbench import``
(no traceback, never exit 70, strict JSON out). Bounded: a fixed number of examples each.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diskbench.engines.fio.parse import parse_fio_output
from diskbench.errors import ParseError
from diskbench.model import GroupResult

from ...conftest import FIO_FIXTURES, diskbench

FIXTURES = sorted(p for p in FIO_FIXTURES.rglob("*") if p.suffix in (".json", ".txt") and "stderr" not in p.name)
JSON_FIXTURES = [p for p in FIXTURES if p.read_text().lstrip().startswith("{")]


def _finite(groups: list[GroupResult]) -> None:
    for g in groups:
        for d in g.directions:
            numbers = [d.iops, d.bw_bytes_per_s, d.ios, d.io_bytes, d.runtime_s]
            if d.clat is not None:
                c = d.clat
                numbers += [c.min, c.mean, c.max, c.stdev, c.samples, *c.percentiles.values()]
            assert all(math.isfinite(x) and x >= 0 for x in numbers), (g.name, d.direction, numbers)


def _parse_or_error(text: str) -> None:
    try:
        groups = parse_fio_output(text, source="fuzz.json")
    except ParseError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("fuzz.json")
        return
    _finite(groups)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_truncation_at_many_offsets(path: Path) -> None:
    text = path.read_text()
    rng = random.Random(path.name)
    for cut in sorted({*rng.sample(range(len(text)), min(60, len(text))), len(text) - 1, 1}):
        _parse_or_error(text[:cut])


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _leaves(v, (*path, k))] or [path]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _leaves(v, (*path, i))] or [path]
    return [path]


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    node = doc
    for key in path[:-1]:
        node = node[key]
    if path:
        node[path[-1]] = value


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


SWAPS = st.one_of(
    st.just(float("nan")), st.just(float("inf")), st.just(float("-inf")),
    st.integers(min_value=-(10**30), max_value=10**30), st.floats(allow_nan=False),
    st.text(max_size=5), st.none(), st.booleans(), st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.integers(0, 300).map(_deep),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_type_swaps_non_finite_huge_negative_and_nesting(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(JSON_FIXTURES))
    text = path.read_text()
    doc = json.loads(text[text.index("{"):text.rindex("}") + 1], strict=False)
    for _ in range(data.draw(st.integers(1, 3))):
        leaf = data.draw(st.sampled_from(_leaves(doc)))
        _replace(doc, leaf, data.draw(SWAPS))
    text = json.dumps(doc)
    _parse_or_error(text)
    _parse_or_error(text.replace("[1]", "[" * 20000 + "1" + "]" * 20000, 1))  # nesting past any stack


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"non-finite {name} in output")

    return json.loads(text, parse_constant=refuse)


def test_import_never_crashes_on_mutations(tmp_path: Path) -> None:
    rng = random.Random(7)
    source = json.loads((FIO_FIXTURES / "randread-4k-qd16.json").read_text())
    mutations = []
    for value in (float("nan"), -1, "x", [1], 10**40, "DEEP"):
        doc = json.loads(json.dumps(source))
        _replace(doc, rng.choice(_leaves(doc)), value)
        mutations.append(json.dumps(doc).replace('"DEEP"', "[" * 30000 + "]" * 30000))
    mutations.append(json.dumps(source)[: len(json.dumps(source)) // 2])
    for i, text in enumerate(mutations):
        path = tmp_path / f"m{i}.json"
        path.write_text(text)
        out = diskbench("import", str(path), "--no-store", "--format", "json", db=tmp_path / "db.sqlite")
        assert out.returncode in (0, 1) and "Traceback" not in out.stderr, (i, out.stderr)
        if out.returncode == 0:
            _strict(out.stdout)
        else:
            assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
