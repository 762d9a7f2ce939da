"""Remote hosts end to end through the CLI, against real sshd in lab network namespaces."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from diskbench.providers.static import parse_destination
from diskbench.store import Store

from ..conftest import diskbench, finish, needs_fio, start_diskbench, wait_for_job
from ..lab import Lab, LabHost

pytestmark = needs_fio

DEFAULTS = {"size": "16M", "runtime": "1s", "ramp_time": "0s", "ioengine": "libaio", "iodepth": 4}


def write_profile(path: Path, hosts: list[dict[str, object]],
                  workloads: list[dict[str, object]] | None = None, **extra: object) -> Path:
    doc = {"name": "lab", "defaults": DEFAULTS, "hosts": hosts,
           "workloads": workloads or [{"name": "rr", "rw": "randread", "bs": "4k"},
                                      {"name": "rw", "rw": "randwrite", "bs": "4k"}], **extra}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def run(lab: Lab, db: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return diskbench(*args, "--known-hosts", str(lab.known_hosts), db=db, timeout=timeout)


def test_parse_destination() -> None:
    h = parse_destination("azureuser@203.0.113.7:2222")
    assert (h.user, h.address, h.port, h.name) == ("azureuser", "203.0.113.7", 2222, "203.0.113.7")
    h = parse_destination("root@[2001:db8::1]:22")
    assert (h.address, h.port, h.name) == ("2001:db8::1", 22, "ip6-2001_db8__1")
    assert parse_destination("root@[::1]:22").name == "ip6-__1"  # not "1"
    assert parse_destination("vm.example").user is None


HAS_MD = Path("/proc/mdstat").exists()  # md RAID0 itself is tested in a guest: tests/platforms/linux


def two_host_run(lab: Lab, db: Path, tmp_path: Path, loops: int,
                 second: Callable[[LabHost], dict[str, object]]) -> tuple[dict[str, Any], str, list[str]]:
    """lab0 with a dir and an xfs device target, lab1 with ``second(host)``; returns the shown run."""
    one, two = lab.add_host(loops=1, loop_mib=320), lab.add_host(loops=loops, loop_mib=320)
    data = tmp_path / "data"
    data.mkdir()
    profile = write_profile(tmp_path / "p.yaml", [
        one.profile_host(targets={"tmp": {"dir": str(data)}, "xfs": {"device": one.loops[0], "fs": "xfs"}}),
        two.profile_host(targets=second(two)),
    ])
    out = run(lab, db, "run", "--profile", str(profile))
    assert out.returncode == 0, out.stderr
    assert "creating xfs on" in out.stderr
    doc = json.loads(diskbench("show", "last", "--format", "json", db=db).stdout)
    (target,) = second(two)
    got = {(r["host"], r["target"], r["workload"]) for r in doc["results"]}
    assert got == {(h, t, w) for h, t in (("lab0", "tmp"), ("lab0", "xfs"), ("lab1", target))
                   for w in ("rr", "rw")}
    assert set(doc["run"]["host"]["hosts"]) == {"lab0", "lab1"}
    assert doc["run"]["targets"]["lab0/xfs"]["fstype"] == "xfs"
    assert all(r["clat_us"]["p99.99"] > 0 for r in doc["results"])
    # diskbench unmounted (and stopped) what it made
    mounts = Path("/proc/mounts").read_text()
    assert not any(dev in mounts for dev in [*one.loops, *two.loops])
    return doc, out.stderr, two.loops


def test_two_hosts_dir_and_device(lab: Lab, db: Path, tmp_path: Path) -> None:
    """Two hosts at once: lab1 gets one device, prepared (striping is tested in a guest)."""
    doc, stderr, _ = two_host_run(lab, db, tmp_path, 1, lambda h: {"ext4": {
        "device": h.loops[0], "fs": "ext4", "precondition": True, "warmup": "1s"}})
    assert "preconditioning" in stderr and "warming the read cache for 1s" in stderr
    art = Path(Store(db).get_run("last")["artifacts_dir"])
    assert list(art.glob("*lab1*/precondition.output.json")) and list(art.glob("*lab1*/warmup.output.json"))
    assert doc["run"]["targets"]["lab1/ext4"]["fstype"] == "ext4"
    table = diskbench("show", "last", db=db).stdout
    assert "lab0:xfs" in table and "lab1:ext4" in table


@pytest.mark.skipif(HAS_MD, reason="this kernel has md RAID")
def test_stripe_without_md_is_a_clear_error(lab: Lab, db: Path, tmp_path: Path) -> None:
    host = lab.add_host(loops=2)
    profile = write_profile(tmp_path / "p.yaml", [host.profile_host(targets={"md": {"stripe": host.loops}})])
    out = run(lab, db, "run", "--profile", str(profile))
    assert out.returncode == 1
    assert "this kernel has no md RAID support" in out.stderr
    assert not Path("/dev/md").exists() or not any(Path("/dev/md").iterdir())


def test_profile_without_hosts_runs_on_host_flag(lab: Lab, db: Path, tiny_profile: Path) -> None:
    host = lab.add_host()
    out = run(lab, db, "run", "--profile", str(tiny_profile), "--host", host.destination,
              "--key", str(lab.user_key), "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {r["host"] for r in doc["results"]} == {host.address}
    assert [r["workload"] for r in doc["results"]] == ["rr", "rw-mix", "rw-mix", "rw-mix"]
    assert doc["run"]["host"]["hostname"] and doc["run"]["host"]["block_devices"]


def test_latency_command(lab: Lab, db: Path) -> None:
    host = lab.add_host()
    out = run(lab, db, "latency", host.destination, "--key", str(lab.user_key), "--runtime", "1s",
              "--size", "16M")
    assert out.returncode == 0, out.stderr
    assert "randwrite-8k-qd1" in out.stdout and "randread-8k-qd1" in out.stdout
    assert "p99.99" in out.stdout and "IOPS" in out.stdout


def test_sshd_killed_during_a_run_is_survived(lab: Lab, db: Path, tmp_path: Path) -> None:
    host = lab.add_host()
    profile = write_profile(tmp_path / "p.yaml", [host.profile_host()], [
        {"name": "long", "rw": "randread", "bs": "4k", "runtime": "5s"},
        {"name": "after", "rw": "randread", "bs": "4k"}])
    proc = start_diskbench("run", "--profile", str(profile), "--known-hosts", str(lab.known_hosts), db=db)
    wait_for_job(db, "long")
    time.sleep(1.5)
    host.kill_sshd()
    time.sleep(2)
    host.start_sshd()
    code, stderr = finish(proc)
    assert code == 0, stderr
    assert "reconnecting" in stderr
    (run_row,) = Store(db).list_runs()
    results = Store(db).get_results(run_row["id"])
    assert [r.workload for r in results] == ["long", "after"]
    assert results[0].result.runtime_s == pytest.approx(5.0, abs=0.3)  # fio was not killed


def test_unreachable_host_fails_alone(lab: Lab, db: Path, tmp_path: Path) -> None:
    up, down = lab.add_host(), lab.add_host(start=False)
    profile = write_profile(tmp_path / "p.yaml", [up.profile_host(), down.profile_host()])
    out = run(lab, db, "run", "--profile", str(profile))
    assert out.returncode == 1
    assert f"lab1: cannot reach {down.address}:22" in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("error: run ")
    assert "Traceback" not in out.stderr
    run_row = Store(db).list_runs()[0]
    assert run_row["status"] == "partial"
    assert {r.host for r in Store(db).get_results(run_row["id"])} == {"lab0"}


def test_host_keys_are_verified(lab: Lab, db: Path, tmp_path: Path) -> None:
    host = lab.add_host(trusted=False)
    dest = [host.destination, "--key", str(lab.user_key)]
    unknown = run(lab, db, "latency", *dest, "--runtime", "1s", "--size", "4M")
    assert unknown.returncode == 1 and "unknown host key SHA256:" in unknown.stderr
    assert "--accept-new-host-key" in unknown.stderr
    # said once, as the one error line; nothing ran, so no failed run is stored and no resume offered
    assert unknown.stderr.count("unknown host key") == 1, unknown.stderr
    assert unknown.stderr.strip().splitlines()[-1].startswith("error: ") and "resume" not in unknown.stderr
    assert Store(db).list_runs() == []

    pinned = write_profile(tmp_path / "p.yaml", [host.profile_host(host_key="SHA256:" + "A" * 43)])
    wrong = run(lab, db, "run", "--profile", str(pinned))
    assert wrong.returncode == 1 and "is not the pinned SHA256:AAAA" in wrong.stderr

    good = write_profile(tmp_path / "g.yaml", [host.profile_host(host_key=host.host_key_fingerprint())])
    assert run(lab, db, "run", "--profile", str(good)).returncode == 0

    first = run(lab, db, "latency", *dest, "--runtime", "1s", "--size", "4M", "--accept-new-host-key")
    assert first.returncode == 0, first.stderr
    recorded = Store(db).get_run("last")["options"]["host_keys"]
    assert recorded == {host.address: host.host_key_fingerprint()}

    host.kill_sshd()  # the host is "rebuilt" with a new key
    (host.home / "ssh_host_ed25519_key").unlink()
    (host.home / "ssh_host_ed25519_key.pub").unlink()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                    str(host.home / "ssh_host_ed25519_key")], check=True)
    host.start_sshd()
    changed = run(lab, db, "latency", *dest, "--runtime", "1s", "--size", "4M", "--accept-new-host-key")
    assert changed.returncode == 1 and "host key of" in changed.stderr and "changed" in changed.stderr


def test_fio_missing_with_installs_disabled(lab: Lab, db: Path) -> None:
    host = lab.add_host(fio_missing=True)
    out = run(lab, db, "latency", host.destination, "--key", str(lab.user_key), "--no-install-engine")
    assert out.returncode == 1
    assert "fio is not installed (install fio on the host, or set install_engine: true)" in out.stderr


def test_resume_on_a_host(lab: Lab, db: Path, tmp_path: Path) -> None:
    host: LabHost = lab.add_host()
    profile = write_profile(tmp_path / "p.yaml", [host.profile_host()])
    assert run(lab, db, "run", "--profile", str(profile)).returncode == 0
    run_id = Store(db).get_run("last")["id"]
    again = diskbench("resume", run_id, db=db)
    assert again.returncode == 0 and "nothing to resume" in again.stderr


def test_ctrl_c_on_a_remote_run_stops_fio_and_resume_finishes(lab: Lab, db: Path, tmp_path: Path) -> None:
    host = lab.add_host()
    profile = write_profile(tmp_path / "p.yaml", [host.profile_host()], [
        {"name": "first", "rw": "randread", "bs": "4k"},
        {"name": "long", "rw": "randread", "bs": "4k", "runtime": "30s"},
        {"name": "last", "rw": "randread", "bs": "4k"}])
    proc = start_diskbench("run", "--profile", str(profile), "--known-hosts", str(lab.known_hosts), db=db)
    wait_for_job(db, "long")
    time.sleep(2)
    started = time.monotonic()
    code, stderr = finish(proc, signal.SIGINT, timeout=60)
    assert code == 130, stderr
    assert time.monotonic() - started < 20  # fio was stopped on the host, not waited for
    assert "diskbench resume" in stderr
    assert subprocess.run(["pgrep", "-f", "diskbench-root/lab0"], capture_output=True).returncode == 1
    store = Store(db)
    run_row = store.list_runs()[0]
    assert run_row["status"] == "interrupted"
    assert [j["status"] for j in store.get_jobs(run_row["id"])] == ["done", "interrupted", "pending"]
    resumed = run(lab, db, "resume", run_row["id"], timeout=180)
    assert resumed.returncode == 2  # resume takes no --known-hosts ...
    again = diskbench("resume", run_row["id"], db=db, timeout=180)
    assert again.returncode == 0, again.stderr  # ... it reuses the run's own
    assert [r.workload for r in Store(db).get_results(run_row["id"])] == ["first", "long", "last"]


def stopped_while_silent(host: LabHost, proc: subprocess.Popen[str], sig: int) -> str:
    """``host`` goes silent, ``proc`` gets ``sig``: it must exit 130 at once; its stderr.

    Bound: the stop's SSH attempt is given STOP_TIMEOUT_S (10 s) before the host is given up;
    25 s leaves 15 s for the teardown and the interpreter's exit on a loaded machine."""
    host.go_silent()
    started = time.monotonic()
    code, stderr = finish(proc, sig, timeout=120)
    took = time.monotonic() - started
    assert code == 130, stderr
    assert took < 25, (took, stderr)
    return stderr


def test_sigterm_while_the_host_is_silent_exits_at_once(lab: Lab, db: Path, tmp_path: Path) -> None:
    """A host that stops answering mid-job (a frozen VM, a cut network) must not hold a stopped
    run: fio cannot be reached to be stopped, so diskbench says so and leaves, keeping the run."""
    host = lab.add_host()
    profile = write_profile(tmp_path / "p.yaml", [host.profile_host()], [
        {"name": "long", "rw": "randread", "bs": "4k", "runtime": "120s"}])
    proc = start_diskbench("run", "--profile", str(profile), "--known-hosts", str(lab.known_hosts), db=db)
    wait_for_job(db, "long")
    time.sleep(2)
    stderr = stopped_while_silent(host, proc, signal.SIGTERM)  # the job's own 120 s not waited out
    said = [line for line in stderr.splitlines() if line.startswith("lab0: ")][1:]
    assert said[0] == ("lab0: no answer within 10 s, so fio could not be stopped there; it may run on "
                       "until its runtime ends"), stderr
    # once: the workspace it could not remove is named, its host's state said once, not again
    assert len(said) == 2 and "could not remove its workspace /tmp/diskbench-" in said[1], stderr
    assert "diskbench resume" in stderr.splitlines()[-1]
    run_row = Store(db).list_runs()[0]
    assert run_row["status"] == "interrupted"
    (job,) = Store(db).get_jobs(run_row["id"])
    assert (job["status"], job["message"]) == ("interrupted", "lab0: the host stopped answering")
    # what it could not undo is in the journal: once the host answers again, cleanup removes it
    workspace = Path(said[1].split("workspace ")[1].split()[0])
    assert workspace.is_dir()
    host.kill_sshd()
    host.kill_all()  # fio there was out of reach
    host.answer_again()
    host.start_sshd()
    cleaned = diskbench("cleanup", "--provider", "hosts", "--run", run_row["id"], db=db, timeout=120)
    assert cleaned.returncode == 0, cleaned.stderr
    assert not workspace.exists(), cleaned.stderr
    kinds = {e["kind"]: e["what"] for e in Store(db).prepared(run_row["id"])}
    assert set(kinds) >= {"workspace", "scratch"} and not Path(kinds["scratch"]).exists(), (kinds, cleaned.stdout)
    assert Store(db).prepared(run_row["id"], open_only=True) == []


def test_ctrl_c_while_a_silent_host_is_being_prepared_exits_at_once(lab: Lab, db: Path, tmp_path: Path) -> None:
    """The same host lost while diskbench prepares it, no engine running yet: the free-space check
    (``df``, held here until the link is down) waits on a host that will not answer. Ctrl-C must not
    wait out that command's 60 s, nor the workspace's removal after it: the stop asks the host once,
    gives it up, and the run ends interrupted with its job still to run."""
    host = lab.add_host()
    started_df = tmp_path / "df-started"
    host.add_command("df", f'touch {started_df}; sleep 120; exec /usr/bin/df "$@"\n')
    profile = write_profile(tmp_path / "p.yaml", [host.profile_host()], [
        {"name": "rr", "rw": "randread", "bs": "4k"}])
    proc = start_diskbench("run", "--profile", str(profile), "--known-hosts", str(lab.known_hosts), db=db)
    try:
        deadline = time.monotonic() + 60
        while not started_df.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert started_df.exists(), "diskbench never checked the free space on the host"
        stderr = stopped_while_silent(host, proc, signal.SIGINT)  # the held command's 60 s not waited out
        said = [line for line in stderr.splitlines() if line.startswith("lab0: ")]
        assert "lab0: no answer within 10 s to the stop; the host is given up" in said, stderr
        assert any("could not remove its workspace /tmp/diskbench-" in line for line in said), stderr
        assert "diskbench resume" in stderr.splitlines()[-1]
        run_row = Store(db).list_runs()[0]
        assert run_row["status"] == "interrupted"
        assert [j["status"] for j in Store(db).get_jobs(run_row["id"])] != ["done"]
        kinds = {e["kind"] for e in Store(db).prepared(run_row["id"], open_only=True)}
        assert "workspace" in kinds
    finally:
        host.kill_all()  # the held df
        host.answer_again()


def test_host_keys_are_checked_before_any_authentication(lab: Lab, db: Path, tmp_path: Path) -> None:
    """An unknown or changed key ends the connection before a credential reaches the server."""
    host = lab.add_host(trusted=False)
    unknown = run(lab, db, "latency", host.destination, "--key", str(lab.user_key), "--runtime", "1s")
    assert unknown.returncode == 1 and "unknown host key" in unknown.stderr
    pinned = write_profile(tmp_path / "p.yaml", [host.profile_host(host_key="SHA256:" + "B" * 43)])
    assert run(lab, db, "run", "--profile", str(pinned)).returncode == 1
    log = host.auth_log()
    assert "Connection from" in log  # the server saw the connections (LogLevel VERBOSE) ...
    for word in ("Accepted publickey", "Failed publickey", "Postponed publickey", "userauth"):
        assert word not in log, log  # ... and never one authentication attempt


def test_host_without_sftp_gets_files_over_the_exec_channel(lab: Lab, db: Path, tmp_path: Path) -> None:
    host = lab.add_host(sftp=False)
    profile = write_profile(tmp_path / "p.yaml", [host.profile_host()],
                            workloads=[{"name": "rr", "rw": "randread", "bs": "4k"}])
    out = run(lab, db, "run", "--profile", str(profile), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert "subsystem request" not in host.auth_log()  # files go through the session's shell
    (result,) = json.loads(out.stdout)["results"]
    assert result["ios"] > 0
