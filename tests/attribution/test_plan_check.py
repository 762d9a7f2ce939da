"""plan warns about jobs too short to get past a disk's burst credits (the seeds' P4 OS disk)."""

from __future__ import annotations

from pathlib import Path

import yaml

from diskbench.attribution.plan_check import burst_advice, burst_warnings
from diskbench.expand import build_plan
from diskbench.profile import load_profile

from ..conftest import diskbench

PROFILES = Path(__file__).parents[2] / "profiles"


def _without_deliberate(tmp_path: Path) -> str:
    doc = yaml.safe_load((PROFILES / "e8-family.yaml").read_text())
    for w in doc["workloads"]:
        w.pop("deliberate", None)
    path = tmp_path / "e8.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_the_p4_os_disk_jobs_are_flagged_once_and_nothing_else(tmp_path: Path) -> None:
    (warning,) = burst_warnings(build_plan(load_profile(_without_deliberate(tmp_path))))
    assert warning.startswith("e8ds-v4-os-readwrite, e8ds-v4-os-nocache: sync-os, async-os on dir:/ run ")
    assert "the P4 burst lasts up to 30 min at full credits" in warning and "drain_burst: true" in warning
    assert burst_warnings(build_plan(load_profile("d8ds-premium"))) == []  # P30s have no credit burst


def test_the_seed_measures_the_burst_on_purpose_and_says_why_once() -> None:
    (note,) = burst_advice(build_plan(load_profile("e8-family")))
    assert note.reason is not None and "3,499 IOPS" in note.text and "on purpose" in note.text


def test_a_long_enough_job_is_not_flagged(tmp_path: Path) -> None:
    loaded = load_profile(_without_deliberate(tmp_path), ["defaults.runtime=40m", "defaults.time_based=true"])
    assert burst_warnings(build_plan(loaded)) == []


def test_plan_prints_them(tmp_path: Path) -> None:
    out = diskbench("plan", "--profile", _without_deliberate(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("warning: e8ds-v4-os-readwrite, e8ds-v4-os-nocache: sync-os, async-os on dir:/") == 1
    assert "note: " not in out.stderr
