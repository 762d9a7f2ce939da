"""Plans: sweeps expand, repeats interleave, machines and hosts bind workloads to targets."""

from __future__ import annotations

import pytest

from diskbench.errors import ProfileError
from diskbench.expand import build_plan
from diskbench.profile import LoadedProfile, load_profile, parse_profile


def _plan(text: str, **kw: object):  # type: ignore[no-untyped-def]
    return build_plan(LoadedProfile(profile=parse_profile(text), path="p.yaml", text=text), **kw)  # type: ignore[arg-type]


def test_sweep_expands_one_job_per_value() -> None:
    plan = _plan("name: s\nworkloads:\n  - {name: mix, rw: randrw, rwmixread: [100, 75, 50, 25, 0]}\n")
    assert [j.workload.name for j in plan.units] == [f"mix-rwmixread{v}" for v in (100, 75, 50, 25, 0)]
    assert [j.workload.rwmixread for j in plan.units] == [100, 75, 50, 25, 0]
    assert plan.units[1].params()["sweep"] == {"param": "rwmixread", "value": 75, "base": "mix"}
    bs = _plan("name: s\nworkloads:\n  - {name: t, rw: read, sweep: {bs: [4k, 1M]}}\n")
    assert [(j.workload.name, j.workload.bs) for j in bs.units] == [("t-bs4k", "4k"), ("t-bs1M", "1M")]


def test_repeats_interleave_and_keep_a_base_key() -> None:
    plan = _plan("name: r\nrepeats: 2\nworkloads:\n  - {name: a, rw: read}\n  - {name: b, rw: read}\n")
    assert [(j.workload.name, j.repeat) for j in plan.units] == [("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert [j.key for j in plan.units] == ["local/scratch/a#1", "local/scratch/b#1", "local/scratch/a#2",
                                          "local/scratch/b#2"]
    assert {j.base_key for j in plan.units} == {"local/scratch/a", "local/scratch/b"}
    assert len(_plan("name: r\nworkloads:\n  - {name: a, rw: read}\n", repeats=3).units) == 3


def test_host_targets_filter_workloads_and_machines_run_in_parallel() -> None:
    plan = _plan("name: h\nhosts:\n"
                 "  - {name: h1, address: 192.0.2.1, targets: {t: temp, d: {dir: /data}}}\n"
                 "  - {name: h2, address: 192.0.2.2}\n"
                 "workloads:\n  - {name: a, rw: read, runtime: 10s, targets: [d]}\n"
                 "  - {name: b, rw: read, runtime: 10s}\n")
    assert [j.key for j in plan.units] == ["h1/t/b", "h1/d/a", "h1/d/b", "h2/scratch/b"]  # a: only on d
    one = plan.units[0].expected_s
    assert plan.expected_s == 3 * one  # h1 has three jobs, h2 one, and they run side by side


def test_e8_family_plans_every_seed_machine() -> None:
    plan = build_plan(load_profile("e8-family"))
    sizes = {j.machine_spec["size"] for j in plan.units if j.machine_spec}
    assert sizes == {"Standard_E8as_v4", "Standard_E8ds_v4", "Standard_E8_v4", "Standard_L8s_v2"}
    assert len(plan.units) == 14


def test_machine_with_named_targets_binds_workloads() -> None:
    plan = build_plan(load_profile("d8ds-premium"))
    by_target: dict[str, list[str]] = {}
    for j in plan.units:
        by_target.setdefault(j.target_label, []).append(j.workload.name)
    assert by_target == {"nocache-writes": ["max-write", "throughput-write-64k"],
                         "cache-reads": ["max-read", "throughput-read-64k"],
                         "cache-reads+nocache-writes": ["mixed"]}  # fioreadwrite.ini: one run, both disks
    assert all(j.entry is not None and getattr(j.entry, "size", None) == "Standard_D8ds_v4" for j in plan.units)


def test_machines_keeps_only_the_named_machines() -> None:
    plan = build_plan(load_profile("e8-family"), machines=["l8s-v2-nvme", "e8ds-v4-temp"])
    assert [(j.machine, j.workload.name) for j in plan.units] == [
        ("e8ds-v4-temp", "sync"), ("e8ds-v4-temp", "async"), ("l8s-v2-nvme", "sync"), ("l8s-v2-nvme", "async-nvme")]
    with pytest.raises(ProfileError, match="has no machine or host 'nope'"):
        build_plan(load_profile("e8-family"), machines=["nope"])
