"""The README's promises: two set-up commands first, CI runs its test command, commands exist."""

from __future__ import annotations

import re

from diskbench.cli import cli

from .conftest import REPO

README = (REPO / "README.md").read_text()


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


def test_every_command_is_documented() -> None:
    import click

    for name in cli.list_commands(click.Context(cli)):
        assert f"diskbench {name}" in README, name


def test_bench_scripts_named_in_readme_exist() -> None:
    for script in re.findall(r"`(bench/[a-z_]+)`", README):
        assert (REPO / script).is_file(), script


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
