"""The attribution step without fio: what the job was (direct I/O, working set, raw device, written first,
clients, fio's stderr, a rate limit) sets off its warnings, its block size, queue, jobs and CPU reach the
verdict, each section of a unit is set against its own target's limits, the steady-state rule reads the
baseline after a burst, and a client group's limits are those every client has, summed.

Every expected warning is the text ``attribution/pitfalls.py`` documents, written out by hand."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import pytest
import yaml

from diskbench.attribution.attributor import Attributor, merged, provider_limits, summed
from diskbench.attribution.limit import Limit
from diskbench.engines.base import Place
from diskbench.model import DirectionResult, GroupResult, Series
from diskbench.plan import Job, Unit
from diskbench.profile.targets import DeviceTarget, DirTarget, TargetModel
from diskbench.profile.workload import Workload

from ..conftest import plan_of

DIRECT = "direct=0: the page cache is in the path, so this is partly RAM's figure; set direct: true"
INVALIDATION = ("fio could not drop the page cache (cache invalidation failed): reads may come from RAM; run as root "
                "or set direct: true")
NEVER_WROTE = ("read blocks of /dev/sdc that diskbench never wrote: a thin-provisioned disk answers them without "
               "touching media; set precondition: true on the target")
SAME_OFFSETS = "2 clients with randrepeat on issue the same random offsets; set randrepeat: 0 in extra"
QUEUE = ("too few I/Os in flight to reach any limit: the figure is the latency's; raise iodepth or numjobs to measure "
         "the cap")
CPU = ("fio's CPU was saturated: the client, not the disk, set the figure; add numjobs or a faster ioengine "
       "(io_uring)")


def working_set(size: str) -> str:
    return (f"working set {size}: small enough for device and host caches to hold; use size: 1G or more per job to "
            "measure the disk")


def _unit(**workload: Any) -> Unit:
    (unit,) = plan_of(yaml.safe_dump({"name": "t", "workloads": [{"name": "w", "rw": "randread", **workload}]})).units
    return unit


def _on(unit: Unit, target: TargetModel, name: str = "") -> Unit:
    return replace(unit, target=target, target_name=name)


def _group(direction: str = "read", iops: float = 5000.0, *, name: str = "w", bs: int = 4096,
           series: list[float] | None = None, hosts: list[str] | None = None, cpu_pct: float | None = None,
           stop: dict[str, Any] | None = None) -> GroupResult:
    d = DirectionResult(direction, iops, iops * bs, int(iops * 60), int(iops * 60 * bs), 60.0, None,
                        series=Series(1.0, list(series)) if series is not None else None)
    return GroupResult(name, [name], 1, "fio", "3.33", [d], hosts=hosts or [], cpu_pct=cpu_pct, stop=stop)


def _attribute(unit: Unit, group: GroupResult, limits: list[Limit] | None = None, *, filename: str | None = None,
               stderr: str = "", attributor: Attributor | None = None) -> DirectionResult:
    a = attributor or Attributor(lambda _t: list(limits or []))
    a.unit(unit, [Place(unit.workload, unit.target_label, None if filename else "/mnt/x", filename)], [group],
           stderr)
    return group.directions[0]


# --- what the job was -------------------------------------------------------------------------
def test_buffered_io_a_small_working_set_and_fios_stderr_are_warned_after_what_was_said() -> None:
    unit = _unit(direct=False, size="16M", numjobs=3)
    group = _group()
    group.directions[0].warnings.append("drained: the rate stepped down after 12 s")  # said before attribution
    d = _attribute(unit, group, stderr="fio: cache invalidation failed for /mnt/x/w.0.0")
    # 16 MiB per job in a directory: 3 jobs, 3 files, 48 MiB
    assert d.warnings == ["drained: the rate stepped down after 12 s", DIRECT, INVALIDATION, working_set("48.0MiB")]
    assert d.bound is None  # no limits and no CPU figure: nothing to attribute


def test_a_pitfall_the_profile_marks_deliberate_is_not_said_again() -> None:
    reasons = {"small_working_set": "the cache is what this job measures", "page_cache": "so is the page cache"}
    assert _attribute(_unit(direct=False, size="16M", deliberate=reasons), _group()).warnings == []


def test_direct_io_is_the_default_and_says_nothing() -> None:
    assert _attribute(_unit(direct=True), _group()).warnings == []
    assert _attribute(_unit(), _group()).warnings == []


def test_a_raw_device_is_one_working_set_and_its_unwritten_blocks_are_warned() -> None:
    unit = _on(_unit(size="16M", numjobs=3), DeviceTarget(device="/dev/sdc", raw=True))
    # every job reads the same device: 16 MiB, not 48
    assert _attribute(unit, _group(), filename="/dev/sdc").warnings == [NEVER_WROTE, working_set("16.0MiB")]


def test_a_device_written_first_or_preconditioned_is_not_unwritten() -> None:
    target = DeviceTarget(device="/dev/sdc", raw=True)
    reads = _on(_unit(), target)
    a = Attributor(lambda _t: [])
    a.unit(_on(_unit(rw="randwrite"), target), [], [])  # a write job earlier in the run, on the same target
    assert _attribute(reads, _group(), filename="/dev/sdc", attributor=a).warnings == []
    assert a.written == {"device:/dev/sdc"}
    # a read job before it leaves it unwritten
    fresh = Attributor(lambda _t: [])
    fresh.unit(_on(_unit(rw="randread"), target), [], [])
    assert fresh.written == set()
    assert _attribute(reads, _group(), filename="/dev/sdc", attributor=fresh).warnings == [NEVER_WROTE]
    preconditioned = _on(_unit(), DeviceTarget(device="/dev/sdc", raw=True, precondition=True))
    assert _attribute(preconditioned, _group(), filename="/dev/sdc").warnings == []


def test_clients_issuing_the_same_offsets_are_warned_only_when_there_are_several() -> None:
    def same(w: Workload) -> bool:
        return w.rw == "randread"

    a = Attributor(lambda _t: [], same_offsets=same)
    assert _attribute(_unit(), _group(hosts=["c1", "c2"]), attributor=a).warnings == [SAME_OFFSETS]
    assert _attribute(_unit(rw="read"), _group(hosts=["c1", "c2"]), attributor=a).warnings == []  # own offsets
    assert _attribute(_unit(), _group(hosts=["c1"]), attributor=a).warnings == []  # one client
    assert _attribute(_unit(), _group(hosts=[]), attributor=a).warnings == []  # a machine of its own
    # without the question (one machine's attributor) nothing is assumed
    assert _attribute(_unit(), _group(hosts=["c1", "c2"])).warnings == []


# --- what reaches the verdict -------------------------------------------------------------------
def test_the_block_size_counts_io_units() -> None:
    """Azure counts an I/O over 256 KiB as several: 500 IOPS of 1 MiB are 2,000 of the cap's."""
    cap = Limit("disk_iops", 2000, "P30", "t", io_unit_bytes=256 * 1024)
    d = _attribute(_unit(bs="1M", rw="read"), _group(iops=500.0, bs=1 << 20), [cap])
    assert d.bound is not None and (d.bound["kind"], d.bound["value"], d.bound["ratio"]) == ("disk", 2000.0, 1.0)
    assert "(I/O over 256 KiB counted as several)" in d.bound["text"]


def test_a_shallow_queue_binds_and_is_warned_unless_the_rate_is_capped_on_purpose() -> None:
    cap = [Limit("disk_iops", 50000, "P30", "t")]
    d = _attribute(_unit(iodepth=2, numjobs=2), _group(iops=1000.0), cap)
    assert d.bound is not None and d.bound["kind"] == "queue"
    assert d.bound["text"] == "read 1,000 IOPS: bound by the queue (QD2 x 2 job(s)); 2% of the P30 50,000 IOPS"
    assert d.warnings == [QUEUE]
    assert _attribute(_unit(iodepth=2, numjobs=2, rate_iops=250), _group(iops=1000.0), cap).warnings == []


def test_a_workload_without_block_size_jobs_or_depth_is_taken_at_fios_defaults() -> None:
    """bs 4 KiB, one job, QD1 (fio's own defaults), and a size fio reads as a share of the file: no working set."""
    unit = _unit()
    unit = replace(unit, workload=unit.workload.model_copy(update={"bs": None, "numjobs": None, "iodepth": None,
                                                                   "size": "50%"}))
    cap = Limit("disk_iops", 1000, "P30", "t", io_unit_bytes=4096)
    d = _attribute(unit, _group(iops=1000.0), [cap])
    assert d.bound is not None and (d.bound["kind"], d.bound["value"]) == ("disk", 1000.0)  # one I/O unit each
    assert d.warnings == []  # 50% of the file: no working set in bytes to warn about
    unit = replace(unit, workload=unit.workload.model_copy(update={"size": None}))
    d = _attribute(unit, _group(iops=100.0), [Limit("disk_iops", 1000, "P30", "t")])
    assert d.bound is not None and d.bound["text"].startswith("read 100 IOPS: bound by the queue (QD1 x 1 job(s))")
    assert d.warnings == [QUEUE]  # and no working set claimed


def test_a_read_write_block_size_pair_is_taken_at_its_first_size() -> None:
    """fio's ``bs=64k,4k`` (reads, writes) and ``bs=64k:...``: the read size counts."""
    cap = Limit("disk_iops", 1000, "P30", "t", io_unit_bytes=16 * 1024)
    for bs in ("64k,4k", "64k:4k"):
        unit = _unit()
        unit = replace(unit, workload=unit.workload.model_copy(update={"bs": bs, "size": "4G,1G"}))
        d = _attribute(unit, _group(iops=250.0, bs=65536), [cap])
        assert d.bound is not None and d.bound["value"] == 1000.0, bs  # 4 units of 16 KiB each
        assert d.warnings == []  # 4 GiB: no small working set


def test_fios_cpu_is_a_verdict_even_without_limits() -> None:
    d = _attribute(_unit(), _group(cpu_pct=95.0))
    assert d.bound is not None and d.bound["kind"] == "cpu" and d.bound["limits"] == []
    assert d.bound["text"] == ("read 5,000 IOPS: bound by the client CPU (fio used 95% of a core per job: each job's "
                               "thread was CPU-bound)")
    assert d.warnings == [CPU]
    # the machine's cores: 4 jobs at 50% each are 200% of 2 cores
    d = _attribute(_unit(numjobs=4), _group(cpu_pct=50.0), attributor=Attributor(lambda _t: [], cpus=2))
    assert d.bound is not None and d.bound["kind"] == "cpu"
    assert "fio used 200% of 2 cores: the client ran out of CPU" in d.bound["text"]
    # below saturation and without limits, no verdict is worth showing
    assert _attribute(_unit(), _group(cpu_pct=10.0)).bound is None


# --- steady state -------------------------------------------------------------------------------
RAMP = [100.0 + 20 * i for i in range(12)]  # 100, 120, ... 320 IOPS: never steady
RAMP_NOT_STEADY = ("not steady: steady state not achieved: rounds 8-12, mean 280.0; range 80.0 (allowed 56.0), "
                   "slope excursion 80.0 (allowed 28.0); run longer, or precondition the target")


def test_a_series_that_never_settles_is_warned() -> None:
    assert _attribute(_unit(), _group(series=RAMP)).warnings == [RAMP_NOT_STEADY]
    # an adaptive stop judged the series itself
    stop = {"reason": "max reached", "seconds": 12.0, "reached": 0.2, "confidence": 0.95, "detail": ""}
    assert _attribute(_unit(), _group(series=RAMP, stop=stop)).warnings == []
    # a profile that says it is on purpose
    quiet = _unit(deliberate={"not_steady": "the ramp is what this job measures"})
    assert _attribute(quiet, _group(series=RAMP)).warnings == []


def test_after_a_burst_only_the_baseline_is_judged() -> None:
    """Eight steady seconds of burst, then a baseline that swings: the whole series has a steady window
    (the burst's), the baseline has none, and the baseline is what the result is left at."""
    series = [350.0] * 8 + [50.0, 60.0, 40.0, 70.0, 35.0, 65.0, 45.0, 75.0]
    d = _attribute(_unit(), _group(iops=sum(series) / 16, series=series), [Limit("disk_iops", 50, "P10 x0.1", "t")])
    assert d.bound is not None and d.bound["phases"]["baseline"]["start_s"] == 8
    assert [w for w in d.warnings if w.startswith("not steady")] == [
        "not steady: steady state not achieved: rounds 4-8, mean 58.0; range 40.0 (allowed 11.6), slope excursion "
        "8.0 (allowed 5.8); run longer, or precondition the target"]


# --- a unit's jobs and their targets ----------------------------------------------------------------
def _sections() -> tuple[Unit, dict[str, list[Limit]]]:
    base = _unit()
    reader = base.workload.model_copy(update={"name": "reader1", "rw": "randread"})
    writer = base.workload.model_copy(update={"name": "writer1", "rw": "randwrite"})
    unit = replace(base, sections=[Job(reader, "cached", DirTarget(dir="/mnt/cached")),
                                   Job(writer, "striped", DirTarget(dir="/mnt/striped"))])
    table = {"/mnt/cached": [Limit("disk_iops", 5000, "P30 cached", "t", cache_miss_only=True)],
             "/mnt/striped": [Limit("disk_iops", 10000, "2 x P30", "t")]}
    return unit, table


def _scopes(d: DirectionResult) -> list[str]:
    assert d.bound is not None
    return [lim["scope"] for lim in d.bound["limits"]]


def test_each_section_is_set_against_its_own_targets_limits() -> None:
    unit, table = _sections()
    asked: list[str] = []

    def limits_of(target: TargetModel) -> list[Limit]:
        asked.append(cast(DirTarget, target).dir)
        return table[cast(DirTarget, target).dir]

    a = Attributor(limits_of)
    writes, reads, both = (_group("write", name="writer1"), _group(name="reader1"),
                           GroupResult("all", ["merged"], 2, "fio", "3.33", [_group().directions[0]]))
    reader, writer = unit.jobs
    a.unit(unit, [Place(reader.workload, "cached", None, "/dev/sdc"), Place(writer.workload, "striped", "/mnt/s")],
           [writes, reads, both])
    assert _scopes(writes.directions[0]) == ["2 x P30"] and _scopes(reads.directions[0]) == ["P30 cached"]
    assert NEVER_WROTE in reads.directions[0].warnings  # the reader's place is the raw device
    assert _scopes(both.directions[0]) == ["P30 cached"]  # no section of its name: the first section's target
    assert asked == ["/mnt/striped", "/mnt/cached"]  # each target asked once
    assert a.written == {"striped"}


def test_a_unit_without_places_has_no_raw_device() -> None:
    unit = _on(_unit(), DeviceTarget(device="/dev/sdc", raw=True))
    group = _group()
    Attributor(lambda _t: []).unit(unit, [], [group])
    assert group.directions[0].warnings == []


# --- the limits a machine and a client group have ---------------------------------------------------
class _Run:
    def __init__(self, told: list[Limit] | None) -> None:
        self.told = told
        self.asked: list[tuple[Any, TargetModel]] = []

    def limits(self, machine: Any, target: TargetModel) -> list[Limit] | None:
        self.asked.append((machine, target))
        return self.told


class _Provider(_Run):
    pass


TARGET = DirTarget(dir="/data")


def test_a_machines_limits_are_what_the_cloud_told_the_run_else_the_providers_tables() -> None:
    told, table = [Limit("disk_iops", 3000, "volume type fast", "the run")], [Limit("disk_iops", 500, "P10", "table")]
    entry = object()
    run, provider = _Run(told), _Provider(table)
    assert provider_limits(cast(Any, run), cast(Any, provider), cast(Any, entry))(TARGET) == told
    assert run.asked == [(entry, TARGET)] and provider.asked == []
    run = _Run(None)  # the cloud told nothing: the tables
    assert provider_limits(cast(Any, run), cast(Any, provider), cast(Any, entry))(TARGET) == table
    assert run.asked == [(entry, TARGET)] and provider.asked == [(entry, TARGET)]
    provider = _Provider(table)  # no run of the provider's (hosts that exist): the tables
    assert provider_limits(None, cast(Any, provider), cast(Any, entry))(TARGET) == table
    assert provider.asked == [(entry, TARGET)]


def test_a_client_groups_limits_are_every_clients_summed_and_it_asks_about_offsets() -> None:
    vm = Limit("vm_uncached_iops", 1000, "D4 uncached", "table")
    by_target = {"/data": [vm], "/other": []}
    hosts = [Attributor(lambda t: by_target[cast(DirTarget, t).dir]) for _ in range(2)]

    def same(w: Workload) -> bool:
        return True

    group = merged(hosts, same)
    assert group.limits_of(TARGET) == [Limit("vm_uncached_iops", 2000, "2 x D4 uncached", "table")]
    assert group.limits_of(DirTarget(dir="/other")) == []
    assert group.same_offsets is same
    assert merged(hosts).same_offsets is None


def test_summed_keeps_each_cap_every_host_has_in_the_first_hosts_order() -> None:
    iops, mbps = Limit("disk_iops", 500, "P10", "t1"), Limit("disk_mbps", 100, "P10", "t1")
    burst = Limit("disk_burst_iops", 3500, "P10 burst", "t1", burst=True, minutes=30)
    lone = Limit("temp_iops", 9000, "temp", "t1")  # only the first host has it
    other = [Limit("disk_mbps", 200, "P15", "t2"), Limit("disk_burst_iops", 3500, "P15 burst", "t2", burst=True,
                                                         minutes=20), Limit("disk_iops", 1100, "P15", "t2")]
    assert summed([[lone, iops, burst, mbps], other]) == [
        Limit("disk_iops", 1600, "P10 + P15", "t1"),
        Limit("disk_burst_iops", 7000, "P10 burst + P15 burst", "t1", burst=True, minutes=20),  # the shortest
        Limit("disk_mbps", 300, "P10 + P15", "t1")]
    no_minutes = replace(burst, minutes=None)
    assert summed([[no_minutes], [no_minutes]]) == [replace(no_minutes, value=7000, scope="2 x P10 burst")]
    assert summed([[iops]]) == [replace(iops, scope="1 x P10")]
    assert summed([]) == []


@pytest.mark.parametrize("minutes", [(30, None), (None, 25)])
def test_a_burst_cap_lasts_as_long_as_the_hosts_that_say(minutes: tuple[int | None, int | None]) -> None:
    a, b = (Limit("disk_burst_iops", 3500, "P10 burst", "t", burst=True, minutes=m) for m in minutes)
    (both,) = summed([[a], [b]])
    assert both.minutes == next(m for m in minutes if m is not None)
