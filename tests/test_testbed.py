"""Testbed keys: the declared configuration, not where a scratch directory happened to be."""

from __future__ import annotations

from diskbench.plan import build_plan
from diskbench.profile import load_profile
from diskbench.render import render_fio
from diskbench.testbed import normalized_job_file
from diskbench.testbed import testbed_key as key_of


def test_testbed_ignores_scratch_path_but_not_settings() -> None:
    job = build_plan(load_profile("local")).jobs[0]
    a = key_of(job, render_fio(job, "/x/diskbench-scratch-aaaa"), "3.33")
    b = key_of(job, render_fio(job, "/x/diskbench-scratch-bbbb"), "3.33")
    assert a == b
    assert key_of(job, render_fio(job, "/x/s"), "3.36") != a
    other = build_plan(load_profile("local")).jobs[1]
    assert key_of(other, render_fio(other, "/x/s"), "3.33") != a
    assert "directory=<target>" in normalized_job_file(render_fio(job, "/x"))
