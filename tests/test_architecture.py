"""The house's seams hold: engine and cloud names stay in their folders, and imports have no cycles.

Names are identifiers and string literals in code (docstrings and comments may mention fio or
Azure: prose is not a dependency).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "diskbench"

# Names that only the fio engine may use, and names that only the Azure provider may use. fio's
# options are matched as whole names (a key, an identifier); a sentence of advice may quote one.
FIO_ONLY = re.compile(r"json\+|clat_ns|group_reporting|percentile_list|clat_percentiles|output-format"
                      r"|clientserver|client_stats|all_clients|ALL_CLIENTS|--server|--client|--daemonize"
                      r"|fio_version|fio-server|^randrepeat$|^randseed$")  # client/server; the seeds of offsets
AZURE_ONLY = re.compile(r"azure|\bIMDS\b|169\.254\.169\.254|\bStandard_[A-Z]|Premium(V2)?_LRS|StandardSSD_LRS"
                        r"|Standard_LRS|UltraSSD|^ReadOnly$|^ReadWrite$|subscription|resource group"  # caching modes
                        r"|NetApp|netapp|\b[Aa]nf(?![a-z])|\bANF|\bAnf[A-Z]")  # Azure NetApp Files


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def names_in(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every identifier and string literal in code, docstrings left out."""
    tree = ast.parse(path.read_text())
    skip = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.lineno, node.name))
        elif isinstance(node, ast.arg):
            found.append((node.lineno, node.arg))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            module = getattr(node, "module", None) or ""
            found += [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return found


def _offenders(pattern: re.Pattern[str], allowed: Path) -> list[str]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        if allowed in path.parents:
            continue
        for line, text in names_in(path):
            if pattern.search(text):
                out.append(f"{path.relative_to(SRC)}:{line}: {text[:60]!r}")
    return out


def test_fio_names_live_only_in_the_fio_engine() -> None:
    assert _offenders(FIO_ONLY, SRC / "engines" / "fio") == []


def test_azure_names_live_only_in_the_azure_provider() -> None:
    assert _offenders(AZURE_ONLY, SRC / "providers" / "azure") == []


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def module_imports(path: Path, modules: set[str], *, every: bool = False) -> set[str]:
    """diskbench modules imported when ``path`` is imported (not inside functions or TYPE_CHECKING);
    with ``every``, also those imported inside functions and for type checking only."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    return module_imports_text(path.read_text(), name, package, modules, every=every)


def module_imports_text(text: str, name: str, package: str, modules: set[str], *, every: bool) -> set[str]:
    out: set[str] = set()

    def add(node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in modules)
            return
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - node.level + 1]
            base = ".".join([*anchor, *([base] if base else [])])
        for alias in node.names:
            target = f"{base}.{alias.name}"
            if target in modules:
                out.add(target)
            elif base in modules:
                out.add(base)

    if every:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                add(node)
        out.discard(name)
        return out

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and _type_checking(node):
                continue
            if isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                add(node)

    visit(ast.parse(text).body)
    out.discard(name)
    return out


def test_no_import_cycles() -> None:
    """No module imports one that imports it back, counting imports inside functions and those for
    type checking only: a deferred import hides a circle from Python, not from a reader (the
    seams' bases stand below the registry; the profile's assembly and the plan's expansion, which
    ask the registry, stand above them)."""
    paths = {_module_name(p): p for p in SRC.rglob("*.py")}
    _acyclic({name: module_imports(path, set(paths), every=True) for name, path in paths.items()})


def test_the_cycle_check_sees_deferred_and_type_checking_imports() -> None:
    """What the test above relies on: an import inside a function, or under TYPE_CHECKING, is an
    edge; without ``every`` it is not."""
    text = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .plan import Unit\n"
            "def f():\n    from . import registry\n")
    modules = {"diskbench.plan", "diskbench.registry"}
    assert module_imports_text(text, "diskbench.probe", "diskbench", modules, every=True) == modules
    assert module_imports_text(text, "diskbench.probe", "diskbench", modules, every=False) == set()


def _acyclic(graph: dict[str, set[str]]) -> None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                walk(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)


def test_engines_are_asked_for_by_the_units_choice_never_by_name() -> None:
    """Code outside the engines asks the registry for the engine a unit (or a file) names, never for
    one engine by a literal name: what an engine can do is asked of the engine."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if SRC / "engines" in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "engines" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: engines.get({node.args[0].value!r})")
    assert found == []
