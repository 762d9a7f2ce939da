"""The command line end to end, in a child process, with real fio and a real store."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from diskbench.store import SCHEMA_VERSION, Store

from ..conftest import diskbench, needs_fio


@needs_fio
def test_run_show_runs_in_every_format(db: Path, tiny_profile: Path, workdir: Path) -> None:
    out = diskbench("run", "--profile", str(tiny_profile), "--target", str(workdir), db=db)
    assert out.returncode == 0, out.stderr
    # plain progress lines (CI=true): one start and one done line per job
    assert "[1/2] rr on dir:" in out.stderr and "[2/2] rw-mix on dir:" in out.stderr
    assert out.stderr.count(": done, ") == 2
    for head in ("workload", "dir", "IOPS", "MiB/s", "p50", "p90", "p95", "p99",
                 "p99.9", "p99.99", " µs"):
        assert head in out.stdout
    assert "rw-mix" in out.stdout and "total" in out.stdout

    listed = diskbench("runs", db=db)
    assert "tiny" in listed.stdout and "completed" in listed.stdout and "2/2" in listed.stdout

    doc = json.loads(diskbench("show", "last", "--format", "json", db=db).stdout)
    assert doc["schema"] == "diskbench.results/1"
    assert doc["run"]["status"] == "completed" and doc["run"]["profile"] == "tiny"
    assert doc["run"]["host"]["fio_version"]
    (target,) = doc["run"]["targets"].values()
    assert target["path"] == str(workdir) and target["fstype"] and "devices" in target
    first = doc["results"][0]
    for key in ("workload", "target", "host", "engine", "engine_version", "direction", "iops",
                "bw_bytes_per_s", "ios", "runtime_s", "clat_us"):
        assert key in first
    for key in ("min", "mean", "max", "stdev", "p1", "p50", "p99", "p99.9", "p99.99"):
        assert isinstance(first["clat_us"][key], float), key
    assert [r["direction"] for r in doc["results"]] == ["read", "read", "write", "total"]

    rows = list(csv.DictReader(io.StringIO(diskbench("show", "last", "--format", "csv", db=db).stdout)))
    assert len(rows) == 4
    assert float(rows[0]["iops"]) == first["iops"]
    assert float(rows[0]["clat_p99.9_us"]) == first["clat_us"]["p99.9"]

    md = diskbench("show", doc["run"]["id"][:15], "--format", "markdown", db=db).stdout
    assert md.startswith(f"### run {doc['run']['id']}")
    assert f"| rr | read | {first['iops']:,.0f} |" in md


def test_import_stores_and_prints(db: Path, fio_fixtures: Path) -> None:
    path = fio_fixtures / "multi-job-numjobs2-two-groups.json"
    out = diskbench("import", str(path), "--format", "json", db=db)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["run"]["origin"] == "import"
    assert [r["workload"] for r in doc["results"]] == ["seqread-128k", "randwrite-4k"]
    assert doc["results"][0]["clat_us"]["percentiles_exact"] is False
    stored = diskbench("show", doc["run"]["id"], "--format", "json", db=db)
    assert json.loads(stored.stdout)["results"] == doc["results"]
    run_dir = Path(json.loads(stored.stdout)["run"]["host"]["source_file"])
    assert run_dir == path.resolve()


def test_import_per_job_no_store_and_errors(db: Path, fio_fixtures: Path) -> None:
    out = diskbench("import", str(fio_fixtures / "job-error-rc1.stdout.json"), "--per-job", "--no-store",
                    "--format", "csv", db=db)
    assert out.returncode == 0
    assert "warning:" in out.stderr and "error 22 (Invalid argument)" in out.stderr
    assert [r["workload"] for r in csv.DictReader(io.StringIO(out.stdout))] == ["ok"]
    assert diskbench("runs", db=db).stdout.startswith("no runs in ")


def test_partly_failed_import_lists_its_jobs_as_show_prints_them(db: Path, fio_fixtures: Path) -> None:
    out = diskbench("import", str(fio_fixtures / "job-error-rc1.stdout.json"), db=db)
    assert out.returncode == 0 and "ok+bad" in out.stdout and "job 'bad' failed" in out.stdout
    listed = diskbench("runs", db=db).stdout
    assert "partial" in listed and "1/1" in listed and "0/1" not in listed


def test_import_of_noise_and_bad_files(db: Path, tmp_path: Path, fio_fixtures: Path) -> None:
    ok = diskbench("import", str(fio_fixtures / "normal-plus-json.stdout.txt"), "--no-store", db=db)
    assert ok.returncode == 0 and "randread-4k" in ok.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("fio: failed to open\n")
    out = diskbench("import", str(bad), db=db)
    assert out.returncode == 2  # a file to import that is not engine output: bad input
    assert out.stderr == (f"error: {bad}: no fio JSON document found (fio: failed to open) "
                          "(run fio with --output-format=json or json+)\n")
    missing = diskbench("import", str(tmp_path / "nope.json"), db=db)
    assert missing.returncode == 2 and "does not exist" in missing.stderr




def test_profiles_and_plans(db: Path) -> None:
    listed = diskbench("profiles", db=db)
    assert "local" in listed.stdout and "e8-family" in listed.stdout
    plan = diskbench("plan", "--profile", "local", db=db)
    assert plan.returncode == 0
    assert "4 job(s), expected" in plan.stdout and "seqread-64k" in plan.stdout
    e8 = diskbench("plan", "--profile", "e8-family", db=db)
    assert e8.returncode == 0 and "Standard_L8s_v2" in e8.stdout and "14 job(s)" in e8.stdout
def test_doctor(db: Path, tmp_path: Path) -> None:
    out = diskbench("doctor", db=db, env={"HOME": str(tmp_path), "SSH_AUTH_SOCK": ""})
    assert "python" in out.stdout and str(db) in out.stdout and "not created yet" in out.stdout
    # optional parts are shown with the fix, never a failure
    for name in ("ssh key", "ssh agent", "azure", "chromium", "mdadm", "mkfs.xfs", "space"):
        assert name in out.stdout, name
    assert "absent  ssh key" in out.stdout and "ssh-keygen" in out.stdout
    assert "absent  azure     no login found (not checked online" in out.stdout
    if "MISSING" in out.stdout:
        assert out.returncode == 1 and "apt-get install" in out.stdout
    else:
        assert out.returncode == 0 and "fio" in out.stdout
    Store(db).close()
    again = diskbench("doctor", db=db, env={"HOME": str(tmp_path)})
    assert f"(schema version {SCHEMA_VERSION})" in again.stdout


def test_bad_arguments_and_unknown_runs(db: Path) -> None:
    assert diskbench("show", "nope", db=db).stderr.startswith("error: no run 'nope'")
    bad_format = diskbench("show", "x", "--format", "yaml", db=db)
    assert bad_format.returncode == 2 and "Invalid value for '--format'" in bad_format.stderr
    missing = diskbench("run", db=db)
    assert missing.returncode == 2 and "Missing option '--profile'" in missing.stderr
    resume = diskbench("resume", "nope", db=db)
    assert resume.returncode == 2 and "Traceback" not in resume.stderr  # an unknown run is bad input


def test_unreachable_host_prints_no_empty_table(db: Path, tiny_profile: Path) -> None:
    out = diskbench("run", "--profile", str(tiny_profile), "--host", "root@127.0.0.1:1", "--accept-new-host-key",
                    db=db)
    assert out.returncode == 1 and out.stdout == ""
    assert "cannot reach 127.0.0.1:1" in out.stderr and "nothing ran, no run was stored" in out.stderr
    assert out.stderr.count("cannot reach") == 1 and "resume" not in out.stderr
    assert Store(db).list_runs() == []  # a pre-flight failure leaves no row


def test_version_and_shell_completion(db: Path) -> None:
    from diskbench import __version__

    assert diskbench("--version", db=db).stdout.strip() == f"diskbench, version {__version__}"
    script = diskbench(db=db, env={"_DISKBENCH_COMPLETE": "bash_source"})
    assert script.returncode == 0 and "_diskbench_completion" in script.stdout
    words = diskbench(db=db, env={"_DISKBENCH_COMPLETE": "bash_complete", "COMP_WORDS": "diskbench ru",
                                  "COMP_CWORD": "1"})
    assert words.stdout.split() == ["plain,run", "plain,runs"]
    sub = diskbench(db=db, env={"_DISKBENCH_COMPLETE": "bash_complete", "COMP_WORDS": "diskbench runs p",
                                "COMP_CWORD": "2"})
    assert "plain,prune" in sub.stdout.split()


def test_store_errors_are_one_line_and_debug_shows_traceback(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database" * 100)
    out = diskbench("runs", db=junk)
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "is not a diskbench store" in out.stderr
    debug = diskbench("runs", db=junk, env={"DISKBENCH_DEBUG": "1"})
    assert "Traceback" in debug.stderr


@needs_fio
def test_repeats_are_stored_and_summarized(db: Path, tiny_profile: Path, workdir: Path) -> None:
    out = diskbench("run", "--profile", str(tiny_profile), "--target", str(workdir), "--repeats", "2",
                    "--format", "json", db=db)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [r["repeat"] for r in doc["results"] if r["workload"] == "rr"] == [1, 2]
    summary = {(s["workload"], s["direction"]): s for s in doc["summary"]}
    assert summary[("rr", "read")]["n"] == 2 and summary[("rr", "read")]["iops_cv"] is not None
    table = diskbench("show", "last", db=db).stdout
    assert "IOPS cv" in table and " 2 " in table
