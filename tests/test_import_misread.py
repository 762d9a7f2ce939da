"""Real outputs from other people's machines, imported as their engine meant them (issue 30, item 6).

Every expected figure is one the engine printed in the file (or, for a file derived from a real
one, in the real file it was derived from; tests/fixtures/fio/README.md says how each was made),
never one diskbench computed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from diskbench.engines.fio.parse import KIB_NOTE, NO_IOS_NOTE, parse_fio_output
from diskbench.store import Store

from .conftest import FIO_FIXTURES, FIXTURES, diskbench

FIO2_21 = FIO_FIXTURES / "fio-2.21-randread-4k-qd16.json"  # the real file the fio 2.x ones come from


def _imported(path: Path, tmp_path: Path, *args: str) -> dict[str, Any]:
    out = diskbench("import", str(path), "--no-store", "--format", "json", *args, db=tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def _printed(path: Path) -> dict[str, Any]:
    """The read object of the file's first job, as the engine printed it."""
    text = path.read_text()
    return json.loads(text[text.index("{"):text.rindex("}") + 1])["jobs"][0]["read"]  # type: ignore[no-any-return]


# --- fio before 2.21: io_bytes in KiB -----------------------------------------------------------
def test_fio_before_2_21_io_bytes_are_kib(tmp_path: Path) -> None:
    path = FIO_FIXTURES / "derived-fio-2.20-io_bytes-in-kib.json"
    (result,) = _imported(path, tmp_path)["results"]
    assert _printed(path)["io_bytes"] == 518824  # KiB, as fio < 2.21 printed it
    assert result["io_bytes"] == _printed(FIO2_21)["io_bytes"] == 531275776  # what fio 2.21 printed, in bytes
    assert result["bw_bytes_per_s"] == _printed(path)["bw"] * 1024 == 172883 * 1024  # fio's KiB/s
    assert result["iops"] == 43215.928024 and result["ios"] == 129691
    assert KIB_NOTE in result["notes"]
    csv = diskbench("import", str(path), "--no-store", "--format", "csv", db=tmp_path / "db.sqlite").stdout
    assert ",531275776," in csv


def test_fio_before_2_21_merged_bandwidth_is_in_bytes(tmp_path: Path) -> None:
    """Two such jobs in one reporting group: diskbench merges them (fio's rule: all bytes over the
    longest runtime), which used to give 1/1024 of the bandwidth. Each job's printed bandwidth is
    172883 KiB/s, so the two together are twice that, within fio's rounding down of each."""
    doc = json.loads((FIO_FIXTURES / "derived-fio-2.20-io_bytes-in-kib.json").read_text())
    doc["jobs"].append(json.loads(json.dumps(doc["jobs"][0])))
    path = tmp_path / "two-jobs.json"
    path.write_text(json.dumps(doc))
    (result,) = _imported(path, tmp_path)["results"]
    assert result["jobs"] == 2 and result["io_bytes"] == 2 * 531275776
    assert 2 * 172883 * 1024 <= result["bw_bytes_per_s"] < 2 * 172884 * 1024


# --- fio 2.1.x: no total_ios, no N ----------------------------------------------------------------
def test_fio_2_1_keeps_its_printed_latency_and_says_the_count_is_unknown(tmp_path: Path) -> None:
    path = FIO_FIXTURES / "derived-fio-2.1.11-no-total_ios.json"
    (result,) = _imported(path, tmp_path)["results"]
    clat = _printed(path)["clat"]  # µs
    got = result["clat_us"]
    assert got is not None, "fio's printed latency was dropped"
    assert (got["min"], got["max"], got["mean"], got["stdev"]) == (clat["min"], clat["max"], clat["mean"],
                                                                  clat["stddev"])
    for key, value in clat["percentile"].items():
        if float(key) > 0:
            assert got[f"p{float(key):g}"] == value, key
    assert got["p99"] == 620 and got["p99.99"] == 2288
    assert result["iops"] == _printed(path)["iops"] == 43215  # fio 2.1 printed a whole number
    assert result["bw_bytes_per_s"] == 172883 * 1024
    assert result["ios"] == 0 and NO_IOS_NOTE in result["notes"] and KIB_NOTE in result["notes"]


def test_fio_2_1_jobs_without_counts_are_not_merged_silently(tmp_path: Path) -> None:
    doc = json.loads((FIO_FIXTURES / "derived-fio-2.1.11-no-total_ios.json").read_text())
    doc["jobs"].append({**json.loads(json.dumps(doc["jobs"][0])), "jobname": "second"})
    (g,) = parse_fio_output(json.dumps(doc))
    (read,) = g.directions
    assert read.clat is None and any("cannot be merged" in n and "no I/O counts" in n for n in g.notes)
    assert read.iops == 2 * 43215  # each job's printed IOPS over the same runtime
    per_job = parse_fio_output(json.dumps(doc), per_job=True)  # each job alone keeps fio's figures
    assert [p.directions[0].clat.percentiles["p99"] for p in per_job] == [620, 620]  # type: ignore[union-attr]


# --- group_reporting: one entry for numjobs jobs --------------------------------------------------
@pytest.mark.parametrize(("name", "jobs"), [
    ("randread-4k-numjobs4-group-reporting.jsonplus.json", 4),  # job options: numjobs "4"
    ("client-server-2servers-group-reporting.jsonplus.stdout.txt", 4),  # 2 servers, numjobs "2" each
    ("client-server-one-server-unreachable-rc0.stdout.txt", 2),  # 1 server reached, numjobs "2"
    ("multi-job-numjobs2-two-groups.json", 2),  # no group_reporting: one entry per job
    ("randread-4k-qd16.json", 1),
])
def test_jobs_counts_the_jobs_fio_ran(tmp_path: Path, name: str, jobs: int) -> None:
    text = (FIO_FIXTURES / name).read_text()
    assert f'"numjobs" : "{jobs // (2 if "2servers" in name else 1)}"' in text or jobs == 1
    results = _imported(FIO_FIXTURES / name, tmp_path)["results"]
    assert {r["jobs"] for r in results} == {jobs}


# --- DiskSpd text: the IOPS DiskSpd printed ------------------------------------------------------
@pytest.mark.parametrize("name", ["windows/text/virtualclient_Results_DiskSpd_Text_v2.0.21a_L_D.txt",
                                  "windows/text/virtualclient_DiskSpdExample-WriteOnly-v2.2.0-SingleGroup.txt",
                                  "linux/diskspd-for-linux_randrw70-30_4K_t2_o4_L_D_Sh.txt"])
def test_diskspd_text_iops_are_the_printed_ones(tmp_path: Path, name: str) -> None:
    path = FIXTURES / "diskspd" / name
    text = path.read_text()
    printed = {}
    for section, direction in (("Total IO", "total"), ("Read IO", "read"), ("Write IO", "write")):
        block = text[text.index(f"\n{section}\n"):]
        header = [c.strip() for c in block.split("\n")[2].split("|")]
        total = [c.strip() for c in re.search(r"^total:(.*)$", block, re.MULTILINE).group(1).split("|")]  # type: ignore[union-attr]
        printed[direction] = float(total[header.index("I/O per s") - 1])
    results = _imported(path, tmp_path)["results"]
    assert results and {r["direction"]: r["iops"] for r in results} == {
        d: v for d, v in printed.items() if any(r["direction"] == d for r in results)}


# --- an interrupted fio run ----------------------------------------------------------------------
@pytest.mark.parametrize(("name", "expected"), [
    ("sigint-partial-rc128.stdout.txt", "fio was stopped by signal 2 (SIGINT) ('fio: terminating on signal 2'): "
                                        "these are the figures of 2.772 s of its declared 30 s runtime, a partial run"),
    ("sigint-output-file-time-based-rc128.json", "fio was stopped by signal 2 (SIGINT)"),
    ("derived-sigint-time-based-no-signal-line.json", "fio measured 2.389 s of its declared 10 s runtime "
                                                      "(time_based): it was stopped early"),
])
def test_an_interrupted_fio_run_imports_as_partial(tmp_path: Path, name: str, expected: str) -> None:
    path = FIO_FIXTURES / name
    assert _printed(path)["runtime"] in (2772, 2389)  # ms, as fio printed them; the declared runtime is 30 s / 10 s
    db = tmp_path / "db.sqlite"
    out = diskbench("import", str(path), "--format", "json", db=db)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["run"]["status"] == "partial"
    (result,) = doc["results"]
    assert any(expected in e for e in result["errors"]) and f"warning: {path}: " in out.stderr
    assert result["iops"] == _printed(path)["iops"]  # the figures are kept, and said to be partial
    (run,) = Store(db).list_runs()
    assert run["status"] == "partial"
    no_store = _imported(path, tmp_path)
    assert no_store["run"]["status"] == "partial"


def test_a_run_that_reached_its_steady_state_early_is_not_partial(tmp_path: Path) -> None:
    path = FIO_FIXTURES / "steadystate-iops-slope-attained.json"  # 6896 ms of its 15 s: fio's own stop
    assert _printed(path)["runtime"] == 6896
    assert _imported(path, tmp_path)["run"]["status"] == "completed"
