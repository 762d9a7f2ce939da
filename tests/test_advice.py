"""Warnings before a run: too short, too many jobs for the CPUs, too small, fits the page cache."""

from __future__ import annotations

from pathlib import Path

from diskbench.advice import stability_warnings
from diskbench.plan import build_plan
from diskbench.profile import load_profile

from .conftest import diskbench, needs_fio


def test_the_local_profile_is_flagged_on_a_small_machine() -> None:
    warnings = stability_warnings(build_plan(load_profile("local")), cpus=2, memory=8 << 30)
    text = "\n".join(warnings)
    assert len(warnings) == 3
    assert "measure less than 30 s" in text and "async (4 jobs)" in text and "2 CPUs" in text
    assert "working set under 1 GiB" in text and "async (512.0MiB)" in text


def test_a_long_large_profile_is_quiet_and_buffered_io_is_flagged(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("name: big\ndefaults: {runtime: 60s, size: 2G}\n"
                    "workloads:\n  - {name: rr, rw: randread, numjobs: 4}\n")
    assert stability_warnings(build_plan(load_profile(str(path))), cpus=64, memory=8 << 30) == []
    buffered = stability_warnings(build_plan(load_profile(str(path), {"defaults.direct": "false"})),
                                  cpus=64, memory=64 << 30)
    assert len(buffered) == 1 and "page cache" in buffered[0]
    drained = load_profile(str(path), {"workloads[0].drain_burst": "true"})
    assert stability_warnings(build_plan(drained), cpus=64, memory=8 << 30) == []  # the default ramp_time: 2s
    unramped = load_profile(str(path), {"workloads[0].drain_burst": "true", "defaults.ramp_time": "0s"})
    (warning,) = stability_warnings(build_plan(unramped), cpus=64, memory=8 << 30)
    assert warning.startswith("rr: drain_burst with ramp_time 0; the credits a disk earns")


@needs_fio
def test_run_warns_before_it_starts(db: Path, tiny_profile: Path, workdir: Path) -> None:
    out = diskbench("run", "--profile", str(tiny_profile), "--target", str(workdir), db=db)
    assert out.returncode == 0, out.stderr
    first_job = out.stderr.index("[1/2]")
    assert "warning: " in out.stderr[:first_job] and "measure less than 30 s" in out.stderr[:first_job]
