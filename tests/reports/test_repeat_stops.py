"""How many repeats each job took under ``--repeats auto`` and why it stopped, in every report format:
the table (its caption), Markdown (a list after the table), CSV (three columns on each of the job's
rows) and HTML (one line under the job's first row).

One run is real (fio, ``run --repeats auto`` with nothing to compare with: every job stops at the first
three for want of a baseline, tests/runner/test_auto_repeats.py's first step); the others are stored
runs whose stops the test writes, so that each reason and the wording of each is known.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from diskbench.reports.formats import CSV_FIELDS, repeat_lines, to_csv, to_markdown
from diskbench.reports.html import build_report
from diskbench.store import Store

from ..conftest import diskbench, needs_fio
from ..runner.test_auto_repeats import _learn, _profile
from ..synth import add_run

STOPS = [
    {"job": "local/scratch/flaky", "repeats": 6, "stopped": "decisive", "verdict": "PASS", "detail": "read iops"},
    {"job": "local/scratch/noisy", "repeats": 8, "stopped": "limit", "verdict": "INCONCLUSIVE", "detail": ""},
    {"job": "local/scratch/first", "repeats": 3, "stopped": "no baseline", "verdict": "LEARNING",
     "detail": "0 of 5 baseline runs"},
]
SAID = {"flaky": "6 repeats, PASS, decided", "noisy": "8 repeats, still INCONCLUSIVE at the limit",
        "first": "3 repeats, no baseline yet (0 of 5 baseline runs)"}


def _stored(db: Path) -> tuple[Store, str]:
    """A stored run of three jobs with as many repeats as their stops say, and those stops."""
    store = Store(db)
    run_id = add_run(store, 1, {"flaky": [200.0 + i for i in range(6)], "noisy": [150.0, 250.0] * 4,
                                "first": [300.0, 301.0, 299.0]})
    store.merge_facts(run_id, {"repeats": STOPS})
    return store, run_id


def test_markdown_lists_each_jobs_stop_after_the_table(db: Path) -> None:
    store, run_id = _stored(db)
    try:
        md = to_markdown(store.get_run(run_id), store.get_results(run_id))
    finally:
        store.close()
    tail = md.split("**repeats auto** (how many each job took, and why it stopped):\n\n", 1)[1]
    assert tail.splitlines() == [f"- {job}: {text}" for job, text in SAID.items()]
    assert all(len(line) <= 80 for line in tail.splitlines()), md


def test_csv_gives_every_row_its_jobs_stop(db: Path) -> None:
    store, run_id = _stored(db)
    try:
        rows = list(csv.DictReader(io.StringIO(to_csv(store.get_run(run_id), store.get_results(run_id)))))
    finally:
        store.close()
    assert list(rows[0]) == CSV_FIELDS and CSV_FIELDS[-3:] == ["auto_repeats", "auto_stopped", "auto_verdict"]
    by_job = {(r["workload"], r["auto_repeats"], r["auto_stopped"], r["auto_verdict"]) for r in rows}
    assert by_job == {("flaky", "6", "decisive", "PASS"), ("noisy", "8", "limit", "INCONCLUSIVE"),
                      ("first", "3", "no baseline", "LEARNING")}
    assert len(rows) == 6 + 8 + 3  # one row per result, each with its job's stop


def test_html_says_each_stop_once_under_its_job(db: Path) -> None:
    store, run_id = _stored(db)
    try:
        html = build_report(store, [run_id], with_history=False)
    finally:
        store.close()
    said = re.findall(r'<tr class="repeats"><td class="l x" colspan="\d+">([^<]*)</td></tr>', html)
    assert sorted(said) == sorted(f"repeats auto: {text}" for text in SAID.values())


def test_without_automatic_repeats_no_report_says_anything(db: Path) -> None:
    store = Store(db)
    run_id = add_run(store, 1, {"fixed": [100.0, 101.0]})
    run, results = store.get_run(run_id), store.get_results(run_id)
    try:
        assert "repeats auto" not in to_markdown(run, results) and repeat_lines(run) == []
        assert {r["auto_stopped"] for r in csv.DictReader(io.StringIO(to_csv(run, results)))} == {""}
        assert 'class="repeats"' not in build_report(store, [run_id], with_history=False)
    finally:
        store.close()


def test_two_jobs_of_one_name_are_told_apart(db: Path) -> None:
    """The same workload on two targets: each is named by its whole key, not twice by the same name."""
    store, run_id = _stored(db)
    two = [{**STOPS[0], "job": "local/a/flaky"}, {**STOPS[0], "job": "local/b/flaky", "repeats": 4}]
    store.merge_facts(run_id, {"repeats": two})
    try:
        md = to_markdown(store.get_run(run_id), store.get_results(run_id))
    finally:
        store.close()
    assert "- local/a/flaky: 6 repeats, PASS, decided" in md and "- local/b/flaky: 4 repeats, PASS, decided" in md


@needs_fio
def test_a_real_run_shows_its_stops_in_every_format(tmp_path: Path, db: Path) -> None:
    """``run --repeats auto`` with nothing to compare with: each job stopped after the first three, for
    want of a baseline (0 of the gate's 5 runs); ``show`` and ``report`` say so in every format."""
    results = _learn(tmp_path, db, _profile(tmp_path, "alpha", "beta"))
    run_id = results.run["id"]
    said = {n: "3 repeats, no baseline yet (0 of 5 baseline runs)" for n in ("alpha", "beta")}
    table = diskbench("show", run_id, db=db).stdout.splitlines()
    assert [t for t in table if t.startswith("repeats auto:")] == [f"repeats auto: {n}: {s}" for n, s in said.items()]
    md = diskbench("show", run_id, "--format", "markdown", db=db).stdout
    listed = md.split("**repeats auto** (how many each job took, and why it stopped):\n\n", 1)[1].splitlines()
    assert listed == [f"- {n}: {s}" for n, s in said.items()], md
    rows = list(csv.DictReader(io.StringIO(diskbench("show", run_id, "--format", "csv", db=db).stdout)))
    assert sorted((r["workload"], r["repeat"], r["auto_repeats"], r["auto_stopped"]) for r in rows) == [
        (n, str(k), "3", "no baseline") for n in ("alpha", "beta") for k in (1, 2, 3)]
    out = diskbench("report", run_id, "--html", str(tmp_path / "r.html"), db=db)
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "r.html").read_text()
    assert sorted(re.findall(r'<tr class="repeats"><td class="l x" colspan="\d+">([^<]*)</td>', html)) == [
        f"repeats auto: {s}" for s in said.values()]
    assert all(len(t) <= 80 for t in table if t.startswith("repeats auto:")) and all(len(t) <= 80 for t in listed)
