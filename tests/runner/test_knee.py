"""``iodepth: auto`` end to end: real fio, each step of the knee search one engine run inside the unit,
every step kept (its raw output in ``step-NN-qdQ/``, its result a stored job named ``NAME-iodepthQ``),
the knee's step the unit's own result and the search's record in the run's facts.

A rate-capped job on fio's ``null`` engine gives the same IOPS at every depth: the plateau is there
from QD 1, so the search measures QD 1 and 2 and finds the knee at 1 (what the search does on
curves with other knees is tests/attribution/test_knee.py). A job on this machine's own disk has a
real curve: what it looks like depends on the disk, so only its shape is checked.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from diskbench.errors import ProfileError
from diskbench.reports.html import build_report
from diskbench.schemas import schema
from diskbench.store import Store

from ..conftest import diskbench, needs_fio, plan_of, run_profile

CAPPED: dict[str, Any] = {
    "name": "knee", "defaults": {"size": "4M", "runtime": "1s", "ramp_time": "0s", "ioengine": "null",
                                 "direct": False, "bs": "4k", "time_based": True},
    "workloads": [{"name": "capped", "rw": "randread", "rate_iops": 2000, "iodepth": "auto",
                   "knee": {"max_iodepth": 8, "p99_under": "10ms"}}]}


def _knees(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The run's knee records in ``--format json`` (``run.knees``; before that hook, the run's facts)."""
    run = doc["run"]
    return run.get("knees") or run["host"]["knees"]  # type: ignore[no-any-return]


def _unit_dir(db: Path) -> Path:
    art = Path(Store(db).get_run("last")["artifacts_dir"])
    (unit,) = [d for d in art.iterdir() if d.is_dir()]
    return unit


@needs_fio
def test_a_capped_job_has_its_knee_at_qd1_and_every_step_is_kept(db: Path, tmp_path: Path) -> None:
    out = run_profile(CAPPED, tmp_path, db)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    jsonschema.validate(doc, schema("results"), cls=jsonschema.Draft202012Validator)
    steps = [ln for ln in out.stderr.splitlines() if ": step " in ln]
    assert [ln.split(": step ")[1].split(":")[0] for ln in steps] == ["1, QD 1", "2, QD 2"], out.stderr
    rows = {r["workload"]: r for r in doc["results"]}
    assert list(rows) == ["capped-iodepth1", "capped-iodepth2", "capped"]  # each step, then the knee's
    for name in ("capped-iodepth1", "capped-iodepth2"):
        assert rows[name]["iops"] == pytest.approx(2000, rel=0.05)
        assert rows[name]["sweep"] == {"param": "iodepth", "value": int(name[-1]), "base": "capped"}
    knee = rows["capped"]
    assert knee["iops"] == rows["capped-iodepth1"]["iops"] and knee["clat_us"] == rows["capped-iodepth1"]["clat_us"]
    assert any(n.startswith("knee search: knee at QD 1: ") for n in knee["notes"]), knee["notes"]
    (record,) = _knees(doc)
    assert record["job"] == knee["job"] and record["stopped"] == "saturated" and record["complete"]
    assert [p["iodepth"] for p in record["points"]] == [1, 2] and record["knee"]["iodepth"] == 1
    # usable: the highest IOPS with p99 under the limit. Both steps are paced to 2,000 IOPS, so which of
    # the two measured more is fio's noise (QD 2 did once in the full suite): the step fio's figures name
    under = [r for r in (rows["capped-iodepth1"], rows["capped-iodepth2"]) if r["clat_us"]["p99"] < 10_000]
    assert len(under) == 2  # the null engine answers in microseconds
    best = max(under, key=lambda r: r["iops"])
    assert record["usable"]["iodepth"] == best["sweep"]["value"] and record["p99_under_us"] == 10_000  # µs

    store = Store(db)
    run = store.get_run("last")
    assert run["status"] == "completed"
    jobs = {j["key"]: j for j in store.get_jobs(run["id"])}
    step1 = jobs["local/" + knee["target"] + "/capped-iodepth1"]
    assert step1["status"] == "done" and "iodepth=1\n" in step1["rendered"]
    assert step1["params"]["knee"] == {"job": knee["job"], "step": 1}
    assert step1["testbed"] != jobs[knee["job"]]["testbed"]  # a fixed depth's, not the search's
    unit = _unit_dir(db)
    assert sorted(d.name for d in unit.iterdir() if d.is_dir()) == ["step-01-qd1", "step-02-qd2"]
    for depth, folder in ((1, "step-01-qd1"), (2, "step-02-qd2")):
        assert f"iodepth={depth}\n" in (unit / folder / "job.fio").read_text()
        assert '"jobs"' in gzip.decompress((unit / folder / "output.json.gz").read_bytes()).decode()

    shown = diskbench("show", "last", db=db)  # the table: each step a row, the knee in the notes
    assert shown.returncode == 0 and "capped-iodepth2" in shown.stdout, shown.stderr
    assert "knee search: knee at QD 1" in shown.stderr + shown.stdout
    told = diskbench("explain", "last", "capped", db=db)
    assert "iodepth: auto: knee at QD 1" in told.stdout.replace("\n  ", " "), told.stdout
    page = build_report(store, [run["id"]], with_history=False)
    assert "Knee of the latency curve" in page and "capped on " in page


@needs_fio
def test_each_step_ends_by_the_adaptive_stop(db: Path, tmp_path: Path) -> None:
    """A workload with stop: ends each step once its figures are known, long before its 30 s; without a
    p99 limit a step waits for its IOPS and MB/s only (the search decides on those)."""
    doc = {**CAPPED, "defaults": {**CAPPED["defaults"], "runtime": "30s"},
           "workloads": [{**CAPPED["workloads"][0], "knee": {"max_iodepth": 8},
                          "stop": {"within": "50%", "min": "2s"}}]}
    out = run_profile(doc, tmp_path, db)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    steps = [r for r in got["results"] if r["workload"].startswith("capped-iodepth")]
    assert len(steps) == 2 and all(r["stop"]["reason"] == "confident" and r["runtime_s"] < 15 for r in steps), steps
    assert all(r["stop"]["detail"] == "IOPS and MB/s; the p99 as measured" for r in steps), steps
    (record,) = _knees(got)
    assert [p["stop"] for p in record["points"]] == ["confident", "confident"]
    assert "(confident after" in out.stderr


@needs_fio
def test_a_real_disk_gives_a_curve_in_doubling_steps(db: Path, tmp_path: Path) -> None:
    """Random reads with O_DIRECT on this machine's own disk, QD 1 to 8, 1 s steps: doubling from 1,
    then at most one depth between two of them; the knee (if the disk shows one by QD 8) obeys the
    definition on the measured points."""
    doc = {"name": "disk", "defaults": {"size": "16M", "runtime": "1s", "ramp_time": "0s", "ioengine": "libaio",
                                        "direct": True, "bs": "4k"},
           "workloads": [{"name": "rr", "rw": "randread", "iodepth": "auto", "knee": {"max_iodepth": 8}}]}
    out = run_profile(doc, tmp_path, db)
    assert out.returncode == 0, out.stderr
    (record,) = _knees(json.loads(out.stdout))
    depths = [p["iodepth"] for p in record["points"]]
    doubled = [d for d in depths if d & (d - 1) == 0]
    assert doubled == [1, 2, 4, 8][:len(doubled)] and len(depths) - len(doubled) <= 1, depths
    top = max(p["iops"] for p in record["points"])
    if record["stopped"] == "saturated":
        knee = record["knee"]["iodepth"]
        assert knee == min(p["iodepth"] for p in record["points"] if p["iops"] * 1.1 >= top)
    else:
        assert record["stopped"] == "max_iodepth" and record["knee"] is None and depths[-1] == 8
    assert record["peak"]["iops"] == top


def test_the_plan_counts_every_step_the_search_may_take(tmp_path: Path) -> None:
    text = yaml.safe_dump(CAPPED)
    (tmp_path / "knee.yaml").write_text(text)
    out = diskbench("plan", "--profile", str(tmp_path / "knee.yaml"), "--target", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "auto 1-8" in out.stdout and "1s x<=6 steps" in out.stdout, out.stdout
    assert "capped: iodepth: auto measures at most 6 depths (4 doubling QD 1-8, 2 bisecting)" in out.stdout
    one = {**CAPPED, "workloads": [{"name": "capped", "rw": "randread", "rate_iops": 2000, "iodepth": 1}]}
    plan, fixed = plan_of(text), plan_of(yaml.safe_dump(one))
    assert plan.units[0].expected_s == pytest.approx(fixed.units[0].expected_s * 6, rel=0.3)
    doc = json.loads(diskbench("plan", "--profile", str(tmp_path / "knee.yaml"), "--target", str(tmp_path),
                               "--format", "json").stdout)
    jsonschema.validate(doc, schema("plan"), cls=jsonschema.Draft202012Validator)
    (unit,) = doc["units"]
    assert unit["iodepth"] == "auto" and unit["rounds"] == 6 and unit["knee"]["max_iodepth"] == 8


def test_a_client_group_refuses_iodepth_auto_in_one_line() -> None:
    from .test_group import GROUP

    doc = {**GROUP, "workloads": [{"name": "r", "iodepth": "auto"}]}
    with pytest.raises(ProfileError, match="iodepth: auto searches the depth on one machine") as err:
        plan_of(yaml.safe_dump(doc))
    assert "\n" not in err.value.message
