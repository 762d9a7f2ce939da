"""Testbed keys: the declared configuration, not where a scratch directory happened to be."""

from __future__ import annotations

from diskbench.engines.fio import FioEngine
from diskbench.engines.fio.render import render_fio
from diskbench.expand import build_plan
from diskbench.plan import Unit
from diskbench.profile import load_profile
from diskbench.runner.testbed import testbed_key as _testbed_key

normalized_job_file = FioEngine().testbed_text


def key_of(job: Unit, rendered: str, version: str) -> str:
    return _testbed_key(job, normalized_job_file(rendered), "fio", version)


def test_testbed_ignores_scratch_path_but_not_settings() -> None:
    job = build_plan(load_profile("local")).units[0]
    a = key_of(job, render_fio(job, "/x/diskbench-scratch-aaaa"), "3.33")
    b = key_of(job, render_fio(job, "/x/diskbench-scratch-bbbb"), "3.33")
    assert a == b
    assert key_of(job, render_fio(job, "/x/s"), "3.36") != a
    other = build_plan(load_profile("local")).units[1]
    assert key_of(other, render_fio(other, "/x/s"), "3.33") != a
    assert "directory=<target>" in normalized_job_file(render_fio(job, "/x"))
