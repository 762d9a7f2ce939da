"""A knee search cut short and resumed, with real fio: Ctrl-C or a failing step mid-search keeps the
steps already measured (stored, their raw output in ``step-NN-qdQ/``), the search's record says it was
cut short and where, the run exits non-zero with one line and leaves no engine or data file behind;
``diskbench resume`` then feeds the stored steps back to the search instead of measuring them again
and runs only the steps after them, so the final record is whole.

A rate-capped job on fio's ``null`` engine measures QD 1 and then QD 2 (its plateau, from QD 1: see
test_knee.py), 2 s each: the search is cut at step 2, while its fio runs.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from diskbench.errors import ExecutionError
from diskbench.executors.local import LocalExecutor
from diskbench.expand import build_plan
from diskbench.profile import LoadedProfile, parse_profile
from diskbench.runner import Runner, RunOptions
from diskbench.schemas import schema
from diskbench.store import Store
from diskbench.ui import UI

from ..conftest import diskbench, needs_fio
from ..interrupting import Watched, fio_in, until
from .test_knee import CAPPED

SLOW = {**CAPPED, "defaults": {**CAPPED["defaults"], "runtime": "2s"}}
STEP1 = "capped-iodepth1"


def _start(tmp_path: Path, db: Path) -> tuple[Watched, Path]:
    """``diskbench run`` of the 2 s-per-step search in the background; the run and its target folder."""
    profile, work = tmp_path / "knee.yaml", tmp_path / "work"
    profile.write_text(yaml.safe_dump(SLOW))
    work.mkdir()
    return Watched("run", "--profile", str(profile), "--target", str(work), db=db), work


def _fio_of(unit: Path) -> list[int]:
    """The fio processes working in ``unit``: the test's own run's."""
    return fio_in(unit)


def _unit(db: Path) -> Path:
    """The knee unit's folder (the run has one unit), whether it exists yet or not."""
    return Path(Store(db).get_run("last")["artifacts_dir"]) / "00-capped"


def _at_step_2(run: Watched, db: Path) -> Path:
    """Once step 1 is stored and step 2's fio runs: the unit's folder."""
    run.wait_for(": step 1, QD 1")
    unit = _unit(db)
    until(lambda: "iodepth=2\n" in _text(unit / "job.fio") and bool(_fio_of(unit)), 30,
          f"step 2's fio never started:\n{run.stderr}")
    time.sleep(0.3)  # under way, its output file open
    return unit


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _record(store: Store, run_id: str) -> dict[str, Any]:
    (record,) = store.get_run(run_id)["facts"]["knees"]
    assert isinstance(record, dict)
    return record


def _step1(store: Store, run_id: str, unit: Path) -> tuple[Any, ...]:
    """What identifies step 1's one measurement: its stored job's times, its stored IOPS, and its raw
    output's modification time (a new fio run would change each)."""
    job = next(j for j in store.get_jobs(run_id) if j["workload"] == STEP1)
    (row,) = [r for r in store.get_results(run_id) if r.workload == STEP1]
    return job["status"], job["started"], job["finished"], row.result.iops, \
        (unit / "step-01-qd1" / "output.json.gz").stat().st_mtime_ns


def _cut_and_nothing_left(store: Store, run_id: str, unit: Path, work: Path, why: str) -> tuple[Any, ...]:
    """The stopped search: step 1 stored whole, the record cut short at step 2 (QD 2), no fio left
    running and no data file left in the target folder; step 1's identity."""
    record = _record(store, run_id)
    assert not record["complete"] and record["stopped"] == "cut short", record
    assert record["cut"]["step"] == 2 and record["cut"]["iodepth"] == 2 and why in record["cut"]["why"], record
    assert [p["iodepth"] for p in record["points"]] == [1] and "cut short at step 2 (QD 2)" in record["text"]
    assert not _fio_of(unit) and not _fio_of(unit.with_name(unit.name + ".attempt-1"))
    assert list(work.iterdir()) == []  # the data file the steps laid out is removed
    assert store.get_run(run_id)["status"] != "running"
    return _step1(store, run_id, unit)


def _resume(db: Path, run_id: str, before: tuple[Any, ...]) -> dict[str, Any]:
    """``diskbench resume``: step 1 taken as stored (not measured again), step 2 measured; the JSON."""
    out = diskbench("resume", run_id, "--format", "json", db=db)
    assert out.returncode == 0, out.stderr
    assert "capped on " in out.stderr and ": step 1, QD 1: " in out.stderr
    assert "(stored by an earlier attempt)" in next(ln for ln in out.stderr.splitlines() if ": step 1, " in ln)
    assert "stored by" not in next(ln for ln in out.stderr.splitlines() if ": step 2, " in ln)
    store = Store(db)
    unit = _unit(db)
    assert _step1(store, run_id, unit) == before  # the same stored job, result and raw output: not re-run
    assert sorted(d.name for d in unit.iterdir() if d.is_dir()) == ["step-01-qd1", "step-02-qd2"]
    assert not (unit.with_name(unit.name + ".attempt-1") / "step-01-qd1").exists()  # moved back, not copied
    assert "iodepth=2\n" in (unit / "step-02-qd2" / "job.fio").read_text()
    assert store.get_run(run_id)["status"] == "completed"
    doc = json.loads(out.stdout)
    jsonschema.validate(doc, schema("results"), cls=jsonschema.Draft202012Validator)
    record = _record(store, run_id)
    assert record["complete"] and record["cut"] is None and record["stopped"] == "saturated", record
    assert [p["iodepth"] for p in record["points"]] == [1, 2] and record["knee"]["iodepth"] == 1
    rows = {r["workload"]: r for r in doc["results"]}
    assert sorted(rows) == ["capped", STEP1, "capped-iodepth2"]
    assert rows["capped"]["iops"] == rows[STEP1]["iops"] == pytest.approx(before[3])  # the knee: the stored step
    return doc


@needs_fio
def test_ctrl_c_mid_search_keeps_its_steps_and_resume_runs_only_the_rest(db: Path, tmp_path: Path) -> None:
    run, work = _start(tmp_path, db)
    with run:
        unit = _at_step_2(run, db)
        run.ctrl_c()
        assert run.finish() == 130, run.stderr
    assert run.lines[-1].startswith("error: interrupted: run ") and "keeps its 1 finished job(s)" in run.lines[-1]
    assert "diskbench resume" in run.lines[-1], run.stderr  # one line, with how to go on
    store = Store(db)
    run_id = store.get_run("last")["id"]
    assert store.get_run(run_id)["status"] == "interrupted"
    jobs = {j["workload"]: j["status"] for j in store.get_jobs(run_id)}
    assert jobs == {"capped": "interrupted", STEP1: "done"}  # the interrupted step 2 is no stored job
    before = _cut_and_nothing_left(store, run_id, unit, work, "interrupted")
    _resume(db, run_id, before)


@needs_fio
def test_a_failing_step_cuts_the_search_short_and_resume_runs_it_again(db: Path, tmp_path: Path) -> None:
    """Step 2's fio dies (killed, as when its host's OOM killer takes it): the step and the unit fail with
    one line naming the depth, the signal (not diskbench's timeout) and the step's folder, step 1 stays
    stored, and the run exits non-zero."""
    run, work = _start(tmp_path, db)
    with run:
        unit = _at_step_2(run, db)
        for pid in _fio_of(unit):  # this run's own fio, by its id
            os.kill(pid, signal.SIGKILL)
        code = run.finish()
    assert code not in (0, 130), run.stderr
    failed = [ln for ln in run.lines if "FAILED" in ln]
    assert len(failed) == 1 and "at QD 2: " in failed[0] and "step-02-qd2" in failed[0], run.stderr
    assert "killed by SIGKILL" in failed[0] and "did not finish in time" not in failed[0], run.stderr
    assert run.lines[-1].startswith("error: "), run.stderr
    store = Store(db)
    run_id = store.get_run("last")["id"]
    jobs = {j["workload"]: j["status"] for j in store.get_jobs(run_id)}
    assert jobs == {"capped": "failed", STEP1: "done", "capped-iodepth2": "failed"}
    assert (unit / "step-02-qd2" / "job.fio").exists()  # the failed step's files, set aside as the others
    before = _cut_and_nothing_left(store, run_id, unit, work, "fio was killed by SIGKILL (signal 9) from outside "
                                   "diskbench, exit -9, not by diskbench's timeout (check dmesg on the host")
    doc = _resume(db, run_id, before)
    assert {j["workload"]: j["status"] for j in store.get_jobs(run_id)}["capped-iodepth2"] == "done"
    assert doc["run"]["status"] == "completed"


class _GoneAfter(LocalExecutor):
    """This machine, as a host that goes away after ``runs`` engine runs: the next one's connection is
    lost for good (what the SSH executor raises once it cannot reconnect); the runs before are real fio."""

    def __init__(self, runs: int) -> None:
        super().__init__()
        self.left = runs

    def stream(self, argv: list[str], **kwargs: Any) -> int:
        if self.left == 0:
            raise ExecutionError("lab0: connection lost while fio runs; could not reconnect: host unreachable")
        self.left -= 1
        return super().stream(argv, **kwargs)


@needs_fio
def test_a_host_gone_mid_search_keeps_the_record_and_fails_the_unit(db: Path, tmp_path: Path) -> None:
    """The error that ends the machine's part (its host gone) ends the search where it is: the steps before
    stay stored, the record says where it was cut, then the unit fails with that error as any unit does."""
    store, work = Store(db), tmp_path / "work"
    work.mkdir()
    plan = build_plan(LoadedProfile(profile=parse_profile(yaml.safe_dump(CAPPED)), path="knee.yaml", text=""),
                      target_dir=str(work))
    outcome = Runner(store, UI(plain=True, quiet=True), executor=_GoneAfter(1)).start(
        plan, RunOptions(target_dir=str(work)))
    assert outcome.status == "partial" and outcome.failed == 1, outcome
    assert any("connection lost" in m for m in outcome.messages), outcome.messages
    jobs = {j["workload"]: j for j in store.get_jobs(outcome.run_id)}
    assert jobs[STEP1]["status"] == "done" and jobs["capped-iodepth2"]["status"] == "failed"
    assert jobs["capped"]["status"] == "failed" and "connection lost" in jobs["capped"]["message"]
    record = _record(store, outcome.run_id)
    assert not record["complete"] and record["cut"] == {
        "step": 2, "iodepth": 2, "why": "lab0: connection lost while fio runs; could not reconnect: host unreachable"}
    assert [p["iodepth"] for p in record["points"]] == [1]
    assert list(work.iterdir()) == []
