"""Bad input of every kind: one line naming what is wrong, the right exit code, never exit 70 or a
traceback (``diskbench()`` checks that for every call), never a non-finite number (issue 24, 12-16)."""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pytest
import yaml

from diskbench.store import Store

from ..conftest import FIO_FIXTURES, REPO, diskbench, finish, needs_fio, start_diskbench, wait_for_job
from ..synth import add_run

WORKLOADS = "workloads:\n  - {name: w, rw: randread}\n"


def profile_file(tmp_path: Path, content: str | bytes, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.mark.parametrize(("content", "message"), [
    ("name: p\ndefaults: {runtime: .nan}\n" + WORKLOADS, "defaults.runtime: nan is not a finite number"),
    ("name: p\ndefaults: {runtime: .inf}\n" + WORKLOADS, "defaults.runtime: inf is not a finite number"),
    ("name: p\ndefaults: {size: 99999999999999999999999P}\n" + WORKLOADS, "is larger than 1 EiB"),
    ("name: p\ndefaults: {ramp_time: 999999999999h}\n" + WORKLOADS, "is longer than a century"),
    ("name: p\ndefaults: {runtime: 31d}\n" + WORKLOADS, "is longer than 30 days"),
    ("name: p\ndefaults: {bs: 3G}\n" + WORKLOADS, "larger than fio's largest block size"),
    ("name: p\nx: " + "[" * 5000 + "]" * 5000 + "\n" + WORKLOADS, "nested"),
    ("name: p\nworkloads:\n  - {name: " + "w" * 5000 + ", rw: read}\n", "is not a workload name (up to 64"),
    ("name: p\nworkloads:\n  - {name: w, rw: read, extra: {foo: \"a\\nb\"}}\n", "contains a newline"),
    ("name: p\nworkloads:\n  - {name: w, rw: read, bs: [" + ", ".join(["4k"] * 65) + "]}\n", "at most 64 values"),
    (b"name: p\xff\n" + WORKLOADS.encode(), ":1: not UTF-8 text (byte 0xff)"),
    (b"name: p\n\x00\x01\x02" + WORKLOADS.encode(), "a binary file (it holds NUL bytes)"),
    (os.urandom(4096).replace(b"\x00", b"") + b"\x00", "a binary file"),
    ("name: p\n" + WORKLOADS + "x0: &x0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
     + "".join(f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 10)}]\n" for i in range(1, 9)),
     "its aliases expand to more than 100,000 values; that is an alias bomb"),
])
def test_bad_profiles(tmp_path: Path, db: Path, content: str | bytes, message: str) -> None:
    path = profile_file(tmp_path, content)
    out = diskbench("plan", "--profile", str(path), db=db)
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert out.stderr.startswith(f"error: {path}")


def test_a_utf16_profile_reads_like_utf8(tmp_path: Path, db: Path) -> None:
    """What a Windows editor saves (UTF-16 with a byte-order mark) is a profile all the same."""
    path = profile_file(tmp_path, ("name: p\n" + WORKLOADS).encode("utf-16"))
    out = diskbench("plan", "--profile", str(path), db=db)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize(("args", "code", "message"), [
    (("plan", "--profile", "local", "--set", "defaults.runtime=["), 2, "not a YAML value"),
    (("plan", "--profile", "local", "--set", "name=!!python/object/apply:os.system [id]"), 2,
     "could not determine a constructor"),
    (("plan", "--profile", "local", "--set", "defaults.runtime=.nan"), 2, "nan is not a finite number"),
    (("runs", "-n", "99999999999999999999999"), 2, "is not in the range"),
    (("runs", "prune", "--older-than", "99999999999d", "--dry-run"), 2, "longer than a century"),
    (("cleanup", "--older-than", "bogus"), 2, "'bogus' is not a duration"),
    (("render", "--profile", "local", "--out", "/etc/passwd/x"), 2, "--out /etc/passwd/x: cannot create the folder"),
    (("render", "--profile", "local", "--out", "/proc/x"), 2, "--out /proc/x: cannot create the folder"),
    (("--db", "/dev/null", "runs"), 2, "/dev/null is not a regular file"),
    (("show", "nope"), 2, "no run 'nope'"),
    (("gate", "nope"), 3, "no run 'nope'"),
])
def test_bad_arguments(db: Path, args: tuple[str, ...], code: int, message: str) -> None:
    out = diskbench(*args, db=db)
    assert out.returncode == code and message in out.stderr, out.stderr
    assert "uid=" not in out.stdout  # nothing was executed


def test_bad_files_given_to_commands(db: Path, tmp_path: Path) -> None:
    assert diskbench("import", str(FIO_FIXTURES / "randread-4k-qd16.json"), db=db).returncode == 0
    out = diskbench("report", "last", "--html", "/nonexistent/dir/x.html", db=db)
    assert out.returncode == 2 and "--html /nonexistent/dir/x.html: cannot write it" in out.stderr
    latin = tmp_path / "gate.yaml"
    latin.write_bytes(b"thresholds: {iops: 0.1}\n# caf\xe9\n")
    for policy, message in ((latin, ":2: not UTF-8 text"), (Path("/dev/zero"), "not a regular file")):
        out = diskbench("gate", "last", "--policy", str(policy), db=db)  # /dev/zero: refused, not read
        assert out.returncode == 3 and message in out.stderr, out.stderr  # the gate's "no verdict"
    bad = tmp_path / "bad.yaml"
    bad.write_text("thresholds:\n  iops: .nan\nbaseline_runs: 99999999999999999999\n")
    out = diskbench("gate", "last", "--policy", str(bad), db=db)
    assert out.returncode == 3 and f"{bad}:2: thresholds.iops: nan is not a relative threshold" in out.stderr
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("thresholds: {iops: 0.1}\nmin_run: 3\n")
    out = diskbench("gate", "last", "--policy", str(unknown), db=db)
    assert out.returncode == 3 and f"{unknown}:2: (top level): unknown key 'min_run'" in out.stderr, out.stderr


def test_control_characters_from_an_imported_file_are_shown_escaped(db: Path, tmp_path: Path) -> None:
    doc = json.loads((FIO_FIXTURES / "randread-4k-qd16.json").read_text())
    for job in doc["jobs"]:
        job["jobname"] = "evil\x1b[2J\x1b[31mname\nforged row | x |\u202e"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(doc))
    for fmt in ("table", "markdown", "csv", "json"):
        out = diskbench("import", str(path), "--format", fmt, db=db)
        assert out.returncode == 0, out.stderr
        assert "\x1b" not in out.stdout + out.stderr and "\u202e" not in out.stdout, fmt
        if fmt == "json":
            names = {r["workload"] for r in json.loads(out.stdout)["results"]}
            assert names == {doc["jobs"][0]["jobname"]}  # the data itself is kept whole
        else:
            assert "evil\\x1b[2J\\x1b[31mname" in out.stdout, (fmt, out.stdout)
            if fmt == "markdown":
                assert "name\\nforged row \\| x \\|" in out.stdout  # one cell, one row
    shown = diskbench("runs", db=db)
    assert "\x1b" not in shown.stdout


def _gate_history(db: Path) -> tuple[str, str]:
    store = Store(db)
    for day, iops in enumerate([1000, 1500, 700, 1300, 600, 1400, 800]):
        add_run(store, day, {"a": [iops]})
    noisy = add_run(store, 8, {"a": [990]})
    for day in range(9, 16):
        add_run(store, day, {"b": [1000 + day % 2]})
    worse = add_run(store, 16, {"b": [500]})
    return noisy, worse


@needs_fio
def test_every_exit_code_of_the_readme_table(db: Path, tmp_path: Path, loop: str) -> None:
    """Each row of the README's exit-code table, produced through the CLI."""
    table = (REPO / "README.md").read_text().split("**Exit codes**", 1)[1].split("\n\n", 2)[1]
    codes = {int(m) for m in re.findall(r"^\| (\d+) \|", table, re.MULTILINE)}
    work = tmp_path / "work"
    work.mkdir()
    quick = profile_file(tmp_path, yaml.safe_dump({"name": "q", "defaults": {"size": "4M", "runtime": "1s",
                                                   "ramp_time": "0s", "ioengine": "psync"},
                                                   "workloads": [{"name": "w", "rw": "randwrite"}]}), "q.yaml")
    failing = profile_file(tmp_path, yaml.safe_dump({"name": "f", "defaults": {"size": "4M", "runtime": "1s"},
                                                     "workloads": [{"name": "w", "rw": "randwrite",
                                                                    "extra": {"lockfile": "bogus"}}]}), "f.yaml")
    noisy, worse = _gate_history(db)
    import subprocess

    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True)
    seen: dict[int, str] = {}

    def expect(code: int, *args: str, env: dict[str, str] | None = None) -> None:
        out = diskbench(*args, db=db, env=env)
        assert out.returncode == code, (args, out.stderr)
        seen[code] = " ".join(args)

    expect(0, "run", "--profile", str(quick), "--target", str(work))
    expect(1, "run", "--profile", str(failing), "--target", str(work))
    expect(1, "gate", worse)  # REGRESSED
    expect(2, "run", "--profile", str(quick), "--target", str(tmp_path / "nope"))
    expect(3, "gate", "20990101-000000-none")
    expect(4, "gate", noisy, "--strict")
    expect(5, "run", "--profile", str(quick), "--target", str(work), env={"PATH": "/nonexistent"})
    expect(6, "run", "--profile", str(quick), "--set", f"target={{device: {loop}, fs: xfs}}")
    slow = start_diskbench("run", "--profile", str(quick), "--set", "defaults.runtime=30s", "--target", str(work),
                           db=db)
    wait_for_job(db, "w", timeout=60)
    code, _ = finish(slow, signal.SIGINT)
    assert code == 130
    seen[130] = "Ctrl-C during run"
    assert codes - {70} == set(seen), (codes, seen)  # 70 is a bug: no input may cause it
