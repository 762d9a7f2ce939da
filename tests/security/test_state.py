"""State and durability: paths, run and target locks, killed runs, a full or damaged store
(issue 24, items 6-11). Every step through the CLI; loop devices and tmpfs where the disk matters."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from diskbench.store import Store

from ..conftest import FIO_FIXTURES, diskbench, finish, needs_fio, start_diskbench, wait_for_job
from ..interrupting import until

pytestmark = needs_fio


def write(path: Path, runtime: str = "1s", n: int = 2, prefix: str = "w", **extra: object) -> Path:
    doc = {"name": "state", "defaults": {"size": "8M", "runtime": runtime, "ramp_time": "0s", "ioengine": "psync"},
           "workloads": [{"name": f"{prefix}{i}", "rw": "randwrite"} for i in range(1, n + 1)], **extra}
    path.write_text(yaml.safe_dump(doc))
    return path


def killed(db: Path, profile: Path, workload: str, *args: str, ready: Callable[[], bool] | None = None) -> None:
    """``diskbench run`` killed with SIGKILL once ``workload`` runs (and ``ready`` holds: the job is
    marked running a moment before its engine starts): nothing of it can clean up."""
    proc = start_diskbench("run", "--profile", str(profile), *args, db=db)
    wait_for_job(db, workload)
    if ready is not None:
        until(ready)
    proc.kill()
    finish(proc)


def only_run(db: Path) -> dict[str, object]:
    (run,) = Store(db).list_runs()
    return run


def test_relative_store_paths_are_resolved_where_they_enter(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    profile = write(tmp_path / "p.yaml")
    env = {k: v for k, v in os.environ.items() if k not in ("DISKBENCH_DB", "DISKBENCH_DEBUG")}
    for args, extra_env, store in ((["--db", "rel/db.sqlite"], {}, tmp_path / "rel" / "db.sqlite"),
                                   ([], {"DISKBENCH_DB": "env/db.sqlite"}, tmp_path / "env" / "db.sqlite")):
        out = subprocess.run([sys.executable, "-m", "diskbench", *args, "run", "--profile", str(profile),
                              "--target", "work"], cwd=tmp_path, env={**env, "CI": "true", **extra_env},
                             capture_output=True, text=True, timeout=120, check=False)
        assert out.returncode == 0, out.stderr
        assert Store(store).list_runs()[0]["status"] == "completed"


def test_two_resumes_of_one_run_take_turns(db: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    profile = write(tmp_path / "p.yaml", runtime="2s", n=4)
    proc = start_diskbench("run", "--profile", str(profile), "--target", str(work), db=db)
    wait_for_job(db, "w2")
    assert finish(proc, signal.SIGINT)[0] == 130
    run_id = str(only_run(db)["id"])
    first = start_diskbench("resume", run_id, db=db)
    wait_for_job(db, "w2", status="running", timeout=60)
    second = diskbench("resume", run_id, db=db)
    assert second.returncode == 1, second.stderr
    assert f"run {run_id} is being worked on by process {first.pid} on" in second.stderr
    code, stderr = finish(first)
    assert code == 0, stderr
    run = only_run(db)
    assert run["status"] == "completed" and run["job_counts"] == {"done": 4}
    assert len(Store(db).get_results(run_id)) == 4


def test_a_killed_holder_is_noticed(db: Path, tmp_path: Path) -> None:
    """SIGKILL leaves the lock's pid behind: a pid that is gone holds nothing."""
    work = tmp_path / "work"
    work.mkdir()
    killed(db, write(tmp_path / "p.yaml", runtime="2s", n=3), "w2", "--target", str(work))
    assert only_run(db)["status"] == "interrupted"
    out = diskbench("resume", str(only_run(db)["id"]), db=db)
    assert out.returncode == 0, out.stderr
    assert only_run(db)["status"] == "completed"
    assert not list(work.iterdir())  # the killed attempt's data files too were removed


def test_two_runs_on_one_target_at_once(db: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    first = start_diskbench("run", "--profile", str(write(tmp_path / "a.yaml", runtime="4s", n=1)), "--target",
                            str(work), db=db)
    wait_for_job(db, "w1")
    second = diskbench("run", "--profile", str(write(tmp_path / "b.yaml", n=1)), "--target", str(work), db=db)
    assert second.returncode == 1
    assert f"dir:{work} is in use by another diskbench run (run " in second.stderr, second.stderr
    assert f"pid {first.pid} on" in second.stderr
    assert finish(first)[0] == 0
    again = diskbench("run", "--profile", str(write(tmp_path / "b.yaml", n=1)), "--target", str(work), db=db)
    assert again.returncode == 0, again.stderr  # free again once the first has finished


def test_a_killed_run_on_a_device_resumes_on_its_own_file_system(loop: str, db: Path, tmp_path: Path) -> None:
    profile = write(tmp_path / "p.yaml", runtime="3s", target={"device": loop, "fs": "ext4"},
                    destroy_data_on=[loop])
    killed(db, profile, "w1")
    run_id = str(only_run(db)["id"])
    point = f"/mnt/diskbench-{run_id[-4:]}-local"
    assert subprocess.run(["mountpoint", "-q", point]).returncode == 0  # left mounted by the kill
    out = diskbench("resume", run_id, db=db)
    assert out.returncode == 0, out.stderr
    assert f"unmounted {point}" in out.stderr and "refusing" not in out.stderr
    assert only_run(db)["status"] == "completed"
    assert subprocess.run(["mountpoint", "-q", point]).returncode != 0 and not Path(point).exists()
    assert Store(db).prepared(run_id, open_only=True) == [e for e in Store(db).prepared(run_id, open_only=True)
                                                           if e["kind"] == "filesystem"]


def test_cleanup_removes_what_a_killed_run_left(loop: str, db: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "users-own.0.0").write_text("a file of the user's, named like fio's")
    # w1.0.0 is laid out by the engine, which the killed run leaves running
    killed(db, write(tmp_path / "a.yaml", runtime="3s", n=1), "w1", "--target", str(work),
           ready=lambda: (work / "w1.0.0").exists())
    dev = write(tmp_path / "b.yaml", runtime="3s", n=1, prefix="d", target={"device": loop, "fs": "ext4"},
                destroy_data_on=[loop])
    killed(db, dev, "d1")
    point = f"/mnt/diskbench-{Store(db).list_runs()[0]['id'][-4:]}-local"
    assert (work / "w1.0.0").exists() and subprocess.run(["findmnt", "-S", loop], capture_output=True).returncode == 0
    dry = diskbench("cleanup", "--provider", "hosts", "--dry-run", db=db)
    assert dry.returncode == 0, dry.stderr
    assert f"would undo on local: files {work}" in dry.stdout and "would undo on local: mount /mnt/diskbench-" \
        in dry.stdout
    assert (work / "w1.0.0").exists()
    out = diskbench("cleanup", "--provider", "hosts", db=db)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in work.iterdir()) == ["users-own.0.0"]  # only the run's file went
    assert subprocess.run(["findmnt", "-S", loop], capture_output=True).returncode != 0
    assert not Path(point).exists()
    again = diskbench("cleanup", "--provider", "hosts", db=db)
    assert again.returncode == 0 and "nothing to clean up" in again.stdout


def test_a_full_store_disk_is_an_environment_error(tiny_tmpfs: Path, tmp_path: Path) -> None:
    db = tiny_tmpfs / "db.sqlite"
    work = tmp_path / "work"
    work.mkdir()
    profile = write(tmp_path / "p.yaml", n=3)
    assert diskbench("runs", db=db).returncode == 0  # the store exists, then the disk fills up
    filler = tiny_tmpfs / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True, check=False)
    for args in (("run", "--profile", str(profile), "--target", str(work)), ("runs",)):
        out = diskbench(*args, db=db)
        assert out.returncode in (0, 1), out.stderr
        if out.returncode:
            assert "full" in out.stderr or "No space left" in out.stderr, out.stderr
    assert "file system is full" in diskbench("run", "--profile", str(profile), "--target", str(work), db=db).stderr
    filler.unlink()
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for run in Store(db).list_runs():
        if run["status"] != "completed":
            out = diskbench("resume", str(run["id"]), db=db)
            assert out.returncode == 0, out.stderr
    assert all(r["status"] == "completed" for r in Store(db).list_runs())


def test_a_damaged_store_says_so_everywhere(db: Path, tmp_path: Path) -> None:
    for _ in range(3):
        assert diskbench("import", str(FIO_FIXTURES / "randread-4k-qd16.json"), db=db).returncode == 0
    run_id = str(Store(db).list_runs()[0]["id"])
    Store(db).close()
    with sqlite3.connect(db) as con:  # fold the WAL in, so the pages below are the file's own
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    page = 4096
    for offset in range(2 * page, len(data), page):  # every page after the schema's: garbage
        data[offset:offset + page] = bytes((offset // page * 37 + i) % 251 for i in range(page))
    db.write_bytes(bytes(data))
    for args in (("runs",), ("show", run_id), ("report", run_id, "--html", str(tmp_path / "r.html")),
                 ("gate", run_id), ("history",), ("compare", run_id, run_id)):
        out = diskbench(*args, db=db)
        assert out.returncode in (1, 3), (args, out.stderr)
        assert "is damaged" in out.stderr and ".recover" in out.stderr, (args, out.stderr)
    doctor = diskbench("doctor", db=db)
    assert doctor.returncode == 1 and "damaged" in doctor.stdout, doctor.stdout
