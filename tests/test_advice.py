"""Warnings before a run: too short, too many jobs for the CPUs, too small, fits the page cache."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from diskbench.advice import stability_advice, stability_warnings
from diskbench.expand import build_plan
from diskbench.profile import load_profile

from .conftest import diskbench, needs_fio

PROFILES = Path(__file__).parents[1] / "profiles"


def _without_deliberate(name: str, tmp_path: Path) -> str:
    """A bundled profile with its ``deliberate:`` reasons taken out."""
    doc = yaml.safe_load((PROFILES / f"{name}.yaml").read_text())
    for block in [doc.get("defaults", {}), *doc["workloads"]]:
        block.pop("deliberate", None)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_the_local_profile_would_be_flagged_on_a_small_machine(tmp_path: Path) -> None:
    plain = _without_deliberate("local", tmp_path)
    warnings = stability_warnings(build_plan(load_profile(plain)), cpus=2, memory=8 << 30)
    text = "\n".join(warnings)
    assert len(warnings) == 3
    assert "measure less than 30 s" in text and "async (4 jobs)" in text and "2 CPUs" in text
    assert "working set under 1 GiB" in text and "async (512.0MiB)" in text


def test_a_bundled_profile_does_not_set_off_its_own_warnings() -> None:
    """Issue 26: what the local profile chooses on purpose is a note with its reason, said once."""
    advice = stability_advice(build_plan(load_profile("local")), cpus=2, memory=8 << 30)
    assert [a.kind for a in advice if a.reason is None] == []
    notes = {a.kind: a.text for a in advice}
    assert set(notes) == {"short_runtime", "jobs_over_cpus", "small_working_set"}
    assert notes["short_runtime"].startswith("sync, async, randread-4k, seqread-64k: measure less than 30 s, "
                                             "on purpose: a first look in under a minute")
    out = diskbench("plan", "--profile", "local")
    assert out.returncode == 0 and "warning" not in out.stderr
    per_workload = 2 if (os.cpu_count() or 1) < 4 else 0  # async and randread-4k run 4 jobs, each its reason
    assert out.stderr.count("note: ") == 2 + per_workload and out.stderr.count("measure less than 30 s") == 1


def test_every_bundled_profile_plans_without_a_warning() -> None:
    for path in sorted(PROFILES.glob("*.yaml")):
        out = diskbench("plan", "--profile", path.stem)
        assert out.returncode == 0 and "warning" not in out.stderr, (path.stem, out.stderr)


def test_a_deliberate_reason_is_checked_like_any_key(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: p\nworkloads:\n  - {name: a, rw: read, deliberate: {too_short: x}}\n")
    out = diskbench("plan", "--profile", str(path))
    assert out.returncode == 2 and f"{path}:3" in out.stderr and "short_runtime" in out.stderr


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
