"""The README and the manual keep their promises: two set-up commands first, CI runs the test
command, a small front door, a manual that builds without a warning, a command reference that
covers every command and option, and Python examples that run as written."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from diskbench.cli import cli
from diskbench.errors import Exit

from .conftest import REPO, needs_fio

README = (REPO / "README.md").read_text()
CONTRIBUTING = (REPO / "CONTRIBUTING.md").read_text()
DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
README_MAX_BYTES = 12_000  # "at most 12 KB", in either meaning of KB


def _blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", README, re.DOTALL)


def test_readme_starts_with_two_setup_commands() -> None:
    head = README.split("\n## ")[0]
    setup = re.findall(r"```sh\n(.*?)\n```", head, re.DOTALL)
    assert len(setup) == 2
    install_run, install_test = setup
    assert install_run.endswith(".venv/bin/diskbench run --profile local")
    assert "apt-get install -y fio" in install_run and "pip install -e ." in install_run
    assert ".venv/bin/pytest" in install_test
    assert README.index(setup[0]) < 200  # right under the title


def test_ci_runs_the_readme_test_command() -> None:
    test_command = _blocks()[1].split("pip install -e '.[dev]' && ")[1]
    ci = (REPO / ".ci" / "run").read_text()
    assert test_command in ci.splitlines()
    for package in ("fio", "openssh-server", "mdadm", "xfsprogs"):
        assert package in ci
    ci_packages = re.search(r"apt-get install -y -qq (.*?) >/dev/null", ci, re.S)
    assert ci_packages is not None
    readme_packages = _blocks()[1].split("apt-get install -y ")[1].split(" && ")[0].split()
    assert sorted(ci_packages[1].replace("\\\n", " ").split()) == sorted(readme_packages)
    assert _blocks()[1] in CONTRIBUTING  # the development set-up says the same


def test_readme_is_a_front_door() -> None:
    """Small; names Azure and OpenStack; shows a real table and a picture of the report; links
    into the manual and CONTRIBUTING.md."""
    assert len(README.encode()) <= README_MAX_BYTES, len(README.encode())
    intro = README.split("## What it is", 1)[1].split("\n## ", 1)[0]
    assert "Azure" in intro and "OpenStack" in intro and "SSH" in intro
    assert re.search(r"^sync +write +[\d,]+ ", README, re.MULTILINE)  # a pasted result table
    picture = re.search(r"!\[[^\]]*\]\((docs/images/[^)]+\.png)\)", README)
    assert picture is not None and (REPO / picture[1]).stat().st_size < 300_000
    for journey in ("--target", "--host", "az login"):
        assert journey in README, journey
    assert "(CONTRIBUTING.md)" in README and "(docs/index.md)" in README


def _relative_links(text: str) -> Iterator[str]:
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
            yield target.split("#")[0]


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md"])
def test_links_of_the_top_level_files_resolve(name: str) -> None:
    """As GitHub shows them (the manual's own links are checked by the strict build)."""
    for target in _relative_links((REPO / name).read_text()):
        assert (REPO / target).exists(), f"{name} links to {target}, which does not exist"


def test_every_command_is_in_the_summary_table() -> None:
    commands = (DOCS / "commands.md").read_text()
    for name in cli.list_commands(click.Context(cli)):
        assert f"`diskbench {name}" in commands, name


def _reference_module() -> object:
    spec = importlib.util.spec_from_file_location("docs_reference_hook", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commands_and_options() -> list[tuple[str, list[str]]]:
    """(``diskbench runs delete``, every option name of it) for each command, provider ones included."""
    out = []
    hook = _reference_module()
    for path, command, ctx in hook.command_tree():  # type: ignore[attr-defined]
        options = [o for p in command.get_params(ctx) if isinstance(p, click.Option) and not p.hidden
                   for o in (*p.opts, *p.secondary_opts)]
        out.append((path, options))
    return out


def test_the_command_reference_covers_every_command_and_option() -> None:
    reference = _reference_module().reference()  # type: ignore[attr-defined]
    found = _commands_and_options()
    paths = [path for path, _ in found]
    assert {"diskbench run", "diskbench sizes", "diskbench runs delete", "diskbench runs prune"} <= set(paths)
    for path, options in found:
        section = reference if path == "diskbench" else reference.split(f"### {path}\n", 1)[1].split("\n### ")[0]
        for option in options:
            assert re.search(rf"`[^`]*{re.escape(option)}\b", section), (path, option)


def test_exit_code_tables_agree_with_the_code() -> None:
    def table(text: str) -> str:
        return text.split("**Exit codes**", 1)[1].split("\n\n", 2)[1]

    assert table(README) == table((DOCS / "commands.md").read_text())
    codes = {int(m) for m in re.findall(r"^\| (\d+) \|", table(README), re.MULTILINE)}
    assert codes == {int(e) for e in Exit}


def test_bench_scripts_named_exist_and_each_is_named() -> None:
    texts = [README, CONTRIBUTING, *(p.read_text() for p in PAGES)]
    for script in {s for text in texts for s in re.findall(r"`(bench/[a-z_]+)`", text)}:
        assert (REPO / script).is_file(), script
    for script in (REPO / "bench").iterdir():
        if not script.name.startswith(("_", ".")) and script.suffix != ".md":
            assert f"`bench/{script.name}`" in CONTRIBUTING, script.name


def test_contributing_has_the_glossary_and_the_runtime_sketch() -> None:
    glossary = CONTRIBUTING.split("## Glossary", 1)[1].split("\n## ", 1)[0]
    terms = set(re.findall(r"^\| \*\*(.+?)\*\* \|", glossary, re.MULTILINE))
    assert terms >= {"unit", "job", "workload", "target", "machine", "provider", "platform", "engine", "executor",
                     "client group", "fio reporting group", "resource group", "testbed", "run", "repeat", "sweep",
                     "attribution / bound", "journal", "workspace"}
    sketch = CONTRIBUTING.split("## Runtime sketch", 1)[1]
    for part in ("### Threads", "### Commit points", "### Teardown guarantees"):
        assert part in sketch
    layout = CONTRIBUTING.split("## Layout", 1)[1].split("\n## ", 1)[0]
    for folder in ("cli/", "api.py", "profile/", "plan.py", "runner/", "engines/", "providers/", "platforms/",
                   "executors/", "store/", "reports/", "attribution/"):
        assert folder in layout, folder
        assert (REPO / "src" / "diskbench" / folder.rstrip("/")).exists(), folder


def test_every_page_is_in_the_nav() -> None:
    import yaml

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    in_nav = {next(iter(item.values())) for item in config["nav"]}
    assert {p.name for p in PAGES} | {"contributing.md"} == in_nav


def test_workflows() -> None:
    import yaml

    ci = yaml.safe_load((REPO / ".github/workflows/ci.yml").read_text())
    assert "bash .ci/run" in json_dump(ci)
    nightly = yaml.safe_load((REPO / ".github/workflows/nightly.yml").read_text())
    text = json_dump(nightly)
    assert "schedule" in text and "workflow_dispatch" in text and "azure/login" in text
    steps = nightly["jobs"]["benchmark"]["steps"]
    runs = [s.get("run", "") for s in steps]
    for command in ("diskbench run --profile", "diskbench gate last", "diskbench report last", "diskbench cleanup"):
        assert any(command in r for r in runs), command
    assert steps[-1]["if"] == "always()" and "cleanup" in steps[-1]["run"]
    assert nightly["permissions"]["id-token"] == "write"


def json_dump(doc: object) -> str:
    import json

    return json.dumps(doc)


# --- the manual builds ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mkdocs build --strict`` into a temporary folder; any warning fails it."""
    for module in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason=f"{module} is not installed (pip install -e '.[dev]')")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(REPO / "mkdocs.yml"),
                           "-d", str(out)], capture_output=True, text=True, cwd=REPO, timeout=300, check=False)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    warnings = [line for line in log.splitlines() if re.match(r"\s*(WARNING|ERROR)\b", line)]
    assert not warnings, "\n".join(warnings)
    return out


def _html_text(path: Path) -> str:
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text()))


def test_the_manual_builds_without_a_warning(site: Path) -> None:
    for page in PAGES:
        built = site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert built.is_file(), page.name
    assert (site / "contributing" / "index.html").is_file()
    assert (site / "images" / "report.png").is_file()


def test_the_built_reference_lists_every_command_and_option(site: Path) -> None:
    text = _html_text(site / "commands" / "index.html")
    for path, options in _commands_and_options():
        if path != "diskbench":
            assert f"Usage: {path} " in text, path
        for option in options:
            assert option in text, (path, option)


def test_the_built_library_page_renders_the_api_module(site: Path) -> None:
    import ast

    text = _html_text(site / "library" / "index.html")
    tree = ast.parse((REPO / "src" / "diskbench" / "api.py").read_text())
    public = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
              and not n.name.startswith("_") and ast.get_docstring(n)]
    assert {"run", "load_profile"} <= set(public)
    for name in public:
        assert re.search(rf"\b{name}\b", text), name


# --- the examples run ----------------------------------------------------------------------------
def _python_examples() -> list[tuple[str, str]]:
    """(where, code) of every ```python block of the README and the manual, each once."""
    seen: dict[str, str] = {}
    for path in [REPO / "README.md", *PAGES]:
        for n, code in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), re.DOTALL), 1):
            seen.setdefault(code, f"{path.relative_to(REPO)}#{n}")
    return [(where, code) for code, where in seen.items()]


def test_the_library_page_has_examples() -> None:
    assert sum(where.startswith("docs/library.md") for where, _ in _python_examples()) >= 3


@needs_fio
@pytest.mark.parametrize(("where", "code"), _python_examples(), ids=[w for w, _ in _python_examples()])
def test_python_example_runs_as_written(where: str, code: str, tmp_path: Path) -> None:
    """Each block in a fresh folder, with its own cache and store, as a user would paste it."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "DISKBENCH_DB": str(tmp_path / "db.sqlite"),
           "CI": "true"}
    work = tmp_path / "work"
    work.mkdir()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=work,
                         timeout=300, check=False)
    assert out.returncode == 0, f"{where}:\n{out.stdout}\n{out.stderr}"
    assert out.stdout.strip(), f"{where} printed nothing"
    assert list(work.iterdir()) == [], f"{where} left files behind: {list(work.iterdir())}"
