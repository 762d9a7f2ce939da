"""``explain``'s lines, whole: the figures, the bound stored with the result and its phases, the limits
compared (those of the result's direction, with their flags) and their sources, what to change to measure
the next limit up, a knee search's note or step, how an adaptive stop ended, what the job spent, and the
warnings, each wrapped to 80 columns. Every expected line is written out by hand from the stored values."""

from __future__ import annotations

from typing import Any

from diskbench.attribution.explain import Spent, explain, select, spent
from diskbench.attribution.limit import Limit
from diskbench.model import DirectionResult
from diskbench.store import StoredResult

VM_TABLE = "Azure VM size table (2026-01)"
DISK_TABLE = "Azure managed disk table (2026-01)"


def _stored(d: DirectionResult, *, host: str = "vm1", target: str = "data", workload: str = "randwrite-4k",
            **more: Any) -> StoredResult:
    return StoredResult(run_id="r1", job_key=f"{host}/{target}/{workload}", workload=workload, target=target,
                        host=host, engine="fio", engine_version="3.33", jobs=1, result=d, **more)


def _direction(direction: str, iops: float, bw: float, bound: dict[str, Any] | None = None,
               warnings: list[str] | None = None) -> DirectionResult:
    return DirectionResult(direction, iops, bw, int(iops * 60), int(bw * 60), 60.0, None, bound=bound,
                           warnings=warnings or [])


def test_a_burst_bound_result_on_a_cloud_vm_is_explained_line_by_line() -> None:
    limits = [Limit("vm_cached_iops", 4000, "Standard_D4s_v5 cached", VM_TABLE, direction="read"),  # not for writes
              Limit("disk_iops", 500, "P10", DISK_TABLE),
              Limit("disk_burst_iops", 3500, "P10 burst", DISK_TABLE, burst=True, minutes=30),
              Limit("disk_mbps", 100, "P10 on LUN 3 (ReadOnly host cache) cache misses", DISK_TABLE,
                    cache_miss_only=True),
              Limit("vm_burst_mbps", 1200, "Standard_D4s_v5 burst", VM_TABLE, direction="write", burst=True,
                    cache_miss_only=True)]
    bound = {"kind": "burst", "text": "write stepped down: burst 3,513 IOPS = 100.4% of the P10 burst 3,500 IOPS",
             "phases": {"burst": {"mean": 3512.6, "start_s": 0.0, "duration_s": 1799.6},
                        "baseline": {"mean": 512.4, "start_s": 1800.4, "duration_s": 1799.6}, "drop": 0.85},
             "limits": [lim.to_json() for lim in limits]}
    # 8,250,001 B/s: 8.250001 MB/s reads 8.3 (a divisor off by one in a million would read 8.2)
    d = _direction("write", 2014.2, 8_250_001.0, bound, warnings=[
        "read blocks of /dev/nvme10n1 that diskbench never wrote: a thin-provisioned disk answers them without "
        "touching media; set precondition: true on the target"])
    stop = {"reason": "confident", "seconds": 42.0, "reached": 0.013, "confidence": 0.95, "detail": ""}
    cost = Spent(90.0, ["vm1"], 1.5, 0.03, 12.0, 0.24)
    assert explain(_stored(d, stop=stop), cost) == [
        "randwrite-4k write on vm1:data: 2,014 IOPS, 8.3 MB/s (7.9 MiB/s)",
        "  write stepped down: burst 3,513 IOPS = 100.4% of the P10 burst 3,500 IOPS",
        "  phases: burst 3,513 IOPS for 1,800 s, then baseline 512 IOPS from 1,800 s",
        "  limits compared:",
        # the read-only cached cap is left out; a scope is cut to 38 characters; flags in brackets
        "    P10" + " " * 45 + "500 IOPS any",
        "    P10 burst" + " " * 37 + "3,500 IOPS any (burst)",
        "    P10 on LUN 3 (ReadOnly host cache) cac" + " " * 10 + "100 MB/s any (cache-miss only)",
        "    Standard_D4s_v5 burst" + " " * 25 + "1,200 MB/s write (burst, cache-miss only)",
        # every source once, in the order of the limits stored (the read-only cap's too)
        "    source: Azure VM size table (2026-01)",
        "    source: Azure managed disk table (2026-01)",
        "  to measure the next limit up: drain_burst: true (or a run longer than the",
        "  credits last), to measure the baseline",
        "  adaptive stop: confident after 42 s; known within +-1.3% at 95%",
        "  spent: 1.50 VM-min (90 s on vm1), $0.03; vm1 in all: 12.0 VM-min, $0.24",
        "  warnings:",
        # a warning's first line starts with "- ", the rest are indented under its text; a hyphenated
        # word at the edge moves whole to the next line
        "    - read blocks of /dev/nvme10n1 that diskbench never wrote: a",
        "        thin-provisioned disk answers them without touching media; set",
        "        precondition: true on the target",
    ]


def test_a_local_result_without_a_bound_and_a_knee_searchs_note() -> None:
    d = _direction("read", 12000.0, 49_152_000.0)
    notes = ["drained: the rate stepped down after 12 s",
             "knee search: knee at QD 8: 11,800 IOPS (within 10% of the highest, 12,000 at QD 32); 6 steps, QD 1-32"]
    assert explain(_stored(d, host="local", target="scratch", workload="randread-4k", notes=notes)) == [
        "randread-4k read on scratch: 12,000 IOPS, 49.2 MB/s (46.9 MiB/s)",
        "  no bound: no published limit applies to this target and fio's CPU was not",
        "  saturated (a cloud provider with limit tables gives one)",
        "  iodepth: auto: knee at QD 8: 11,800 IOPS (within 10% of the highest, 12,000 at",
        "  QD 32); 6 steps, QD 1-32; this result is that step's, and each step is a",
        "  result of its own (randread-4k-iodepthN)",
    ]


def test_an_imported_knee_step_below_every_limit() -> None:
    bound = {"kind": "none", "text": "read 2,000 IOPS, 8.2 MB/s (7.8 MiB/s): below every limit (highest: 40% of "
                                     "the P30 5,000 IOPS)",
             "limits": [Limit("disk_iops", 5000, "P30", DISK_TABLE).to_json()]}
    d = _direction("read", 2000.0, 8_192_000.0, bound)
    step = {"knee": {"job": "randread-4k", "step": 3, "iodepth": 4}}
    assert explain(_stored(d, host="imported", target="nvme0", workload="randread-4k-iodepth4", params=step)) == [
        "randread-4k-iodepth4 read on nvme0: 2,000 IOPS, 8.2 MB/s (7.8 MiB/s)",
        "  read 2,000 IOPS, 8.2 MB/s (7.8 MiB/s): below every limit (highest: 40% of the",
        "  P30 5,000 IOPS)",
        "  limits compared:",
        "    P30" + " " * 43 + "5,000 IOPS any",
        "    source: Azure managed disk table (2026-01)",
        "  to measure the next limit up: a deeper queue or more jobs; the result is below",
        "  every limit",
        "  step 3 of the knee search of randread-4k (iodepth: auto)",
    ]


def test_a_bound_stored_without_text_or_limits_says_only_what_to_change() -> None:
    d = _direction("write", 900.0, 3_686_400.0, {"kind": "cpu"})
    assert explain(_stored(d, host="lab1", target="temp", workload="w")) == [
        "w write on lab1:temp: 900 IOPS, 3.7 MB/s (3.5 MiB/s)",
        "  to measure the next limit up: more numjobs, or a faster ioengine (io_uring),",
        "  so fio's CPU is not the limit",
    ]
    # a bound of no kind NEXT knows, without limits: nothing to suggest
    d = _direction("write", 900.0, 3_686_400.0, {"kind": "none", "text": "write 900 IOPS: no published limit applies"})
    assert explain(_stored(d, host="local", target="temp", workload="w")) == [
        "w write on temp: 900 IOPS, 3.7 MB/s (3.5 MiB/s)", "  write 900 IOPS: no published limit applies"]
    # a knee step's params without the search's job name say nothing about a search
    assert explain(_stored(d, host="local", target="temp", workload="w", params={"knee": {"step": 2}}))[2:] == []


def test_select_takes_a_job_key_its_base_key_or_a_workload_and_its_sections() -> None:
    def one(key: str, workload: str, base: str = "") -> StoredResult:
        return StoredResult(run_id="r1", job_key=key, workload=workload, target="t", host="h", engine="fio",
                            engine_version="3.33", jobs=1, result=_direction("read", 1.0, 4096.0), base_key=base)

    results = [one("h/t/mixed", "mixed/reader1"), one("h/t/mixed#2", "mixed/writer1", "h/t/mixed"),
               one("h/t/mixedup", "mixedup"), one("h/t/r#1", "r", "h/t/r")]
    assert select(results, None) == results
    assert [r.job_key for r in select(results, "mixed")] == ["h/t/mixed", "h/t/mixed#2"]  # not mixedup
    assert [r.job_key for r in select(results, "h/t/mixed")] == ["h/t/mixed", "h/t/mixed#2"]  # key or base key
    assert [r.job_key for r in select(results, "h/t/r#1")] == ["h/t/r#1"]
    assert [r.job_key for r in select(results, "mixedup")] == ["h/t/mixedup"]
    assert select(results, "nope") == []


def test_spent_as_json_is_rounded_as_stored() -> None:
    cost = Spent(90.12345, ["vm1", "vm2"], 3.004115, 0.030041234, 12.34567, 0.2412345)
    assert cost.to_json() == {"seconds": 90.123, "machines": ["vm1", "vm2"], "vm_minutes": 3.004, "usd": 0.03,
                              "machine_vm_minutes": 12.346, "machine_usd": 0.2412}
    unpriced = Spent(30.0, ["c1"], 0.5, None, 10.0, None)
    assert unpriced.to_json() == {"seconds": 30.0, "machines": ["c1"], "vm_minutes": 0.5, "usd": None,
                                  "machine_vm_minutes": 10.0, "machine_usd": None}


JOB = {"key": "vm1/temp/r", "host": "vm1", "started": "2026-01-01T10:00:00+00:00",
       "finished": "2026-01-01T10:00:30+00:00"}


def test_spent_without_params_takes_the_jobs_host() -> None:
    found = spent(JOB, [{"machine": "vm1", "vm_minutes": 6.0, "usd": 0.12}])  # no "params" in the row
    assert found is not None and found.machines == ["vm1"]
    # 30 s at $1.20 an hour: $0.01; 0.5 VM-minutes
    assert (found.seconds, found.vm_minutes, found.usd, found.total_usd) == (30.0, 0.5, 0.01, 0.12)


def test_a_job_that_ended_as_it_started_spent_nothing() -> None:
    found = spent({**JOB, "finished": JOB["started"]}, [{"machine": "vm1", "vm_minutes": 6.0, "usd": 0.12}])
    assert found is not None and (found.seconds, found.vm_minutes, found.usd) == (0.0, 0.0, 0.0)
    # clocks that step back: never a negative time
    early = spent({**JOB, "finished": "2026-01-01T09:59:50+00:00"}, [{"machine": "vm1", "vm_minutes": 6.0,
                                                                       "usd": 0.12}])
    assert early is not None and early.seconds == 0.0


def test_a_machine_that_cost_nothing_or_has_no_minutes_costs_its_jobs_nothing() -> None:
    uses = [{"machine": "vm1", "vm_minutes": 0.0, "usd": 0.0}]  # created, but no minute billed yet
    found = spent(JOB, uses)
    assert found is not None and (found.usd, found.total_vm_minutes, found.total_usd) == (0.0, 0.0, 0.0)
    no_minutes = spent(JOB, [{"machine": "vm1", "usd": 0.0}])  # minutes not stored
    assert no_minutes is not None and (no_minutes.usd, no_minutes.total_vm_minutes) == (0.0, 0.0)
    free = spent(JOB, [{"machine": "vm1", "vm_minutes": 6.0, "usd": 0.0}])
    assert free is not None and (free.usd, free.total_usd) == (0.0, 0.0)
