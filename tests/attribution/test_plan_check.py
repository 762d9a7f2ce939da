"""plan warns about jobs too short to get past a disk's burst credits (the seeds' P4 OS disk)."""

from __future__ import annotations

from diskbench.attribution.plan_check import burst_warnings
from diskbench.plan import build_plan
from diskbench.profile import load_profile

from ..conftest import diskbench


def test_the_p4_os_disk_jobs_are_flagged_and_nothing_else() -> None:
    warnings = burst_warnings(build_plan(load_profile("e8-family")))
    machines = {w.split(":")[0] for w in warnings}
    assert machines == {"e8ds-v4-os-readwrite", "e8ds-v4-os-nocache"}
    assert all("the P4 burst lasts up to 30 min at full credits" in w for w in warnings)
    assert burst_warnings(build_plan(load_profile("d8ds-premium"))) == []  # P30s have no credit burst


def test_a_long_enough_job_is_not_flagged() -> None:
    loaded = load_profile("e8-family", ["defaults.runtime=40m", "defaults.time_based=true"])
    assert burst_warnings(build_plan(loaded)) == []


def test_plan_prints_them() -> None:
    out = diskbench("plan", "--profile", "e8-family")
    assert out.returncode == 0, out.stderr
    assert "warning: e8ds-v4-os-nocache: async-os on dir:/" in out.stderr
