"""Fuzzing what people type: profiles and ``--set``, through ``diskbench plan`` in this process.

Mutations of every bundled profile (characters replaced, inserted and deleted, control and
non-ASCII characters, YAML's special tokens, lines duplicated and cut) and random ``--set``
key paths and values: each must give a plan (exit 0) or a one-line error naming the file or the
``--set`` (exit 2), never an internal error (exit 70) or a traceback. 2,000 examples each.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diskbench.cli import main
from diskbench.resources import profiles_dir

PROFILES = {p.stem: p.read_text() for p in sorted(profiles_dir().glob("*.yaml"))}
TOKENS = ["\n", " ", ":", "- ", "[", "]", "{", "}", ",", "&a", "*a", "!!str", "!!python/object:os.system", "? ",
          "|", ">", "'", '"', "#", "%YAML 1.1\n", "---\n", "...\n", ".nan", ".inf", "-1", "1e999", "0x", "~",
          "\x00", "\x1b", "\t", "\r", "\u202e", "\ufeff", "é", "9" * 40, "99999999999P", "1e30h"]
KEYS = ["name", "description", "defaults.runtime", "defaults.size", "defaults.bs", "defaults.iodepth",
        "defaults.extra", "defaults.extra.filename", "defaults.ioengine", "target", "target.dir", "repeats",
        "workloads[0].name", "workloads[0].rw", "workloads[0].bs", "workloads[0].sweep", "workloads[99].bs",
        "destroy_data_on", "hosts", "machines[0].size", "machines[0].target", "shared", "defaults.drain_burst"]
SETTINGS = settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def plan_in_process(*args: str) -> tuple[int, str]:
    """``diskbench plan ...`` in this process: (exit code, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["plan", *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, err.getvalue()


def check(code: int, err: str, where: str) -> None:
    assert code != 70 and "internal error" not in err and "Traceback" not in err, err
    assert code in (0, 2), (code, err)
    if code == 2:
        last = err.rstrip("\n").splitlines()[-1] if err.strip() else ""
        assert err.startswith(("error: ", "Usage:", "pre-flight:")) or "error: " in err, err
        assert where in err or "--set" in err or "Error:" in err, err
        assert "\x1b" not in err and "\x00" not in err, repr(last)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = PROFILES[draw(st.sampled_from(sorted(PROFILES)))]
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        what = draw(st.sampled_from(["insert", "replace", "delete", "duplicate", "cut"]))
        piece = draw(st.one_of(st.sampled_from(TOKENS), st.text(max_size=8)))
        if what == "insert":
            text = text[:at] + piece + text[at:]
        elif what == "replace":
            text = text[:at] + piece + text[at + len(piece):]
        elif what == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif what == "duplicate":
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at) + 1 or len(text)
            text = text[:line_end] + text[line_start:line_end] + text[line_end:]
        else:
            text = text[:at]
    return text


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    os.environ.setdefault("CI", "true")
    return tmp_path_factory.mktemp("fuzz")


@SETTINGS
@given(text=mutated())
def test_mutated_profiles_plan_or_say_why(folder: Path, text: str) -> None:
    path = folder / "fuzz.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    code, err = plan_in_process("--profile", str(path))
    check(code, err, str(path))


@SETTINGS
@given(key=st.one_of(st.sampled_from(KEYS), st.text(max_size=20)),
       value=st.one_of(st.sampled_from(TOKENS), st.text(max_size=30), st.integers().map(str),
                       st.floats().map(repr)),
       profile=st.sampled_from(sorted(PROFILES)))
def test_random_set_overrides_plan_or_say_why(key: str, value: str, profile: str) -> None:
    code, err = plan_in_process("--profile", profile, "--set", f"{key}={value}")
    check(code, err, "--set" if "pre-flight" not in err else str(profiles_dir() / f"{profile}.yaml"))
