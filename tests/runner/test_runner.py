"""Running jobs with real fio through the local executor: artifacts, facts, failures, interrupts."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest

from diskbench.errors import UsageError
from diskbench.expand import build_plan
from diskbench.profile import load_profile
from diskbench.runner import Runner, RunOptions
from diskbench.store import Store
from diskbench.store.raw import read_raw
from diskbench.ui import UI

from ..conftest import diskbench, finish, needs_fio, needs_root, start_diskbench, wait_for_job
from .test_space import failing_df


def _runner(db: Path) -> tuple[Runner, Store]:
    store = Store(db)
    return Runner(store, UI(plain=True, quiet=True)), store


@needs_fio
def test_run_keeps_artifacts_facts_and_results(db: Path, tiny_profile: Path, workdir: Path) -> None:
    runner, store = _runner(db)
    plan = build_plan(load_profile(str(tiny_profile)), target_dir=str(workdir))
    outcome = runner.start(plan, RunOptions(target_dir=str(workdir)))
    assert (outcome.status, outcome.done, outcome.failed) == ("completed", 2, 0)
    run = store.get_run(outcome.run_id)
    assert run["facts"]["fio_version"] and run["facts"]["cpus"] >= 1 and run["facts"]["memory_bytes"] > 0
    assert run["facts"]["hostname"] and run["facts"]["kernel"]
    assert run["profile_text"] == tiny_profile.read_text()
    jobs = store.get_jobs(outcome.run_id)
    assert [j["status"] for j in jobs] == ["done", "done"]
    assert jobs[0]["facts"]["fstype"] and jobs[0]["facts"]["path"] == str(workdir)
    assert "[rr]" in jobs[0]["rendered"]
    art = Path(run["artifacts_dir"])
    for job_dir in ("00-rr", "01-rw-mix"):
        for name in ("job.fio", "output.json.gz", "stdout.txt", "stderr.txt", "exit_code"):
            assert (art / job_dir / name).exists(), (job_dir, name)
    results = store.get_results(outcome.run_id)
    assert [(r.workload, r.result.direction) for r in results] == [
        ("rr", "read"), ("rw-mix", "read"), ("rw-mix", "write"), ("rw-mix", "total")]
    assert results[1].jobs == 2
    # The stored numbers are the ones in the raw output, which can be re-parsed at any time.
    raw = json.loads(read_raw(art / "00-rr" / "output.json"))  # kept gzip'd
    assert results[0].result.ios == raw["jobs"][0]["read"]["total_ios"]


@needs_fio
def test_scratch_directory_is_created_and_removed(db: Path, tiny_profile: Path, tmp_path: Path) -> None:
    runner, store = _runner(db)
    base = tmp_path / "cache"
    outcome = runner.start(build_plan(load_profile(str(tiny_profile))), RunOptions(scratch_base=str(base)))
    assert outcome.status == "completed"
    assert list(base.iterdir()) == []
    assert store.get_jobs(outcome.run_id)[0]["facts"]["path"].startswith(str(base / "diskbench-scratch-"))


@needs_fio
def test_job_error_marks_run_partial_and_keeps_good_results(db: Path, tmp_path: Path, workdir: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("name: p\ndefaults: {size: 4M, runtime: 1s, ramp_time: 0, ioengine: psync}\n"
                       "workloads:\n  - {name: good, rw: randread}\n"
                       "  - {name: bad, rw: randwrite, extra: {lockfile: bogus}}\n")
    runner, store = _runner(db)
    outcome = runner.start(build_plan(load_profile(str(profile)), target_dir=str(workdir)),
                           RunOptions(target_dir=str(workdir)))
    assert (outcome.status, outcome.done, outcome.failed) == ("partial", 1, 1)
    jobs = store.get_jobs(outcome.run_id)
    assert jobs[1]["status"] == "failed" and jobs[1]["exit_code"] != 0
    assert "fio exited with code" in jobs[1]["message"] or "failed: error" in jobs[1]["message"]
    assert [r.workload for r in store.get_results(outcome.run_id)] == ["good"]


@needs_root
@needs_fio
def test_full_disk_is_a_clear_failure(db: Path, tmp_path: Path, tiny_tmpfs: Path) -> None:
    """fio's own ENOSPC half-way: where the free space could not be read before the run (a df without
    --output), so the check before the first job (test_space.py) let it start."""
    profile = tmp_path / "p.yaml"
    profile.write_text("name: p\nworkloads:\n  - {name: fill, rw: write, bs: 64k, size: 16M, runtime: 2s,"
                       " ramp_time: 0, direct: false, ioengine: psync, time_based: false}\n")
    out = diskbench("run", "--profile", str(profile), "--target", str(tiny_tmpfs), db=db, env=failing_df(tmp_path))
    assert out.returncode == 1
    assert "No space left on device" in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("error: run ")
    assert "Traceback" not in out.stderr


def test_missing_fio_is_reported_before_anything(db: Path, tiny_profile: Path, workdir: Path) -> None:
    out = diskbench("run", "--profile", str(tiny_profile), "--target", str(workdir), db=db,
                    env={"PATH": "/nonexistent"})
    assert out.returncode == 5  # an engine the profile needs is not installed
    lines = out.stderr.splitlines()  # the profile's stability warnings may come first; nothing else
    assert all(line.startswith("warning: ") for line in lines[:-1])
    assert lines[-1] == "error: fio is not installed on this machine (install it with " \
                        "`apt-get install -y fio`, then run again)"


def test_missing_target_directory(db: Path, tiny_profile: Path, tmp_path: Path) -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    runner, _ = _runner(db)
    plan = build_plan(load_profile(str(tiny_profile)), target_dir=str(tmp_path / "nope"))
    with pytest.raises(UsageError, match="does not exist"):
        runner.start(plan, RunOptions(target_dir=str(tmp_path / "nope")))


SLOW_PROFILE = """\
name: slow
defaults: {size: 8M, runtime: 2s, ramp_time: 0, ioengine: psync}
workloads:
  - {name: one, rw: randread}
  - {name: two, rw: randread}
  - {name: three, rw: randread}
"""


@needs_fio
def test_interrupted_run_is_shown_and_resumed(db: Path, tmp_path: Path, workdir: Path) -> None:
    profile = tmp_path / "slow.yaml"
    profile.write_text(SLOW_PROFILE)
    proc = start_diskbench("run", "--profile", str(profile), "--target", str(workdir), db=db)
    wait_for_job(db, "two")
    code, stderr = finish(proc, signal.SIGINT, timeout=60)
    assert code == 130, stderr
    assert "diskbench resume" in stderr and "Traceback" not in stderr
    store = Store(db)
    (run,) = store.list_runs()
    assert run["status"] == "interrupted"
    assert [j["status"] for j in store.get_jobs(run["id"])] == ["done", "interrupted", "pending"]
    assert [r.workload for r in store.get_results(run["id"])] == ["one"]
    assert (Path(run["artifacts_dir"]) / "01-two" / "stdout.txt").exists()  # raw output kept

    shown = diskbench("show", run["id"], "--format", "json", db=db)
    assert json.loads(shown.stdout)["run"]["status"] == "interrupted"

    resumed = diskbench("resume", run["id"], db=db)
    assert resumed.returncode == 0, resumed.stderr
    assert "2 job(s)" in resumed.stderr
    assert store.get_run(run["id"])["status"] == "completed"
    assert [r.workload for r in store.get_results(run["id"])] == ["one", "two", "three"]
    # the interrupted attempt's files stay beside the new one (fio wrote what it measured before it stopped)
    assert "two on" in resumed.stderr and "the earlier attempt was interrupted or failed" in resumed.stderr
    assert (Path(run["artifacts_dir"]) / "01-two.attempt-1" / "stdout.txt").exists()
    assert not list(Path(run["artifacts_dir"]).glob("02-three.attempt-*"))  # it had not started
