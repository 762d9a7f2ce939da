"""Every command that prints data gives a JSON document of its kind (``diskbench.<kind>/1``) that
its JSON Schema (``diskbench/schemas``) accepts, strict JSON (no NaN), and CSV where it is a table.

The data: two tiny real runs here (fio), an imported fio output, a plan of a bundled cloud
profile, the Azure size data, doctor and a dry-run cleanup with no cloud set up.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from diskbench.schemas import KINDS, schema

from ..conftest import FIO_FIXTURES, TINY_PROFILE, diskbench, needs_fio


def strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in a JSON document")

    return json.loads(text, parse_constant=refuse)


def check(kind: str, out: str) -> dict[str, Any]:
    doc = strict(out)
    assert doc["schema"] == f"diskbench.{kind}/1"
    jsonschema.validate(doc, schema(kind), cls=jsonschema.Draft202012Validator)
    return doc  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", KINDS)
def test_each_schema_is_a_valid_json_schema(kind: str) -> None:
    jsonschema.Draft202012Validator.check_schema(schema(kind))


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A store with two runs of a tiny profile and one import (module-wide: they take seconds)."""
    root = tmp_path_factory.mktemp("documents")
    db, work = root / "db.sqlite", root / "work"
    work.mkdir()
    profile = root / "tiny.yaml"
    profile.write_text(TINY_PROFILE)
    ids = []
    for _ in range(2):
        out = diskbench("run", "--profile", str(profile), "--target", str(work), "--format", "json", db=db)
        assert out.returncode == 0, out.stderr
        ids.append(strict(out.stdout)["run"]["id"])
    assert diskbench("import", str(FIO_FIXTURES / "randread-4k-qd16.json"), db=db).returncode == 0
    return db, ids


@needs_fio
def test_every_data_command_prints_a_valid_document(filled: tuple[Path, list[str]]) -> None:
    db, (first, second) = filled

    def doc(kind: str, *args: str, code: int = 0) -> dict[str, Any]:
        out = diskbench(*args, "--format", "json", db=db)
        assert out.returncode == code, (args, out.stderr)
        return check(kind, out.stdout)

    shown = doc("results", "show", first)
    assert {r["workload"] for r in shown["results"]} == {"rr", "rw-mix"}
    assert [r["id"] for r in doc("runs", "runs")["runs"]][1:] == [second, first]
    assert doc("compare", "compare", first, second)["runs"] == [first, second]
    assert {p["run"] for p in doc("history", "history", "-w", "rr")["points"]} == {first, second}
    explained = doc("explain", "explain", first)
    assert explained["run"] == first and all(r["lines"] for r in explained["results"])
    assert doc("gate", "gate", second)["verdict"] == "LEARNING"
    plan = doc("plan", "plan", "--profile", "e8-family")
    assert plan["units"] and plan["costs"][0]["vm_minutes"] > 0 and plan["problems"] == []
    assert doc("plan", "plan", "--profile", "local")["costs"] == []
    assert doc("sizes", "sizes", "--family", "E")["sizes"]
    assert "local" in {p["name"] for p in doc("profiles", "profiles")["profiles"]}
    assert doc("doctor", "doctor")["checks"][0]["name"] == "python"
    cleaned = doc("cleanup", "cleanup", "--dry-run")
    assert cleaned["dry_run"] is True and {o["provider"] for o in cleaned["outcomes"]} >= {"hosts"}


@needs_fio
@pytest.mark.parametrize(("args", "first_column"), [
    (("runs",), "id"), (("history", "-w", "rr"), "job"), (("sizes", "--family", "L"), "size"),
    (("profiles",), "name"), (("doctor",), "name")])
def test_tables_as_csv(filled: tuple[Path, list[str]], args: tuple[str, ...], first_column: str) -> None:
    db, _ = filled
    out = diskbench(*args, "--format", "csv", db=db)
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert rows[0][0] == first_column and len(rows) > 1 and len({len(r) for r in rows}) == 1
