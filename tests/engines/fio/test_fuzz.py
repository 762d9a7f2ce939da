"""Fuzzing the fio parser: whatever the input, a result with finite numbers or a one-line ParseError.

Mutations of every fixture (truncation at many offsets; values replaced by NaN, infinities, huge,
negative and fractional numbers, strings, lists and objects; keys dropped; values nested inside
lists and objects; deep nesting) through the parser and through ``diskbench import`` in this
process (2,000 examples: exit 0 or 2, never 70, no traceback, strict JSON out), and a few through
the real CLI in a child process. Bounded: a fixed number of examples each.
"""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diskbench.engines.fio.parse import parse_fio_output
from diskbench.errors import ParseError

from ...conftest import FIO_FIXTURES, diskbench
from ..fuzzing import assert_finite, check_import

FIXTURES = sorted(p for p in FIO_FIXTURES.rglob("*") if p.suffix in (".json", ".txt") and "stderr" not in p.name)
JSON_FIXTURES = [p for p in FIXTURES if p.read_text().lstrip().startswith("{")]


def _document(path: Path) -> str:
    text = path.read_text()
    return text[text.index("{"):text.rindex("}") + 1]


_DOCS = {p.name: _document(p) for p in JSON_FIXTURES}


def _parse_or_error(text: str) -> None:
    try:
        groups = parse_fio_output(text, source="fuzz.json")
    except ParseError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("fuzz.json")
        return
    assert_finite(groups)


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
    st.sampled_from(["²", "٣", "1e3", " 4", "0x10", "4k", "-1", "1" + "0" * 40]),  # digits that are no number
)


def _drop(doc: Any, path: tuple[Any, ...]) -> None:
    """Remove the key (or list item) at ``path``."""
    if not path:
        return
    node = doc
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]


def _nest(doc: Any, path: tuple[Any, ...], as_list: bool) -> None:
    """Wrap the value at ``path`` in a list or an object."""
    node = doc
    for key in path:
        node = node[key]
    _replace(doc, path, [node] if as_list else {"value": node})


_LEAVES = {name: _leaves(json.loads(text, strict=False)) for name, text in _DOCS.items()}


def _mutate(data: st.DataObject, doc: Any, leaves: list[tuple[Any, ...]]) -> None:
    """One mutation at one of the document's leaves (``leaves``: the unmutated document's; a path
    an earlier mutation removed is skipped)."""
    with contextlib.suppress(KeyError, IndexError, TypeError):  # the path is gone: dropped or nested before
        _mutate_at(data, doc, data.draw(st.sampled_from(leaves)))


def _mutate_at(data: st.DataObject, doc: Any, leaf: tuple[Any, ...]) -> None:
    kind = data.draw(st.sampled_from(["swap", "swap", "scale", "drop", "nest"]))
    if kind == "swap":
        _replace(doc, leaf, data.draw(SWAPS))
    elif kind == "scale":  # a plausible number, slightly or wildly off: the checks against the neighbours
        node = doc
        for key in leaf:
            node = node[key]
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            factor = data.draw(st.sampled_from([-1, 0, 0.5, 1.000001, 1.5, 1024, 1 / 1024, 10**20]))
            _replace(doc, leaf, type(node)(node * factor) if isinstance(node, int) else node * factor)
    else:
        prefix = leaf[: data.draw(st.integers(1, max(len(leaf), 1)))]
        if kind == "drop":
            _drop(doc, prefix)
        else:
            _nest(doc, prefix, data.draw(st.booleans()))


@settings(max_examples=2000, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_documents_through_the_parser_and_the_cli(data: st.DataObject, tmp_path: Path) -> None:
    name = data.draw(st.sampled_from(sorted(_DOCS)))
    doc = json.loads(_DOCS[name], strict=False)
    for _ in range(data.draw(st.integers(1, 3))):
        _mutate(data, doc, _LEAVES[name])
    text = json.dumps(doc)  # NaN and Infinity come out as the bare words, as a broken writer would put them
    _parse_or_error(text)
    path = tmp_path / "fuzz.json"
    path.write_text(text)
    check_import(path)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_nesting_past_any_stack(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(JSON_FIXTURES))
    text = path.read_text()
    doc = json.loads(text[text.index("{"):text.rindex("}") + 1], strict=False)
    _replace(doc, data.draw(st.sampled_from(_leaves(doc))), [1])
    _parse_or_error(json.dumps(doc).replace("[1]", "[" * 20000 + "1" + "]" * 20000, 1))


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"non-finite {name} in output")

    return json.loads(text, parse_constant=refuse)


def test_import_in_a_child_process_never_crashes_on_mutations(tmp_path: Path) -> None:
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
        assert out.returncode in (0, 2) and "Traceback" not in out.stderr, (i, out.stderr)
        if out.returncode == 0:
            _strict(out.stdout)
        else:
            assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
