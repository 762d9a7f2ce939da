"""The library without the CLI: the README's example runs as written, with no store and no terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import diskbench
from diskbench.errors import ProfileError
from diskbench.store import Store

from .conftest import REPO, needs_fio


def _readme_python() -> str:
    (block,) = re.findall(r"```python\n(import diskbench\n.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    return block


@needs_fio
def test_readme_example_runs_as_written(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "DISKBENCH_DB": str(tmp_path / "no.sqlite")}
    out = subprocess.run([sys.executable, "-c", _readme_python()], capture_output=True, text=True, env=env,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.strip().splitlines()[-1]) > 0  # the p99 in µs
    assert not (tmp_path / "no.sqlite").exists()  # store=None stores nothing
    assert list((tmp_path / "cache" / "diskbench").iterdir()) == []  # the scratch directory is gone


@needs_fio
def test_run_with_a_store_and_results_api(tmp_path: Path, tiny_profile: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    target = tmp_path / "t"
    target.mkdir()
    profile = diskbench.load_profile(str(tiny_profile), overrides={"defaults.runtime": "1s"})
    results = diskbench.run(profile, store=store, target_dir=str(target))
    assert {(r.workload, r.direction) for r in results} == {
        ("rr", "read"), ("rw-mix", "read"), ("rw-mix", "write"), ("rw-mix", "total")}
    assert results.get("rr", "read").iops > 0 and "p50" in results.get("rr", "read").clat_us
    assert store.get_run(results.run["id"])["status"] == "completed"  # committed as it went
    with pytest.raises(KeyError):
        results.get("rr", "write")


def test_unknown_workload_is_a_profile_error() -> None:
    with pytest.raises(ProfileError, match="has no workload 'nope'"):
        diskbench.run(diskbench.load_profile("local"), workloads=["nope"])


LAZY = """
import runpy, sys
sys.argv = ["diskbench", *sys.argv[1:]]
try:
    runpy.run_module("diskbench", run_name="__main__")
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in ("paramiko", "azure")})
print("HEAVY", " ".join(heavy) or "-", file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["--help"], ["runs"], ["show", "last"], ["profiles"], ["plan", "--profile", "local"]])
def test_commands_that_need_no_cloud_or_ssh_do_not_import_them(args: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "DISKBENCH_DB": str(tmp_path / "db.sqlite")}
    out = subprocess.run([sys.executable, "-c", LAZY, *args], capture_output=True, text=True, env=env, check=False)
    assert "HEAVY -" in out.stderr, out.stderr


@needs_fio
def test_a_local_run_imports_no_cloud_or_ssh_library(tmp_path: Path, tiny_profile: Path) -> None:
    env = {**os.environ, "DISKBENCH_DB": str(tmp_path / "db.sqlite"), "CI": "true"}
    target = tmp_path / "t"
    target.mkdir()
    out = subprocess.run([sys.executable, "-c", LAZY, "run", "--profile", str(tiny_profile), "--target", str(target)],
                         capture_output=True, text=True, env=env, check=False, timeout=120)
    assert "done, " in out.stderr and "HEAVY -" in out.stderr, out.stderr
