"""A store several machines share (issue 27): writers at once lose nothing, the run lock across
machines, raw outputs every reader reaches, the errors of a server, Entra sign-in, a read-only
role and the results view. Where a behaviour is the store's, it runs on both backends."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from diskbench.engines.fio.parse import parse_fio_output
from diskbench.errors import StoreError
from diskbench.providers.azure.store import ENTRA_SCOPE
from diskbench.store import Store

from ..conftest import assert_no_bug, diskbench, needs_fio
from .conftest import Server, scalar

FIXTURE = "randread-4k-numjobs4-group-reporting.jsonplus.json"


def _group(fio_fixtures: Path):  # type: ignore[no-untyped-def]
    return parse_fio_output((fio_fixtures / FIXTURE).read_text())[0]


def _profile(path: Path, name: str, n: int = 3) -> Path:
    doc = {"name": name, "defaults": {"size": "4M", "runtime": "1s", "ramp_time": "0s", "ioengine": "psync"},
           "workloads": [{"name": f"{name}-{i}", "rw": "randread", "bs": "4k"} for i in range(n)]}
    path.write_text(yaml.safe_dump(doc))
    return path


# --- several writers at once ---------------------------------------------------------------------
def test_writers_on_several_connections_lose_nothing(store_at: str, fio_fixtures: Path) -> None:
    """Four writers (as four runners would) add results and facts to one run at once."""
    group = _group(fio_fixtures)
    setup = Store(store_at)
    run_id = setup.create_run(profile="p", profile_path=None, profile_text=None, options={})
    setup.add_jobs(run_id, [{"key": f"k{i}", "workload": "w", "target": "t", "host": f"h{i}"} for i in range(4)])
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            store = Store(store_at)
            for rep in range(15):
                store.add_results(run_id, f"k{n}", group, workload="w", target="t", host=f"h{n}", repeat=rep + 1)
                store.merge_facts(run_id, {f"writer{n}-{rep}": rep})
            store.add_host_facts(run_id, f"h{n}", {"hostname": f"h{n}"})
            store.close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(setup.get_results(run_id)) == 4 * 15 * len(group.directions)
    facts = setup.get_run(run_id)["facts"]
    assert {f"writer{n}-{rep}" for n in range(4) for rep in range(15)} <= set(facts)  # no update lost
    assert set(facts["hosts"]) == {"h0", "h1", "h2", "h3"}


@needs_fio
def test_two_runs_and_a_gate_at_once_on_postgresql(pg_schema: str, tmp_path: Path) -> None:
    """Two `diskbench run`s and gates of the first night's run, all at once on one shared store:
    every result is there, nothing failed, and each run's raw outputs are in the database."""
    env = {"DISKBENCH_DB": pg_schema}
    first = _profile(tmp_path / "a.yaml", "a")
    works = [tmp_path / f"work{i}" for i in range(3)]
    for w in works:
        w.mkdir()
    base = diskbench("run", "--profile", str(first), "--target", str(works[2]), env=env)
    assert base.returncode == 0, base.stderr
    baseline = str(Store(pg_schema).get_run("last")["id"])
    child_env = {**{k: v for k, v in os.environ.items() if k != "DISKBENCH_DEBUG"}, **env, "CI": "true"}
    runs = [subprocess.Popen([*_cli(), "run", "--profile", str(p), "--target", str(w)], env=child_env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for p, w in ((first, works[0]), (_profile(tmp_path / "b.yaml", "b"), works[1]))]
    gates = []
    while any(p.poll() is None for p in runs) or len(gates) < 3:
        gates.append(diskbench("gate", baseline, env=env))
    for proc in runs:
        _, stderr = proc.communicate(timeout=120)
        assert_no_bug(proc.returncode, stderr)
        assert proc.returncode == 0, stderr
    assert all(g.returncode == 0 and "error" not in g.stderr for g in gates), [g.stderr for g in gates]
    store = Store(pg_schema)
    done = [r for r in store.list_runs() if r["id"] != baseline]
    assert len(done) == 2 and all(r["status"] == "completed" and r["job_counts"] == {"done": 3} for r in done)
    for run in done:
        assert len(store.get_results(run["id"])) == 3
        names = store.artifact_names(run["id"])
        assert sum(n.endswith("output.json.gz") for n in names) == 3, names
        assert json.loads(store.read_artifact(run["id"], next(n for n in names if n.endswith("job.fio"))
                                              .replace("job.fio", "exit_code")) or b"0") == 0


def _cli() -> list[str]:
    import sys

    return [sys.executable, "-m", "diskbench"]


# --- the run lock across machines ---------------------------------------------------------------
def test_a_run_held_on_another_machine_is_refused_until_its_heartbeat_is_stale(store_at: str) -> None:
    store = Store(store_at)
    run_id = store.create_run(profile="p", profile_path=None, profile_text=None, options={})
    fresh = datetime.now(timezone.utc).isoformat(timespec="seconds")
    store.update_run(run_id, pid=4242, hostname="runner-7", heartbeat=fresh)
    other = Store(store_at)  # this machine, another process's view
    with pytest.raises(StoreError, match="being worked on by process 4242 on runner-7"):
        other.lock_run(run_id)
    assert other.get_run(run_id)["status"] == "running"
    stale = (datetime.now(timezone.utc) - timedelta(minutes=5)).isoformat(timespec="seconds")
    store.update_run(run_id, heartbeat=stale)
    assert other.get_run(run_id)["status"] == "interrupted"
    other.lock_run(run_id)  # the holder is gone: this process takes it
    assert other.renew_lock(run_id) and store.renew_lock(run_id) is not False


def test_two_takers_at_once_one_wins(pg_schema: str) -> None:
    """Machines resuming one run at the same moment: the row lock makes them take turns."""
    Store(pg_schema).create_run(profile="p", profile_path=None, profile_text=None, options={}, run_id="r1")
    Store(pg_schema).finish_run("r1", "interrupted")
    stores = [Store(pg_schema) for _ in range(2)]
    barrier, outcomes = threading.Barrier(2), []

    def take(store: Store, host: str) -> None:
        import diskbench.store.lock as lock

        barrier.wait()
        with pytest.MonkeyPatch.context() as mp:  # as if on another machine: its own host name
            mp.setattr(lock.os, "uname", lambda: os.uname_result(("Linux", host, "", "", "")))
            try:
                store.lock_run("r1")
                outcomes.append("took")
            except StoreError as exc:
                outcomes.append(str(exc))

    threads = [threading.Thread(target=take, args=(s, f"m{i}")) for i, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(o == "took" for o in outcomes) == [False, True], outcomes


# --- raw outputs where every reader reaches them ------------------------------------------------
def _unit_files(store: Store, run_id: str) -> Path:
    unit = store.run_artifacts(run_id) / "00-a"
    unit.mkdir(parents=True, exist_ok=True)
    (unit / "job.fio").write_text("[a]\nrw=randread\n")
    (unit / "output.json.gz").write_bytes(b"\x1f\x8bnot really")
    (unit / "a_iops.1.log").write_text("1000, 5, 0, 4096\n" * 200)
    return unit


def test_raw_outputs_reach_a_reader_on_another_machine(pg_schema: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(pg_schema)
    run_id = store.create_run(profile="p", profile_path=None, profile_text=None, options={})
    unit = _unit_files(store, run_id)
    assert store.keep_artifacts(run_id, unit) == 3
    assert store.keep_artifacts(run_id, unit) == 0  # unchanged: not sent again
    (unit / "job.fio").write_text("[a]\nrw=randwrite\n")
    store.finish_run(run_id)  # keeps what changed since
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "elsewhere"))  # a machine without the local folder
    reader = Store(pg_schema)
    assert not (reader.artifacts_root / run_id).exists()
    assert reader.artifact_names(run_id) == ["00-a/a_iops.1.log", "00-a/job.fio", "00-a/output.json.gz"]
    assert reader.read_artifact(run_id, "00-a/job.fio") == b"[a]\nrw=randwrite\n"
    out = diskbench("store", "artifacts", run_id, "--to", str(tmp_path / "got"), env={"DISKBENCH_DB": pg_schema})
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "got" / run_id / "00-a" / "output.json.gz").read_bytes() == b"\x1f\x8bnot really"
    assert (tmp_path / "got" / run_id / "00-a" / "a_iops.1.log").read_text().count("\n") == 200
    reader.delete_run(run_id)
    assert scalar(reader, "SELECT COUNT(*) FROM artifacts") == 0


class FakeContainer:
    """azure-storage-blob's ContainerClient, as far as diskbench uses it."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def upload_blob(self, name: str, data: bytes, overwrite: bool = False) -> None:
        assert overwrite
        self.blobs[name] = bytes(data)

    def download_blob(self, blob: str) -> Any:
        data = self.blobs[blob]
        return type("Downloader", (), {"readall": lambda self: data})()

    def delete_blob(self, blob: str) -> None:
        del self.blobs[blob]


def test_raw_outputs_in_azure_blob(store_at: str) -> None:
    container = FakeContainer()
    url = "https://acct.blob.core.windows.net/results/nightly"
    store = Store(store_at, artifacts=url, container=container)
    run_id = store.create_run(profile="p", profile_path=None, profile_text=None, options={})
    _unit_files(store, run_id)
    store.finish_run(run_id)
    assert sorted(container.blobs) == [f"nightly/{run_id}/00-a/{n}" for n in ("a_iops.1.log", "job.fio",
                                                                               "output.json.gz")]
    assert scalar(store, "SELECT COUNT(*) FROM artifacts WHERE data IS NULL") == 3  # only where they are
    reader = Store(store_at, container=container)  # a reader needs no setting: the rows say where
    assert reader.read_artifact(run_id, "00-a/job.fio") == b"[a]\nrw=randread\n"
    reader.delete_run(run_id)
    assert container.blobs == {}


# --- a server's errors, one line each ------------------------------------------------------------
def test_a_server_that_cannot_be_reached(pg_server: Server, local_state: Path) -> None:
    dsn = "postgresql://nobody:x@127.0.0.1:1/none"
    with pytest.raises(StoreError, match="cannot reach PostgreSQL at postgresql://nobody@127.0.0.1:1/none"):
        Store(dsn)
    out = diskbench("runs", env={"DISKBENCH_DB": dsn})
    assert out.returncode == 1 and out.stderr.count("\n") <= 2, out.stderr
    assert "cannot reach PostgreSQL" in out.stderr and "x@" not in out.stderr  # no password shown


def test_a_wrong_password(pg_server: Server, local_state: Path) -> None:
    dsn = pg_server.dsn(password="not-the-password")
    out = diskbench("show", "last", env={"DISKBENCH_DB": dsn})
    assert out.returncode == 1, out.stderr
    assert f"refused the password of user '{pg_server.role}'" in out.stderr
    assert "not-the-password" not in out.stderr


def test_a_lost_connection_is_made_again(pg_schema: str, pg_server: Server) -> None:
    store = Store(pg_schema)
    run_id = store.create_run(profile="p", profile_path=None, profile_text=None, options={})
    pid = scalar(store, "SELECT pg_backend_pid()")
    # a server restart, a dropped idle connection; the timeout makes the server wait until the backend is
    # gone (without it the next statement could still start on it and be lost midway, not at its BEGIN)
    pg_server.admin(f"SELECT pg_terminate_backend({pid}, 5000)")
    assert store.get_run(run_id)["id"] == run_id  # a read: made again and retried
    pg_server.admin(f"SELECT pg_terminate_backend({scalar(store, 'SELECT pg_backend_pid()')}, 5000)")
    store.update_run(run_id, verdict="PASS")  # a transaction whose BEGIN found it lost
    assert store.get_run(run_id)["verdict"] == "PASS"


def test_text_with_nul_is_stored(store_at: str) -> None:
    store = Store(store_at)
    run_id = store.create_run(profile="p", profile_path=None, profile_text=None, options={})
    store.add_jobs(run_id, [{"key": "k", "workload": "w", "target": "t", "host": "h"}])
    store.update_job(run_id, "k", status="failed", message="fio said \x00\x01 garbage")
    assert store.get_jobs(run_id)[0]["message"].startswith("fio said ")


# --- Microsoft Entra sign-in to an Azure flexible server -----------------------------------------
class FakeCredential:
    def __init__(self, token: str | None) -> None:
        self.token, self.scopes = token, list[str]()

    def get_token(self, *scopes: str) -> Any:
        self.scopes += scopes
        if self.token is None:
            raise RuntimeError("DefaultAzureCredential failed to retrieve a token from the included credentials.")
        return type("AccessToken", (), {"token": self.token, "expires_on": 0})()


def test_an_azure_server_without_a_password_signs_in_with_an_entra_token(pg_server: Server, pg_schema: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The token is the password: a real server here checks it, reached through hostaddr while
    the DSN names an Azure host."""
    monkeypatch.delenv("PGPASSWORD", raising=False)
    schema = pg_schema.split("search_path%3D")[1]
    dsn = (f"postgresql://{pg_server.role}@srv.postgres.database.azure.com:{pg_server.port}/{pg_server.database}"
           f"?hostaddr=127.0.0.1&sslmode=disable&options=-csearch_path%3D{schema}")
    credential = FakeCredential(pg_server.password)
    store = Store(dsn, credential=credential)
    assert store.list_runs() == [] and credential.scopes == [ENTRA_SCOPE]
    assert "password" not in store.location and store.location.startswith(f"postgresql://{pg_server.role}@srv.")
    with pytest.raises(StoreError, match="cannot get a Microsoft Entra token .* failed to retrieve a token"):
        Store(dsn, credential=FakeCredential(None))
    with pytest.raises(StoreError, match="refused the password"):
        Store(dsn, credential=FakeCredential("an-expired-token"))
    given = Store(dsn.replace(f"{pg_server.role}@", f"{pg_server.role}:{pg_server.password}@"),
                  credential=FakeCredential(None))  # a password in the DSN: no token asked for
    assert given.list_runs() == []


# --- readers: a read-only role and the results view ----------------------------------------------
def test_a_read_only_role_reads_the_view_and_writes_nothing(pg_schema: str, pg_server: Server,
                                                            fio_fixtures: Path) -> None:
    import psycopg

    store = Store(pg_schema)
    run_id = store.create_run(profile="nightly", profile_path=None, profile_text=None, options={})
    store.add_jobs(run_id, [{"key": "m/t/a", "workload": "a", "target": "t", "host": "m"}])
    store.update_job(run_id, "m/t/a", status="done", testbed="tb-1")
    store.add_results(run_id, "m/t/a", _group(fio_fixtures), workload="a", target="t", host="m")
    store.finish_run(run_id)
    grafana = f"{pg_server.role}_grafana"
    store.db.execute(f"CREATE ROLE {grafana} LOGIN PASSWORD 'grafana-pw'")
    env = {"DISKBENCH_DB": pg_schema}
    printed = diskbench("store", "grant-read", grafana, "--print", env=env)
    assert printed.returncode == 0 and "GRANT SELECT ON ALL TABLES IN SCHEMA" in printed.stdout
    assert diskbench("store", "grant-read", "no_such_role", env=env).returncode == 1
    granted = diskbench("store", "grant-read", grafana, env=env)
    assert granted.returncode == 0, granted.stderr
    reader_dsn = pg_schema.replace(f"{pg_server.role}:{pg_server.password}@", f"{grafana}:grafana-pw@")
    with psycopg.connect(reader_dsn) as conn:
        row = conn.execute("SELECT profile, workload, direction, testbed, iops, clat_p99_us, run_started"
                           " FROM results_view").fetchone()
    assert row is not None and row[:4] == ("nightly", "a", "read", "tb-1") and row[4] > 0 and row[5] > 0
    assert isinstance(row[6], datetime)
    shown = diskbench("show", run_id, "--format", "json", env={"DISKBENCH_DB": reader_dsn})
    assert shown.returncode == 0 and json.loads(shown.stdout)["run"]["id"] == run_id
    refused = diskbench("import", str(fio_fixtures / "randread-4k-qd16.json"), env={"DISKBENCH_DB": reader_dsn})
    assert refused.returncode == 1 and "does not let this user do that" in refused.stderr, refused.stderr


def test_the_results_view(store_at: str, fio_fixtures: Path) -> None:
    store = Store(store_at)
    run_id = store.create_run(profile="p", profile_path=None, profile_text=None, options={})
    store.add_jobs(run_id, [{"key": "m/t/a#2", "workload": "a", "target": "t", "host": "m", "base_key": "m/t/a",
                             "repeat": 2, "params": {"bs": "4k"}}])
    store.update_job(run_id, "m/t/a#2", testbed="tb")
    group = _group(fio_fixtures)
    store.add_results(run_id, "m/t/a#2", group, workload="a", target="t", host="m", repeat=2)
    rows = store.backend.rows("SELECT job, job_key, repeat, testbed, params, direction, iops, mib_per_s,"
                              " clat_p50_us, clat_p99_9_us, bound_kind FROM results_view")
    (row,) = rows
    (d,) = group.directions
    assert d.clat is not None
    assert (row["job"], row["job_key"], row["repeat"], row["testbed"]) == ("m/t/a", "m/t/a#2", 2, "tb")
    assert json.loads(row["params"]) == {"bs": "4k"} and row["direction"] == d.direction
    assert row["iops"] == d.iops and abs(row["mib_per_s"] - d.bw_bytes_per_s / 2**20) < 1e-6
    assert row["clat_p50_us"] == d.clat.percentiles["p50"] and row["clat_p99_9_us"] == d.clat.percentiles["p99.9"]
    assert row["bound_kind"] is None
