"""A unit on a client group: fio --server on two lab hosts, one fio --client run from here.

The merged rows diskbench stores are checked against fio's own "All clients" entry of the same
output, and against an independent merge of the per-client bins; every row is attributed like
a one-machine unit's; servers and workspaces are gone afterwards, and a client that cannot be
reached fails the run with one line naming it. The client group's drive, the merge's limits and
the plan's refusals are checked without a lab.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from diskbench import registry
from diskbench.attribution.attributor import Attributor, merged, summed
from diskbench.attribution.limit import Limit
from diskbench.engines.base import Endpoint, Place
from diskbench.engines.fio.clientserver import all_clients
from diskbench.engines.fio.parse import extract_fio_document
from diskbench.engines.fio.percentiles import merge_bins, percentiles_from_bins
from diskbench.errors import ProfileError
from diskbench.executors.local import LocalExecutor
from diskbench.model import PERCENTILES, pkey
from diskbench.platforms.base import Prepared
from diskbench.profile import load_profile
from diskbench.runner.client_group import ClientGroup, Seat
from diskbench.runner.group import GroupWork
from diskbench.runner.options import RunOutcome
from diskbench.runner.progress import NullProgress
from diskbench.runner.recorder import MemoryRecorder
from diskbench.runner.state import RunState
from diskbench.store import Store

from ..conftest import FIO_FIXTURES, diskbench, finish, needs_fio, plan_of, start_diskbench, wait_for_job
from ..lab import Lab

pytestmark = needs_fio


def _profile(tmp_path: Path, hosts: list[dict[str, object]], target: dict[str, object], port: int) -> Path:
    doc = {"name": "group", "defaults": {"size": "4M", "runtime": "1s", "ramp_time": "0s", "bs": "4k",
                                         "ioengine": "psync", "direct": False},
           "hosts": hosts, "shared": {"target": target, "port": port},
           "workloads": [{"name": "mix", "rw": "randrw", "rwmixread": [100, 50]}]}
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_two_clients_merged_equals_fios_all_clients(lab: Lab, db: Path, tmp_path: Path) -> None:
    hosts = [lab.add_host(), lab.add_host()]
    shared = tmp_path / "shared"
    shared.mkdir()
    path = _profile(tmp_path, [h.profile_host() for h in hosts], {"dir": str(shared)}, 18765)
    out = diskbench("run", "--profile", str(path), "--known-hosts", str(lab.known_hosts), "--format", "json",
                    db=db)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    assert {r["job"] for r in results} == {"clients/dir:" + str(shared) + "/mix-rwmixread100",
                                           "clients/dir:" + str(shared) + "/mix-rwmixread50"}
    run = Store(db).get_run("last")
    outputs = sorted(Path(run["artifacts_dir"]).glob("*/output.json"))
    assert len(outputs) == 2
    for output in outputs:
        doc = extract_fio_document(output.read_text())
        fio_all = all_clients(doc)
        assert fio_all is not None
        workload = "mix-rwmixread100" if "rwmixread100" in output.parent.name else "mix-rwmixread50"
        rows = {(r["host"], r["direction"]): r for r in results if r["workload"] == workload}
        assert {h for h, _ in rows} == {"clients", "lab0", "lab1"}
        # randrepeat=0 was forced on every client
        assert "randrepeat=0" in (output.parent / "lab0.job.fio").read_text()
        for d in ("read", "write"):
            if fio_all[d]["total_ios"] == 0:
                continue
            merged, one, two = rows[("clients", d)], rows[("lab0", d)], rows[("lab1", d)]
            assert merged["ios"] == fio_all[d]["total_ios"] == one["ios"] + two["ios"]
            assert merged["io_bytes"] == fio_all[d]["io_bytes"]
            assert merged["iops"] == pytest.approx(fio_all[d]["iops"], abs=1e-6)  # fio prints 6 decimals
            fio_clat = fio_all[d]["clat_ns"]
            clat = merged["clat_us"]
            assert (clat["min"], clat["max"]) == (fio_clat["min"] / 1000, fio_clat["max"] / 1000)
            assert merged["clat_us"]["samples"] == fio_clat["N"]
            got = {k: v for k, v in merged["clat_us"].items() if k.startswith("p") and k[1:2].isdigit()}
            assert merged["clat_us"]["percentiles_exact"]
            if "percentile" in fio_clat:  # fio >= 3.39 prints its own merge
                assert got == {pkey(float(k)): v / 1000 for k, v in fio_clat["percentile"].items()}
            entries = [e for e in doc["client_stats"] if e is not fio_all]
            bins = merge_bins({int(k): v for k, v in e[d]["clat_ns"]["bins"].items()} for e in entries)
            assert got == {pkey(p): v / 1000 for p, v in percentiles_from_bins(bins, PERCENTILES).items()}
            assert got["p99"] > 0
    # every row went through the attributor, each client's and the merge's (direct=0 is a pitfall)
    assert all(any(w.startswith("direct=0") for w in r["warnings"]) for r in results), results
    # each client's facts are recorded under its name, the engine's version under the engine's
    clients = run["facts"]["hosts"]
    assert clients["lab0"]["fio_version"] and clients["lab0"]["fio_version"] == clients["lab1"]["fio_version"]
    # the servers are stopped and the workspaces removed
    ps = subprocess.run(["pgrep", "-af", "fio --server=ip:198."], capture_output=True, text=True).stdout
    assert not [ln for ln in ps.splitlines() if any(h.address in ln for h in hosts)], ps


def test_a_client_down_is_named(lab: Lab, db: Path, tmp_path: Path) -> None:
    up, down = lab.add_host(), lab.add_host()
    down.kill_sshd()
    path = _profile(tmp_path, [up.profile_host(), down.profile_host()], {"dir": str(tmp_path)}, 18766)
    out = diskbench("run", "--profile", str(path), "--known-hosts", str(lab.known_hosts), db=db)
    assert out.returncode == 1
    assert "client lab1: connecting failed" in out.stdout + out.stderr, out.stdout + out.stderr
    ps = subprocess.run(["pgrep", "-af", f"fio --server=ip:{up.address}"], capture_output=True, text=True).stdout
    assert not ps.strip()


def test_a_client_killed_mid_job_gives_a_partial_result(lab: Lab, db: Path, tmp_path: Path) -> None:
    hosts = [lab.add_host(), lab.add_host()]
    path = _profile(tmp_path, [h.profile_host() for h in hosts], {"dir": str(tmp_path)}, 18767)
    doc = yaml.safe_load(path.read_text())
    doc["defaults"].update(runtime="6s", rate_iops=200)
    doc["workloads"] = [{"name": "long", "rw": "randread"}]
    path.write_text(yaml.safe_dump(doc))
    proc = start_diskbench("run", "--profile", str(path), "--known-hosts", str(lab.known_hosts),
                           "--format", "json", db=db)
    wait_for_job(db, "long")
    time.sleep(2.5)
    pids = subprocess.run(["ip", "netns", "pids", hosts[1].ns], capture_output=True, text=True).stdout.split()
    for pid in pids:  # every fio of lab1: the server and the job it runs
        if Path(f"/proc/{pid}/comm").read_text().strip().startswith("fio"):
            os.kill(int(pid), signal.SIGKILL)
    code, stderr = finish(proc)
    assert code == 1, stderr
    (job,) = Store(db).get_jobs(Store(db).get_run("last")["id"])
    assert job["status"] == "failed" and "lab1" in job["message"], job
    run = Store(db).get_run("last")
    rows = Store(db).get_results(run["id"])
    assert {r.host for r in rows} == {"lab0"}  # the survivor's own rows; no total that lacks lab1
    assert not subprocess.run(["pgrep", "-af", f"fio --server=ip:{hosts[0].address}"], capture_output=True,
                              text=True).stdout.strip()
    # resume runs the partial unit again, whole: every client's rows and the total, none twice;
    # the partial attempt's raw output is kept beside it
    out = diskbench("resume", run["id"], db=db)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "the earlier attempt was partial; it runs again" in out.stdout + out.stderr
    rows = Store(db).get_results(run["id"])
    assert sorted(r.host for r in rows) == ["clients", "lab0", "lab1"]
    (job,) = Store(db).get_jobs(run["id"])
    assert job["status"] == "done", job
    (kept,) = Path(run["artifacts_dir"]).glob("*.attempt-1")
    assert (kept / "output.json").exists() or list(kept.glob("output.json*"))
    out = diskbench("resume", run["id"], db=db)
    assert "nothing to resume" in out.stdout + out.stderr


GROUP = {"name": "group", "defaults": {"size": "4M", "runtime": "1s", "bs": "4k", "rw": "randread"},
         "hosts": [{"name": "c1", "address": "192.0.2.11"}, {"name": "c2", "address": "192.0.2.12"}],
         "shared": {"target": {"nfs": "192.0.2.2:/export"}}, "workloads": [{"name": "r"}]}


def _drive(tmp_path: Path, clients: dict[str, str]) -> tuple[ClientGroup, Path]:
    """The client group drive of GROUP's unit, on clients by address, with fio's output of two servers."""
    (job,) = plan_of(yaml.safe_dump(GROUP)).units
    engine = registry.engines.get(job.engine)
    mode = engine.multi_host()
    assert mode is not None
    place = Place(job.workload, job.target_label, str(tmp_path))
    seats = [Seat(name, Endpoint(address, 8765), place, Attributor(lambda _t: [])) for name, address in clients.items()]
    art = tmp_path / "art"
    art.mkdir(exist_ok=True)
    fixture = FIO_FIXTURES / "client-server-2servers-group-reporting.jsonplus.stdout.txt"
    (art / engine.output_name).write_text(fixture.read_text())
    return ClientGroup(engine, mode, "3.33", seats, LocalExecutor(), merged([s.attributor for s in seats])), art


def test_each_client_and_the_merge_are_results_of_the_one_unit(tmp_path: Path) -> None:
    drive, art = _drive(tmp_path, {"c1": "127.0.0.1", "c2": "127.0.0.2"})
    (job,) = plan_of(yaml.safe_dump(GROUP)).units
    outcome = drive.results(job, art, 0)
    assert outcome.message is None
    assert [share.host for share in outcome.shares] == ["c1", "c2", "clients"]
    assert outcome.shares[-1].groups[0].hosts == ["c1", "c2"] and outcome.shown == outcome.shares[-1].groups
    assert all(share.attributor is not None for share in outcome.shares)  # the merge is attributed too


def test_a_client_missing_from_the_output_makes_the_unit_partial(tmp_path: Path) -> None:
    drive, art = _drive(tmp_path, {"c1": "127.0.0.1", "c2": "127.0.0.2", "c3": "127.0.0.3"})
    (job,) = plan_of(yaml.safe_dump(GROUP)).units
    outcome = drive.results(job, art, 0)
    assert outcome.message is not None and outcome.message.startswith("partial: client(s) c3 did not finish")
    assert [share.host for share in outcome.shares] == ["c1", "c2"]  # no total without c3


def test_the_merge_is_bound_by_the_caps_every_client_has() -> None:
    vm = Limit("vm_uncached_iops", 1000, "D4 uncached", "table")
    disk = Limit("disk_iops", 500, "P10", "table")
    assert summed([[vm, disk], [vm]]) == [Limit("vm_uncached_iops", 2000, "2 x D4 uncached", "table")]
    assert summed([[vm], []]) == []  # a client without the cap: nothing bounds the sum


def test_shared_randrepeat_is_the_engines_key_and_keeps_its_default() -> None:
    (unit,) = plan_of(yaml.safe_dump(GROUP)).units
    assert unit.workload.extra == {"randrepeat": False}  # every client its own offsets
    doc = {**GROUP, "shared": {**GROUP["shared"], "randrepeat": True}}  # type: ignore[dict-item]
    (unit,) = plan_of(yaml.safe_dump(doc)).units
    assert not unit.workload.extra
    doc = {**GROUP, "shared": {**GROUP["shared"], "randrepat": True}}  # type: ignore[dict-item]
    with pytest.raises(ProfileError, match="shared: unknown key 'randrepat'"):
        plan_of(yaml.safe_dump(doc))


def test_the_plan_refuses_an_engine_without_a_multi_host_mode() -> None:
    doc = {**GROUP, "hosts": [{**h, "platform": "windows"} for h in GROUP["hosts"]]}  # type: ignore[attr-defined]
    with pytest.raises(ProfileError, match="diskspd cannot run one job on many hosts at once"):
        plan_of(yaml.safe_dump(doc))


class _Flushes:
    """A client's preparer that records the flush it is asked for, and whether Ctrl-C could reach it."""

    def __init__(self, state: object, ex: LocalExecutor) -> None:
        self.state, self.ex = state, ex
        self.asked: list[tuple[str | None, int, str, bool]] = []

    def flush_cache(self, where: Prepared, size: int, art: Path, name: str = "flush") -> None:
        self.asked.append((where.directory, size, name, self.ex in self.state._active))  # type: ignore[attr-defined]


def test_a_group_flushes_every_client_before_a_unit_that_asks_and_only_then(tmp_path: Path) -> None:
    """``flush_cache`` on a client group: the drive asks before the engine starts, and the group has every
    client flush its own caches at once, each under its own name, each stoppable by Ctrl-C."""
    doc = {**GROUP, "workloads": [{"name": "r"}, {"name": "f", "flush_cache": "8m"}]}
    plain, flushed = plan_of(yaml.safe_dump(doc)).units
    state = RunState("20261201-120000-abcd", MemoryRecorder(tmp_path), NullProgress(), 2,
                     RunOutcome("20261201-120000-abcd", "running"), {})
    shared = load_profile(str(_written(tmp_path, doc))).profile.shared
    assert shared is not None
    work = GroupWork(state, [plain, flushed], shared)
    for c in work.clients:
        c.ex = LocalExecutor()
        c.prepared = Prepared(directory=f"/mnt/nfs/diskbench-abcd-{c.name}")
        c.preparer = _Flushes(state, c.ex)  # type: ignore[assignment]
    drive, art = _drive(tmp_path, {"c1": "127.0.0.1", "c2": "127.0.0.2"})
    drive.flush = work._flush
    drive.prepare(plain, art, "r")
    drive.prepare(flushed, art, "f")
    assert [c.preparer.asked for c in work.clients] == [  # type: ignore[union-attr]
        [("/mnt/nfs/diskbench-abcd-c1", 8 << 20, "flush-c1", True)],
        [("/mnt/nfs/diskbench-abcd-c2", 8 << 20, "flush-c2", True)]]


def _written(tmp_path: Path, doc: dict[str, object]) -> Path:
    path = tmp_path / "group.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path
