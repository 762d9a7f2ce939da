"""``drain_burst`` through the runner with real fio on this machine, where nothing bursts.

Without caps to compare with, draining runs until the time allowed is spent and then says the result
may still be a burst; each pass's files are kept under ``drain-NN/``. The decisions themselves are in
tests/attribution/test_drain.py; a real burst drained in a guest in tests/providers/azure/test_lab_runs.py.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
import yaml

from diskbench.attribution.drain import Verdict
from diskbench.errors import ProfileError
from diskbench.model import DirectionResult, GroupResult
from diskbench.profile import parse_profile
from diskbench.runner.one_machine import drain_verdict as _drain_verdict
from diskbench.store import Store
from diskbench.store.raw import read_raw

from ..conftest import diskbench, finish, needs_fio, plan_of, run_profile, start_diskbench, wait_for_job

PROFILE = {"name": "drain", "defaults": {"size": "4M", "runtime": "1s", "ramp_time": "0s", "ioengine": "psync",
                                         "direct": False, "bs": "4k"},
           "workloads": [{"name": "rr", "rw": "randread", "rate_iops": 300, "drain_burst": "2s"}]}


@needs_fio
def test_draining_runs_the_jobs_own_io_first_and_keeps_its_files(db: Path, tmp_path: Path) -> None:
    out = run_profile(PROFILE, tmp_path, db)
    assert out.returncode == 0, out.stderr
    assert "rr on dir:" in out.stderr and "draining burst credits in 2 s passes (at most 2 s)" in out.stderr
    assert "drain pass 1: 300 IOPS; no step down within 2 s of draining" in out.stderr, out.stderr
    (result,) = json.loads(out.stdout)["results"]
    why = "drain_burst: no step down within 2 s of draining: the result may still be a burst; allow longer " \
          "(drain_burst: 4s)"
    assert why in result["warnings"] and why in result["notes"]
    assert result["iops"] == pytest.approx(300, rel=0.05) and result["runtime_s"] == pytest.approx(1, abs=0.2)
    art = Path(Store(db).get_run("last")["artifacts_dir"])
    (unit,) = [d for d in art.iterdir() if d.is_dir()]
    (passed,) = unit.glob("drain-*")
    assert passed.name == "drain-01"
    assert "runtime=2s" in (passed / "job.fio").read_text()  # the job's own I/O, for the pass's time
    drained = json.loads(read_raw(passed / "output.json"))
    assert drained["jobs"][0]["job options"].get("rate_iops", drained["global options"].get("rate_iops")) == "300"
    assert (passed / "rr_iops.1.log").exists()  # its per-second series, which the step is looked for in
    assert "runtime=1s" in (unit / "job.fio").read_text()  # the measured run is the profile's


@needs_fio
def test_ctrl_c_while_draining_keeps_the_pass_and_resume_drains_again(db: Path, tmp_path: Path) -> None:
    doc = {**PROFILE, "workloads": [{**PROFILE["workloads"][0], "drain_burst": "4s"}]}
    (tmp_path / "drain.yaml").write_text(yaml.safe_dump(doc))
    (tmp_path / "work").mkdir()
    proc = start_diskbench("run", "--profile", str(tmp_path / "drain.yaml"), "--target", str(tmp_path / "work"),
                           db=db)
    wait_for_job(db, "rr")
    time.sleep(1.5)  # inside the first 4 s pass
    code, stderr = finish(proc, signal.SIGINT, timeout=60)
    assert code == 130, stderr
    assert "rr on dir:" in stderr and ": stopped before measuring" in stderr and "drain pass" not in stderr
    run_id = Store(db).get_run("last")["id"]
    assert [j["status"] for j in Store(db).get_jobs(run_id)] == ["interrupted"]
    out = diskbench("resume", run_id, "--format", "json", db=db)
    assert out.returncode == 0, out.stderr
    assert "drain pass 1: 300 IOPS; no step down within 4 s" in out.stderr
    art = Path(Store(db).get_run(run_id)["artifacts_dir"])
    assert (art / "00-rr.attempt-1" / "drain-01" / "job.fio").exists()  # the stopped pass, kept
    assert (art / "00-rr" / "drain-01" / "output.json.gz").exists()


def test_the_plan_counts_the_longest_draining_may_take(tmp_path: Path) -> None:
    text = yaml.safe_dump(PROFILE)
    (tmp_path / "drain.yaml").write_text(text)
    out = diskbench("plan", "--profile", str(tmp_path / "drain.yaml"), "--target", str(tmp_path))
    assert out.returncode == 0 and " 1s +drain " in out.stdout, out.stdout + out.stderr
    short, long = plan_of(text), plan_of(text.replace("drain_burst: 2s", "drain_burst: 62s"))
    assert long.units[0].expected_s - short.units[0].expected_s == pytest.approx(60)


@pytest.mark.parametrize(("value", "seconds"), [(True, 35 * 60), ("90m", 90 * 60), (45, 45), (False, 0)])
def test_drain_burst_takes_true_or_the_longest_it_may_take(value: object, seconds: float) -> None:
    doc = {**PROFILE, "workloads": [{"name": "rr", "rw": "randread", "drain_burst": value}]}
    assert parse_profile(yaml.safe_dump(doc)).workloads[0].drain_s == seconds


@pytest.mark.parametrize("value", ["0s", "soon"])
def test_a_drain_time_that_is_not_one_is_refused(value: str) -> None:
    doc = {**PROFILE, "workloads": [{"name": "rr", "rw": "randread", "drain_burst": value}]}
    with pytest.raises(ProfileError, match="drain_burst"):
        parse_profile(yaml.safe_dump(doc))


def test_a_drained_burst_is_a_note_and_running_out_of_time_a_warning() -> None:
    def group() -> GroupResult:
        return GroupResult(name="rr", job_names=["rr"], jobs=1, engine="fio", engine_version="3.33",
                           directions=[DirectionResult(direction="read", iops=1.0, bw_bytes_per_s=4096.0, ios=1,
                                                       io_bytes=4096, runtime_s=1.0, clat=None)])
    done, late = group(), group()
    _drain_verdict([done], Verdict(True, True, "at the baseline: 125 IOPS"))
    assert done.notes == ["burst drained before measuring: at the baseline: 125 IOPS"]
    assert done.directions[0].warnings == []
    _drain_verdict([late], Verdict(True, False, "no step down within 2 s"))
    assert late.directions[0].warnings == ["drain_burst: no step down within 2 s"]


def test_a_client_group_refuses_it(tmp_path: Path) -> None:
    doc = {**PROFILE, "hosts": [{"name": f"c{i}", "address": f"198.18.0.{i}"} for i in (1, 2)],
           "shared": {"target": {"dir": str(tmp_path)}}}
    (tmp_path / "group.yaml").write_text(yaml.safe_dump(doc))
    out = diskbench("plan", "--profile", str(tmp_path / "group.yaml"))
    assert out.returncode == 2, out.stderr
    assert "workload 'rr': drain_burst: not for a shared target (a client group runs each job once, on all " \
           "clients together); drop drain_burst" in out.stderr
