"""Pitfalls: each found from the job and its result, each a one-line warning that says what to change."""

from __future__ import annotations

from dataclasses import replace

from diskbench.attribution.limit import Limit
from diskbench.attribution.pitfalls import JobFacts, pitfalls
from diskbench.attribution.record import rounds_of, steady, tag
from diskbench.model import DirectionResult, Latency, Series

GOOD = JobFacts(direct=True, working_set_bytes=4 * 1024**3, raw_device=None, written=True)
CAP = [Limit("disk_iops", 5000, "P30", "t")]


def _result(direction: str = "read", runtime_s: float = 60.0, min_us: float = 300.0) -> DirectionResult:
    return DirectionResult(direction, 5000.0, 5000 * 4096.0, 300000, 300000 * 4096, runtime_s,
                           Latency(min=min_us, mean=800.0, max=9000.0, stdev=100.0, samples=300000))


def test_a_clean_job_has_no_warning() -> None:
    assert pitfalls(_result(), GOOD, CAP, {"kind": "disk"}) == []


def test_page_cache_in_the_path() -> None:
    found = pitfalls(_result(min_us=1.2), replace(GOOD, direct=False, stderr="fio: cache invalidation failed"),
                     CAP, None)
    assert [w.split(":")[0] for w in found] == ["direct=0", "fio could not drop the page cache (cache invalidation "
                                                "failed)", "minimum read latency 1.20 µs is below any disk's floor"]
    assert all("direct: true" in w or "precondition" in w for w in found)


def test_reads_of_blocks_never_written_on_a_raw_device() -> None:
    found = pitfalls(_result(), replace(GOOD, raw_device="/dev/sdc", written=False), CAP, None)
    assert found == ["read blocks of /dev/sdc that diskbench never wrote: a thin-provisioned disk answers them "
                     "without touching media; set precondition: true on the target"]
    assert pitfalls(_result("write"), replace(GOOD, raw_device="/dev/sdc", written=False), CAP, None) == []


def test_small_working_set_shallow_queue_cpu_and_repeated_offsets() -> None:
    small = pitfalls(_result(), replace(GOOD, working_set_bytes=64 * 1024**2), CAP, None)
    assert small == ["working set 64.0MiB: small enough for device and host caches to hold; use size: 1G or more "
                     "per job to measure the disk"]
    assert "raise iodepth" in pitfalls(_result(), GOOD, CAP, {"kind": "queue"})[0]
    assert pitfalls(_result(), replace(GOOD, rate_limited=True), CAP, {"kind": "queue"}) == []
    assert "io_uring" in pitfalls(_result(), GOOD, [], {"kind": "cpu"})[0]
    assert "randrepeat: 0" in pitfalls(_result(), replace(GOOD, hosts=3), CAP, None)[0]


def test_runs_too_short_for_a_cap_or_past_the_credits() -> None:
    short = pitfalls(_result(runtime_s=3), GOOD, CAP, {"kind": "disk"})
    assert short == ["ran 3.0 s: too short for a cap's token bucket to show; run 30 s or more (time_based)"]
    assert pitfalls(_result(runtime_s=3), GOOD, [], None) == []  # nothing to compare with: nothing to miss
    burst = [*CAP, Limit("disk_burst_iops", 3500, "P4 burst", "t", burst=True, minutes=30)]
    on_credits = pitfalls(_result(runtime_s=60), GOOD, burst, {"kind": "burst"})
    assert on_credits == ["ran 60 s on burst credits (up to 30 min at full credits): the baseline is lower; run "
                          "longer than the credits last, or drain_burst: true, to measure it"]
    assert pitfalls(_result(runtime_s=60), GOOD, burst, {"kind": "burst", "phases": {"burst": {}}}) == []


def test_steady_state_over_the_series_rounds() -> None:
    flat = Series(1.0, [1000.0 + (i % 3) for i in range(60)])
    trend = Series(1.0, [1000.0 + 40 * i for i in range(60)])
    assert len(rounds_of(flat)) == 20  # 60 s in rounds of 3 s
    state = steady(flat, None)
    assert state is not None and state.achieved
    state = steady(trend, None)
    assert state is not None and state.status == "not achieved"
    assert steady(Series(1.0, [1.0, 2.0, 3.0]), None) is None  # too short to say
    after = steady(Series(1.0, [3500.0] * 10 + [120.0] * 20), {"baseline": {"start_s": 10.0}})
    assert after is not None and after.achieved and after.mean == 120


def test_tags() -> None:
    assert tag({"kind": "vm_uncached", "ratio": 1.001}) == "VM 100%"
    assert tag({"kind": "host_cache", "ratio": 15.7}) == "host cache"
    assert tag({"kind": "none", "ratio": 0.2}) == "-"
    assert tag(None) == ""


def test_a_throttled_run_is_judged_by_its_median_second_when_the_edges_dilute_the_mean() -> None:
    from diskbench.attribution.record import decide

    # a lab run against a 375-IOPS group: fio's mean 321, the seconds 290, 396, 388, 364, 372, 267
    d = DirectionResult("write", 321.0, 321 * 4096.0, 1926, 1926 * 4096, 6.0, None,
                        series=Series(1.0, [290.0, 396.0, 388.0, 364.0, 372.0, 267.0]))
    limits = [Limit("vm_uncached_iops", 375, "VM", "t"), Limit("disk_iops", 1000, "2 x P30", "t")]
    b = decide(d, limits, bs_bytes=4096, iodepth=32, jobs=4, cpu_pct=10.0, cpus=2)
    assert (b.kind, b.value) == ("vm_uncached", 368.0)
    assert b.text.endswith("(median second; fio's mean 321 IOPS includes the first and last seconds)")
    paced = replace(d, iops=100.0, series=Series(1.0, [100.0, 101.0, 99.0, 100.0, 100.0]))
    assert decide(paced, limits, bs_bytes=4096, iodepth=32, jobs=4, cpu_pct=10.0, cpus=2).kind == "none"


def test_what_the_profile_marks_deliberate_is_not_said_again_after_the_run() -> None:
    """plan showed the reason once as a note (issue 26 §2); the result does not warn about it again,
    and only about the kinds marked."""
    small = replace(GOOD, working_set_bytes=64 * 1024**2, direct=False)
    assert len(pitfalls(_result(runtime_s=3), small, CAP, {"kind": "queue"})) == 4
    marked = pitfalls(_result(runtime_s=3), small, CAP, {"kind": "queue"},
                      {"small_working_set", "page_cache", "low_queue_depth", "short_runtime"})
    assert marked == []
    only_size = pitfalls(_result(runtime_s=3), small, CAP, {"kind": "queue"}, {"small_working_set"})
    assert len(only_size) == 3 and not any("working set" in w for w in only_size)
    burst = [*CAP, Limit("disk_burst_iops", 3500, "P4 burst", "t", burst=True, minutes=30)]
    assert pitfalls(_result(runtime_s=60), GOOD, burst, {"kind": "burst"}, {"burst"}) == []
