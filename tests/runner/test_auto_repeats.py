"""Automatic repeats (``run --repeats auto``): a job runs again until the gate decides it, with real fio.

Each job is rate-limited (``rate_iops``) and reads a file in the page cache, so fio measures what the
test asked for within a few percent (a loaded machine makes a run end a few tens of milliseconds
late); a ``fio`` first in PATH sets each measured run's ``rate_iops`` from a list (the Nth run of a
job gets the Nth rate, the last one from there on) before it hands over to the real fio. The
baseline is a store of earlier runs of the same testbed whose IOPS the test chose. Every verdict
below is worked out outside diskbench: by hand in each docstring, and from the IOPS fio measured
with ``statistics`` (the gate's rule: a run whose repeats vary by more than the threshold, sample
standard deviation over mean, is INCONCLUSIVE; else its median is held against the baseline median
+- the threshold), so a late second moves a crossing by a round but never the test.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from diskbench import api
from diskbench.api import Results
from diskbench.runner.auto_repeats import REASONS
from diskbench.runner.progress import NullProgress
from diskbench.schemas import schema
from diskbench.store import Store

from ..conftest import diskbench, finish, needs_fio, start_diskbench
from ..synth import result

POLICY = "thresholds: {iops: 0.10}\n"  # IOPS alone: rate-limited latencies still vary from run to run
WRAPPER = """#!{python}
import json, os, re, sys
from pathlib import Path

args = sys.argv[1:]
job = Path(args[-1]) if args else None
if job is not None and job.name == "job.fio" and os.environ.get("TEST_RATES"):
    text = job.read_text()
    name = [s for s in re.findall(r"^\\[(.+)\\]$", text, re.M) if s != "global"][0]
    rates = json.loads(os.environ["TEST_RATES"]).get(name)
    if rates:
        counter = Path(os.environ["TEST_COUNTER"])
        counts = json.loads(counter.read_text()) if counter.exists() else {{}}
        n = counts.get(name, 0)
        counts[name] = n + 1
        # atomic: a Ctrl-C that kills this wrapper mid-write must not leave the next run an empty file
        counter.with_suffix('.tmp').write_text(json.dumps(counts))
        os.replace(counter.with_suffix('.tmp'), counter)
        text = re.sub(r"^rate_iops=\\d+$", "rate_iops=%d" % rates[min(n, len(rates) - 1)], text, flags=re.M)
        job.write_text(text)
os.execv({fio!r}, ["fio", *args])
"""


def _profile(tmp_path: Path, *names: str) -> Path:
    doc = {"name": "auto", "description": "rate-limited jobs",
           "defaults": {"size": "4M", "runtime": "1s", "ramp_time": "0s", "ioengine": "psync"},
           "workloads": [{"name": n, "rw": "randread", "bs": "4k", "rate_iops": 200, "direct": False,
                          "extra": {"invalidate": 0}} for n in names]}  # the page cache: no disk in the way
    path = tmp_path / "auto.yaml"
    path.write_text(yaml.safe_dump(doc))
    (tmp_path / "work").mkdir(exist_ok=True)
    (tmp_path / "gate.yaml").write_text(POLICY)
    return path


def _env(tmp_path: Path, rates: dict[str, list[int]]) -> dict[str, str]:
    """PATH with the rate-setting fio first; each call counts its runs afresh."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "fio"
    real = shutil.which("fio")
    assert real is not None and Path(real).parent != bin_dir
    wrapper.write_text(WRAPPER.format(python=sys.executable, fio=real))
    wrapper.chmod(0o755)
    counter = tmp_path / f"counts-{time.monotonic_ns()}.json"
    return {"PATH": f"{bin_dir}:{Path(real).parent}:/usr/bin:/bin", "TEST_RATES": json.dumps(rates),
            "TEST_COUNTER": str(counter)}


def _learn(tmp_path: Path, db: Path, profile: Path) -> Results:
    """A first run through the library, with nothing to compare with: every job stops at the
    minimum, said once; its jobs carry the testbeds the baseline is made of."""
    lines: list[str] = []

    class Lines(NullProgress):
        def line(self, text: str) -> None:
            lines.append(text)

    store = Store(db)
    try:
        results = api.run(str(profile), options=api.run_options(target_dir=str(tmp_path / "work"),
                                                                repeats="auto:8"), store=store, progress=Lines())
    finally:
        store.close()
    stops = results.run["facts"]["repeats"]
    assert {s["stopped"] for s in stops} == {"no baseline"} and {s["repeats"] for s in stops} == {3}
    assert all(s["detail"] == "0 of 5 baseline runs" for s in stops)
    said = [t for t in lines if "no baseline" in t]
    assert len(said) == 1 and said[0].startswith("no baseline yet for ") and len(said[0]) <= 80, lines
    assert not any(t.startswith(("flaky: ", "steady: ")) for t in lines), lines  # nothing repeated
    return results


def _baseline(db: Path, learned: Results, iops: dict[str, list[float]]) -> None:
    """Earlier completed runs of the learned run's testbeds, one per value, with these IOPS; the learning
    run itself goes (its figures are not the test's)."""
    store = Store(db)
    jobs = {j["workload"]: j for j in store.get_jobs(learned.run["id"]) if j["repeat"] == 1}
    count = len(next(iter(iops.values())))
    now = datetime.now(timezone.utc)
    for i in range(count):
        run_id = store.create_run(profile="auto", profile_path=None, profile_text="name: auto\n", options={})
        store.add_jobs(run_id, [{"key": jobs[w]["base_key"], "workload": w, "target": jobs[w]["target"],
                                 "host": jobs[w]["host"], "base_key": jobs[w]["base_key"]} for w in iops])
        for w, values in iops.items():
            store.update_job(run_id, jobs[w]["base_key"], testbed=jobs[w]["testbed"], status="done")
            store.add_results(run_id, jobs[w]["base_key"], result(values[i]), workload=w, target=jobs[w]["target"],
                              host=jobs[w]["host"])
        started = (now - timedelta(hours=count - i)).isoformat(timespec="seconds")
        store.update_run(run_id, started=started, status="completed", pid=None)
    store.delete_run(learned.run["id"])
    store.close()


def _run(tmp_path: Path, db: Path, profile: Path, repeats: str, rates: dict[str, list[int]],
         *extra: str) -> tuple[int, dict[str, Any], list[str]]:
    """``run --format json`` with automatic repeats, its document checked against its schema."""
    out = diskbench("run", "--profile", str(profile), "--target", str(tmp_path / "work"), "--repeats", repeats,
                    "--policy", str(tmp_path / "gate.yaml"), "--format", "json", *extra, db=db,
                    env=_env(tmp_path, rates))
    return out.returncode, _document(out.stdout), out.stderr.splitlines()


def _document(text: str) -> dict[str, Any]:
    """A run's JSON, which its schema accepts (``run.repeats`` included)."""
    doc: dict[str, Any] = json.loads(text)
    jsonschema.validate(doc, schema("results"), cls=jsonschema.Draft202012Validator)
    return doc


def _iops(doc: dict[str, Any], workload: str) -> list[float]:
    """Each repeat's IOPS: the rate asked for, within fio's catching up (201 for 200 in a second)."""
    return [r["iops"] for r in doc["results"] if r["workload"] == workload]


def _said(lines: list[str], job: str) -> list[str]:
    """The lines automatic repeats said about ``job``."""
    return [t for t in lines if t.startswith(f"{job}: ")]


def _spread(iops: list[float]) -> float:
    """How much repeats vary, as the gate's rule says: sample standard deviation over mean."""
    return statistics.stdev(iops) / statistics.fmean(iops)


def _decided_at(iops: list[float], threshold: float = 0.10) -> int:
    """The first number of repeats (from 3) that vary by no more than ``threshold``."""
    return next(n for n in range(3, len(iops) + 1) if _spread(iops[:n]) <= threshold)


FLAKY = [170, 200, 230, 200]  # then 200 from there on


def _running(db: Path, which: Callable[[dict[str, Any]], bool], timeout: float = 60) -> str | None:
    """The run in which a job ``which`` picks is running, once one is (None after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        store = Store(db)
        try:
            for run in store.list_runs(5):
                if any(which(j) and j["status"] == "running" for j in store.get_jobs(run["id"])):
                    return str(run["id"])
        finally:
            store.close()
        time.sleep(0.05)
    return None


def _check_decided(doc: dict[str, Any], lines: list[str], announced_from: int = 4) -> None:
    """``flaky`` of FLAKY against a baseline of 200 (median 200, no spread: its band is the threshold,
    180 to 220): three repeats vary by 30 / 200 = 15% (INCONCLUSIVE, also when one of them is a few
    percent off), four by sqrt(2 x 30^2 / 3) / 200 = 12.2%, five by 10.6%, six by 9.5%: PASS, with
    median 200, after six (or a round either side, as the measured figures say)."""
    iops = _iops(doc, "flaky")
    n = _decided_at(iops)
    assert len(iops) == n >= 4, (iops, lines)
    assert 180 < statistics.median(iops) < 220
    assert iops[:4] == pytest.approx([170, 200, 230, 200], rel=0.1) and iops[4:] == pytest.approx([200] * (n - 4),
                                                                                                     rel=0.1)
    (stop,) = doc["run"]["repeats"]
    assert (stop["repeats"], stop["stopped"], stop["verdict"]) == (n, "decisive", "PASS")
    said = _said(lines, "flaky")
    assert said[-1] == f"flaky: PASS after {n} repeats, decided", lines
    starts = []  # each round's line: the spread so far, and the repeat it starts
    for line in said[:-1]:
        found = re.fullmatch(r"flaky: INCONCLUSIVE \(iops varies ([\d.]+)% > 10%\): repeat (\d+) of up to 10", line)
        assert found is not None, line
        starts.append(int(found[2]))
        assert float(found[1]) == pytest.approx(100 * _spread(iops[:starts[-1] - 1]), abs=0.06)
    assert starts == list(range(announced_from, n + 1)), lines


@needs_fio
def test_an_inconclusive_job_repeats_until_the_gate_decides(tmp_path: Path, db: Path) -> None:
    """``flaky`` (FLAKY, see ``_check_decided``): INCONCLUSIVE after the first three, PASS some rounds
    later, and ``diskbench gate`` afterwards says PASS too."""
    profile = _profile(tmp_path, "flaky")
    _baseline(db, _learn(tmp_path, db, profile), {"flaky": [200, 201, 199, 200, 200]})
    code, doc, lines = _run(tmp_path, db, profile, "auto", {"flaky": FLAKY})
    assert code == 0, lines
    _check_decided(doc, lines)
    n = doc["run"]["repeats"][0]["repeats"]
    assert [r["repeat"] for r in doc["results"]] == list(range(1, n + 1))
    assert doc["run"]["options"]["repeats"] == "auto:10" and doc["run"]["options"]["policy"]
    assert any(t.startswith(f"[{n}/{n}] flaky") for t in lines), lines  # the count grows with the rounds
    # every repeat is in the store as it was parsed, and the gate afterwards says what the run said
    store = Store(db)
    jobs = store.get_jobs(doc["run"]["id"])
    assert [(j["repeat"], j["status"], j["seq"]) for j in jobs] == [(k + 1, "done", k) for k in range(n)]
    store.close()
    gated = diskbench("gate", doc["run"]["id"], "--policy", str(tmp_path / "gate.yaml"), db=db)
    assert gated.returncode == 0 and "PASS" in gated.stdout
    table = diskbench("show", doc["run"]["id"], db=db).stdout
    assert f"repeats auto: flaky: {n} repeats, PASS, decided" in table


@needs_fio
def test_the_limit_stops_a_job_that_stays_inconclusive(tmp_path: Path, db: Path) -> None:
    """``flaky`` alternates 150 and 250 IOPS: its repeats vary by 57.7 / 183.3 = 31.5% (three) and
    57.7 / 200 = 28.9% (four), more than 10%: INCONCLUSIVE at every round, so it stops at the limit, 4.
    ``steady`` runs at 200 against a baseline of 400 (limit 360) with no spread: REGRESSED after the
    first three, and never repeated."""
    profile = _profile(tmp_path, "flaky", "steady")
    _baseline(db, _learn(tmp_path, db, profile), {"flaky": [200, 201, 199, 200, 200],
                                                   "steady": [400, 402, 398, 400, 400]})
    code, doc, lines = _run(tmp_path, db, profile, "auto:4", {"flaky": [150, 250, 150, 250], "steady": [200]})
    assert code == 0, lines  # the run completed; judging it is the gate's business
    assert _iops(doc, "flaky") == pytest.approx([150, 250, 150, 250], rel=0.1)
    assert _iops(doc, "steady") == pytest.approx([200, 200, 200], rel=0.1)
    stops = {s["job"].rsplit("/", 1)[1]: s for s in doc["run"]["repeats"]}
    assert (stops["flaky"]["repeats"], stops["flaky"]["stopped"], stops["flaky"]["verdict"]) == (4, "limit",
                                                                                                  "INCONCLUSIVE")
    assert (stops["steady"]["repeats"], stops["steady"]["stopped"], stops["steady"]["verdict"]) == (3, "decisive",
                                                                                                    "REGRESSED")
    assert _said(lines, "steady") == ["steady: REGRESSED after 3 repeats, decided"]
    assert _said(lines, "flaky")[-1] == "flaky: still INCONCLUSIVE after 4 repeats, the limit (auto:4)"
    mine = [t for t in lines if t.startswith(("flaky: ", "steady: ", "automatic repeats", "no baseline"))]
    assert mine and all(len(t) <= 80 for t in mine), mine
    gated = diskbench("gate", doc["run"]["id"], "--policy", str(tmp_path / "gate.yaml"), db=db)
    assert gated.returncode == 1 and "REGRESSED" in gated.stdout


@pytest.mark.parametrize(("args", "names"), [
    (["--repeats", "auto:0"], ["--repeats", "auto:0", "3", "100"]),
    (["--repeats", "foo"], ["--repeats", "foo", "auto"]),
    (["--repeats", "0"], ["--repeats"]),
    (["--repeats", "auto:101"], ["--repeats", "auto:101"]),
    (["--repeats", "3", "--policy", "gate.yaml"], ["--policy", "--repeats auto"]),
])
def test_a_wrong_repeats_is_one_line_naming_the_option(tmp_path: Path, tiny_profile: Path, workdir: Path,
                                                       args: list[str], names: list[str]) -> None:
    out = diskbench("run", "--profile", str(tiny_profile), "--target", str(workdir), *args, db=tmp_path / "db")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: "), out.stderr
    assert all(n in out.stderr for n in names), out.stderr
    assert not (tmp_path / "db").exists()  # nothing ran, nothing was stored


def test_the_run_documents_schema_knows_every_reason_to_stop() -> None:
    stop = schema("results")["$defs"]["repeat_stop"]["properties"]
    assert stop["stopped"]["enum"] == list(REASONS)
    assert stop["verdict"]["enum"] == schema("gate")["properties"]["verdict"]["enum"]


def test_a_policy_that_does_not_load_stops_the_run_before_it_exists(tmp_path: Path, tiny_profile: Path,
                                                                    workdir: Path) -> None:
    (tmp_path / "gate.yaml").write_text("thresholds: {iops: two}\n")
    out = diskbench("run", "--profile", str(tiny_profile), "--target", str(workdir), "--repeats", "auto",
                    "--policy", str(tmp_path / "gate.yaml"), db=tmp_path / "db.sqlite")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "gate.yaml:1: " in out.stderr and "iops" in out.stderr
    store = Store(tmp_path / "db.sqlite")
    assert store.list_runs() == []
    store.close()


@needs_fio
def test_an_interrupted_run_resumes_its_rounds(tmp_path: Path, db: Path) -> None:
    """The first test's run, stopped (Ctrl-C) once its fourth repeat runs (in it, or in the next one on a
    slow machine): the repeat was recorded before it ran, so ``resume`` runs it again and goes on with
    the rounds until the gate decides."""
    profile = _profile(tmp_path, "flaky")
    _baseline(db, _learn(tmp_path, db, profile), {"flaky": [200, 201, 199, 200, 200]})
    env = _env(tmp_path, {"flaky": FLAKY})
    proc = start_diskbench("run", "--profile", str(profile), "--target", str(tmp_path / "work"), "--repeats",
                           "auto", "--policy", str(tmp_path / "gate.yaml"), db=db, env=env)
    run_id = _running(db, lambda j: j["repeat"] == 4)
    assert run_id is not None, "the fourth repeat never ran"
    code, _ = finish(proc, signal.SIGINT)
    assert code == 130
    store = Store(db)
    jobs = store.get_jobs(run_id)
    assert "repeats" not in store.get_run(run_id)["facts"]  # nothing decided yet
    store.close()
    last = jobs[-1]
    assert last["repeat"] >= 4 and last["status"] in ("interrupted", "pending", "done"), jobs
    assert all(j["status"] == "done" for j in jobs[:-1])
    out = diskbench("resume", run_id, "--format", "json", db=db, env=env)
    assert out.returncode == 0, out.stderr
    _check_decided(_document(out.stdout), out.stderr.splitlines(), announced_from=last["repeat"] + 1)


@needs_fio
def test_resume_asks_for_the_rounds_an_interrupted_run_had_not_asked_for(tmp_path: Path, db: Path) -> None:
    """Stopped while ``steady``'s third repeat runs, ``flaky`` has all its first three and was never
    judged (its machine had not run through its units): ``resume`` runs ``steady``'s third again and
    asks the gate about ``flaky`` at once, which goes on with its rounds until it is decided."""
    profile = _profile(tmp_path, "flaky", "steady")
    _baseline(db, _learn(tmp_path, db, profile), {"flaky": [200, 201, 199, 200, 200],
                                                   "steady": [400, 402, 398, 400, 400]})
    env = _env(tmp_path, {"flaky": FLAKY, "steady": [200]})
    proc = start_diskbench("run", "--profile", str(profile), "--target", str(tmp_path / "work"), "--repeats",
                           "auto", "--policy", str(tmp_path / "gate.yaml"), db=db, env=env)
    run_id = _running(db, lambda j: j["key"].endswith("/steady#3"))
    assert run_id is not None, "steady's third repeat never ran"
    assert finish(proc, signal.SIGINT)[0] == 130
    store = Store(db)
    late = store.get_run(run_id)["facts"].get("repeats")  # Ctrl-C came after the first three (a slow machine)
    store.close()
    out = diskbench("resume", run_id, "--format", "json", db=db, env=env)
    assert out.returncode == 0, out.stderr
    doc, lines = _document(out.stdout), out.stderr.splitlines()
    if not late:
        assert lines.index(next(t for t in lines if t.startswith("flaky: INCONCLUSIVE"))) < lines.index(
            next(t for t in lines if t.startswith("run ")))  # asked before anything ran again
    stops = {s["job"].rsplit("/", 1)[1]: s for s in doc["run"]["repeats"]}
    assert (stops["steady"]["repeats"], stops["steady"]["verdict"]) == (3, "REGRESSED")
    iops = _iops(doc, "flaky")
    assert (stops["flaky"]["repeats"], stops["flaky"]["verdict"]) == (_decided_at(iops), "PASS") and len(iops) >= 4


@needs_fio
def test_without_a_store_there_is_no_baseline(tmp_path: Path) -> None:
    """The library's run kept in memory has no history: every job stops at the first three, saying why."""
    results = api.run(str(_profile(tmp_path, "flaky")), target_dir=str(tmp_path / "work"), repeats="auto",
                      store=None, progress=None)
    (stop,) = results.run["facts"]["repeats"]
    assert (stop["repeats"], stop["stopped"], stop["verdict"]) == (3, "no baseline", "LEARNING")
    assert stop["detail"] == "results kept in memory: no stored history" and len(results) == 3
