"""Rendered fio job files: golden, deterministic, strict, and accepted by fio itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import jinja2
import pytest

from diskbench.engines.fio.render import job_filename, render_fio
from diskbench.expand import build_plan
from diskbench.profile import load_profile
from diskbench.resources import environment

from ...conftest import diskbench, needs_fio

GOLDEN = Path(__file__).parent / "golden" / "local"


def _rendered(by_hand: bool = False) -> dict[str, str]:
    plan = build_plan(load_profile("local"), target_dir="/mnt/data")
    return {job_filename(j): render_fio(j, "/mnt/data", by_hand=by_hand) for j in plan.units}


def test_local_profile_matches_golden_files() -> None:
    rendered = _rendered()
    if os.environ.get("DISKBENCH_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name, text in rendered.items():
            (GOLDEN / name).write_text(text)
    assert sorted(p.name for p in GOLDEN.glob("*.fio")) == sorted(rendered)
    for name, text in rendered.items():
        assert text == (GOLDEN / name).read_text(), f"{name} differs (DISKBENCH_UPDATE_GOLDEN=1 rewrites)"


def test_rendering_is_deterministic_and_complete() -> None:
    first, second = _rendered(), _rendered()
    assert first == second
    for text in first.values():
        assert "clat_percentiles=1" in text
        assert "percentile_list=1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99" in text
        assert "direct=1" in text and "time_based=1" in text
        assert "True" not in text and "False" not in text  # booleans are written 1/0
        assert text.count("[") == 2  # [global] and one job section: one reporting group


def test_extra_options_are_rendered_sorted(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("name: p\nworkloads:\n  - name: a\n    rw: randrw\n"
                       "    extra: {norandommap: true, fsync: 4, buffer_compress_percentage: 50}\n")
    (job,) = build_plan(load_profile(str(profile))).units
    text = render_fio(job, "/d")
    assert text.index("buffer_compress_percentage=50") < text.index("fsync=4") < text.index("norandommap=1")
    assert "rwmixread=50" in text


def test_strict_undefined(tmp_path: Path) -> None:
    (tmp_path / "job.ini.j2").write_text("x={{ not_there }}\n")
    (job, *_) = build_plan(load_profile("local")).units
    with pytest.raises(jinja2.UndefinedError):
        render_fio(job, "/d", environment(tmp_path))


@needs_fio
def test_fio_accepts_every_rendered_file(tmp_path: Path) -> None:
    for name, text in _rendered().items():
        path = tmp_path / name
        path.write_text(text)
        out = subprocess.run(["fio", "--parse-only", str(path)], capture_output=True, text=True)
        assert out.returncode == 0, (name, out.stderr)


def test_render_command_writes_files(tmp_path: Path) -> None:
    out = diskbench("render", "--profile", "local", "--target", "/mnt/data", "--out", str(tmp_path / "jobs"),
                    db=tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    files = sorted(p.name for p in (tmp_path / "jobs").iterdir())
    assert files == sorted(_rendered())
    assert (tmp_path / "jobs" / files[0]).read_text() == _rendered(by_hand=True)[files[0]]
    # what a run executes is unchanged (testbed keys stay); the files for people add group_reporting
    assert _rendered()[files[0]] != _rendered(by_hand=True)[files[0]]
    assert "group_reporting" not in _rendered()[files[0]]


@needs_fio
def test_rendered_files_run_by_hand_as_their_comment_says(tmp_path: Path) -> None:
    import json
    import re
    import shlex

    jobs, data = tmp_path / "jobs", tmp_path / "data"
    data.mkdir()
    out = diskbench("render", "--profile", "local", "--out", str(jobs), db=tmp_path / "db.sqlite")
    assert out.returncode == 0 and "DISKBENCH_TARGET set to" in out.stderr
    text = (jobs / "01-async.fio").read_text()
    assert "directory=${DISKBENCH_TARGET}" in text and "group_reporting=1" in text
    command = re.search(r"^; Run by hand: (.*)$", text, re.M).group(1)  # type: ignore[union-attr]
    argv = shlex.split(command.replace("/path/to/an/existing/dir", str(data)))
    env = {**os.environ, **dict(a.split("=", 1) for a in argv if "=" in a and not a.startswith("-"))}
    argv = [a for a in argv if not ("=" in a and not a.startswith("-"))]
    argv[1:1] = ["--runtime=1", "--ramp_time=0", "--size=4M", f"--output={tmp_path / 'o.json'}"]
    ran = subprocess.run(argv, cwd=jobs, env=env, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    doc = json.loads((tmp_path / "o.json").read_text())
    assert [j["jobname"] for j in doc["jobs"]] == ["async"]  # numjobs=4, one reported group
    assert any(data.iterdir())
