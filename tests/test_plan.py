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


# -- a shared volume, its client group, and a machine that mounts it itself ------------------------------

SHARED = """\
name: s
defaults: {rw: randread, runtime: 10s, ramp_time: 0, size: 1G}
workloads:
  - {name: group-mix, rw: randrw, rwmixread: [100, 0]}
  - {name: one, iodepth: [1, 16], targets: [with, without]}
hosts:
  - {name: c1, address: 192.0.2.11}
  - {name: c2, address: 192.0.2.12}
  - name: single
    address: 192.0.2.13
    targets:
      with: {nfs: shared, options: "rw,nconnect=8,hard,vers=3,tcp"}
      without: {nfs: shared, options: "rw,hard,vers=3,tcp"}
    workloads: [one]
shared:
  target: {nfs: "192.0.2.2:/export"}
  clients: [c1, c2]
"""


def test_a_machine_outside_the_group_mounts_the_shared_volume_itself_after_the_group() -> None:
    plan = _plan(SHARED)
    assert [(u.machine, u.target_label, u.workload.name) for u in plan.units] == [
        ("clients", "nfs:192.0.2.2:/export", "group-mix-rwmixread100"),
        ("clients", "nfs:192.0.2.2:/export", "group-mix-rwmixread0"),  # "one" names targets: not the group's
        ("single", "with", "one-iodepth1"), ("single", "with", "one-iodepth16"),
        ("single", "without", "one-iodepth1"), ("single", "without", "one-iodepth16")]  # one mount, then the other
    assert all(u.on_shared for u in plan.units)
    assert plan.shared_turns() == ["clients", "single"]
    group = sum(u.expected_s for u in plan.units if u.machine == "clients")
    own = sum(u.expected_s for u in plan.units if u.machine == "single")
    assert plan.wait_s("single") == group and plan.wait_s("clients") == 0 == plan.wait_s("c1")
    assert plan.expected_s == pytest.approx(group + own)  # one part measures the volume at a time


def test_a_machine_outside_the_group_that_does_not_mount_it_runs_beside_the_group() -> None:
    text = SHARED.replace("with: {nfs: shared, options: \"rw,nconnect=8,hard,vers=3,tcp\"}", "with: temp") \
        .replace("without: {nfs: shared, options: \"rw,hard,vers=3,tcp\"}", "without: {dir: /data}")
    plan = _plan(text)
    assert [u.machine for u in plan.units].count("single") == 4  # its units are kept, as its own
    assert plan.shared_turns() == ["clients"] and plan.wait_s("single") == 0
    per = {m: sum(u.expected_s for u in plan.units if u.machine == m) for m in ("clients", "single")}
    assert plan.expected_s == max(per.values())


@pytest.mark.parametrize("change, message", [
    (("  clients: [c1, c2]\n", ""), r"single mounts the shared volume itself \(nfs: shared\) but is a client of "
                                    r"the group \(shared.clients: default all\)"),
    (("clients: [c1, c2]", "clients: [c1, c2, single]"), r"single mounts the shared volume itself \(nfs: shared\) "
                                                         r"but is listed in shared.clients"),
    (('target: {nfs: "192.0.2.2:/export"}', "target: {nfs: shared}"), r"shared.target: nfs: shared names this very "
                                                                       r"target"),
    (("shared:\n  target: {nfs: \"192.0.2.2:/export\"}\n  clients: [c1, c2]\n", ""),
     r"single: a target nfs: shared mounts the run's shared volume, but the profile has no shared: block"),
])
def test_what_a_shared_mount_cannot_be_is_refused(change: tuple[str, str], message: str) -> None:
    assert change[0] in SHARED
    with pytest.raises(ProfileError, match=message):
        _plan(SHARED.replace(*change))


@pytest.mark.parametrize("target, message", [
    ("{dir: /data, warmup: 1m}", r"flush_cache empties the cache that d's warmup fills"),
    ("{device: /dev/nvme0n1, raw: true}", r"flush_cache: 1G lays out a data set beside the job's files, and d is a "
                                          r"raw device"),
])
def test_flush_cache_is_refused_where_it_cannot_flush(target: str, message: str) -> None:
    text = (f"name: f\nhosts:\n  - {{name: h1, address: 192.0.2.1, targets: {{d: {target}}}}}\n"
            "workloads:\n  - {name: r, rw: randread, flush_cache: 1G}\n")
    with pytest.raises(ProfileError, match=message):
        _plan(text)
    if "raw" in target:  # dropping the page cache needs no folder
        assert _plan(text.replace("flush_cache: 1G", "flush_cache: true")).units
    windows = ("name: f\nhosts:\n  - {name: w1, address: 192.0.2.1, platform: windows}\n"
               "workloads:\n  - {name: r, rw: randread, flush_cache: true}\n")
    with pytest.raises(ProfileError, match=r"flush_cache is not a step the windows platform has \(w1\)"):
        _plan(windows)


def test_flush_cache_is_counted_and_shown_where_it_runs() -> None:
    """Reading the separate set before every job it flushes, and laying it out once, on each machine."""
    from diskbench.plan import layout_seconds
    from diskbench.planning import report
    from diskbench.reports.plan_view import plan_json, plan_table

    text = ("name: f\nhosts:\n  - {name: h1, address: 192.0.2.1}\n  - {name: h2, address: 192.0.2.2}\n"
            "defaults: {rw: read, runtime: 10s}\nrepeats: 2\n"
            "workloads:\n  - {name: a, flush_cache: 2G, bs: [4k, 64k]}\n  - {name: b}\n")
    plan = _plan(text)
    plain = _plan(text.replace("flush_cache: 2G, ", ""))
    extra = [round(u.expected_s - p.expected_s) for u, p in zip(plan.units, plain.units, strict=True)]
    read = round(layout_seconds(2 << 30))
    first, again = [2 * read, read, 0], [read, read, 0]  # a-bs4k (laid out first, then read), a-bs64k, b
    assert extra == first + first + again + again  # h1, h2; then the repeat on each
    shown = plan_table(report(plan)).render(120)
    assert "10s +flush" in shown and shown.count("+flush") == 8
    assert [u["flush_cache"] for u in plan_json(report(plan))["units"]][:3] == ["2G", "2G", None]


def test_the_anf_profile_plans_its_series_then_the_nconnect_comparison() -> None:
    """Seed 002 in one run: the six clients' series on the group, then nconnect-client (a D32s_v4 outside
    the group) on its two mounts of the same volume, the knee of each curve searched (iodepth: auto, QD 1 to
    64, each step ended by the adaptive stop), the 256 KiB steps flushed first."""
    plan = build_plan(load_profile("anf-nfs-scaleout"))
    group = [u for u in plan.units if u.machines]
    single = [u for u in plan.units if u.machine == "nconnect-client"]
    assert len(group) == 42 and len(single) == 8 and len(plan.units) == 50
    assert plan.units[:42] == group  # the group's first: the single client takes the volume after it
    assert plan.shared_turns() == ["clients", "nconnect-client"]
    assert plan.wait_s("nconnect-client") == pytest.approx(sum(u.expected_s for u in group))
    assert getattr(single[0].entry, "size", None) == "Standard_D32s_v4"
    by_mount: dict[str, list[tuple[str, int | None, int | None]]] = {}
    for u in single:
        knee = u.workload.knee
        by_mount.setdefault(u.target_name, []).append((u.workload.rw or "", knee and knee.min_iodepth,
                                                       knee and knee.max_iodepth))
        assert u.workload.stop_rule is not None and u.workload.rounds == 8  # 7 doublings and 1 bisection at most
    sweep = [(rw, 1, 64) for rw in ("randread", "randwrite", "read", "write")]
    assert by_mount == {"nconnect8": sweep, "no-nconnect": sweep}
    options = {u.target_name: getattr(u.target, "options", "") for u in single}
    assert "nconnect=8" in options["nconnect8"] and "nconnect" not in options["no-nconnect"]
    assert all(getattr(u.target, "nfs", "") == "shared" for u in single)  # the run's volume, made once
    assert [u.workload.name for u in plan.units if u.workload.flush_cache] == [
        f"seq-256k-rwmixread{m}" for m in (100, 75, 50, 25, 0)]
    alone = build_plan(load_profile("anf-nfs-scaleout"), machines=["nconnect-client"])  # the comparison alone
    assert len(alone.units) == 8 and alone.shared_turns() == ["nconnect-client"]
    assert alone.wait_s("nconnect-client") == 0
