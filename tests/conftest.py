from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

if TYPE_CHECKING:
    from diskbench.plan import Plan

from .guestlab.fixtures import guest_image, guest_lab  # noqa: F401  (QEMU guest lab fixtures)

# A shell's background job starts with SIGINT ignored (no job control), and what it starts
# inherits that: the tests that press Ctrl-C on diskbench would find it deaf. A handler here is
# reset to the default in every child, as a terminal's foreground job has it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# SIGTERM (a CI job's timeout, `timeout`, `kill`) ends the session as Ctrl-C does: pytest then tears its
# fixtures down, so a guest lab stops its guests and deletes its disk files (1.4 GiB for the lab cloud's
# three guests) instead of leaving them in the temporary directory.
signal.signal(signal.SIGTERM, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]

# The real fio outputs of shared/fixtures, vendored so the suite runs from any clone;
# test_fixtures.py checks the copy against shared/ when that folder is beside the clone.
FIXTURES = Path(os.environ.get("DISKBENCH_FIXTURES", Path(__file__).parent / "fixtures"))
SHARED_FIXTURES = REPO.parent / "shared" / "fixtures"
FIO_FIXTURES = FIXTURES / "fio"

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mounts a small tmpfs)")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Sweep what labs of a killed session left (their namespaces, users): see tests/lab_leftovers.py."""
    from .lab import lab_supported
    from .lab_leftovers import sweep

    if lab_supported() is None:
        removed = sweep()
        if removed:
            print(f"lab leftovers of dead sessions removed: {', '.join(removed)}", file=sys.stderr)

TINY_PROFILE = """\
name: tiny
description: two tiny workloads for tests
defaults:
  size: 8M
  runtime: 1s
  ramp_time: 0s
  ioengine: psync
workloads:
  - name: rr
    rw: randread
    bs: 4k
  - name: rw-mix
    rw: randrw
    rwmixread: 70
    bs: 4k
    numjobs: 2
"""


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs of this test's (a disk that fills up), unmounted at the end, also on failure."""
    if os.geteuid() != 0:
        pytest.skip("needs root (mounts a tmpfs)")
    mnt = tmp_path / f"full-{uuid.uuid4().hex[:8]}"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4M", "diskbench-test", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def fio_fixtures() -> Path:
    if not FIO_FIXTURES.is_dir():
        pytest.fail(f"fio fixtures not found at {FIO_FIXTURES} (set DISKBENCH_FIXTURES)")
    return FIO_FIXTURES


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store" / "db.sqlite"


@pytest.fixture
def tiny_profile(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY_PROFILE)
    return path


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def diskbench(*args: str, db: Path | None = None, env: dict[str, str] | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a child process, as a user would."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("DISKBENCH_DB", "DISKBENCH_DEBUG")}
    full_env["CI"] = "true"
    if db is not None:
        full_env["DISKBENCH_DB"] = str(db)
    full_env.update(env or {})
    out = subprocess.run([sys.executable, "-m", "diskbench", *args], capture_output=True, text=True,
                         env=full_env, timeout=timeout, check=False)
    if full_env.get("DISKBENCH_DEBUG") != "1":
        assert_no_bug(out.returncode, out.stderr)
    return out


def run_profile(doc: dict[str, Any], tmp_path: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``diskbench run`` of a profile given as a mapping, on a new directory target, results as JSON."""
    profile, work = tmp_path / f"{doc['name']}.yaml", tmp_path / "work"
    profile.write_text(yaml.safe_dump(doc))
    work.mkdir(exist_ok=True)
    return diskbench("run", "--profile", str(profile), "--target", str(work), "--format", "json", *args, db=db)


def plan_of(text: str) -> Plan:
    """The plan of a profile's text, as ``plan`` makes it."""
    from diskbench.expand import build_plan
    from diskbench.profile import LoadedProfile, parse_profile

    return build_plan(LoadedProfile(profile=parse_profile(text), path="profile.yaml", text=text))


def assert_no_bug(code: int, stderr: str) -> None:
    """Every failure a test provokes is a user-facing error: exit 70 is reserved for real bugs."""
    assert code != 70 and "internal error" not in stderr and "Traceback" not in stderr, stderr


@pytest.fixture
def lab(tmp_path: Path):  # type: ignore[no-untyped-def]
    """SSH lab hosts in network namespaces; removed by id at teardown, also after a failure."""
    from .lab import Lab, lab_supported

    why = lab_supported()
    if why:
        pytest.skip(f"lab hosts: {why}")
    root = tmp_path / "lab"
    root.mkdir()
    lab = Lab(root)
    try:
        yield lab
    finally:
        lab.close()


def start_diskbench(*args: str, db: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """The real CLI in the background, for tests that interrupt it."""
    full_env = {**os.environ, "DISKBENCH_DB": str(db), "CI": "true", **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "diskbench", *args], env=full_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for_job(db: Path, workload: str, status: str = "running", timeout: float = 60) -> None:
    """Until a job of ``workload`` has ``status`` in the store."""
    import time

    from diskbench.store import Store

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db.exists():
            store = Store(db)
            if any(j["workload"] == workload and j["status"] == status
                   for r in store.list_runs() for j in store.get_jobs(r["id"])):
                return
        time.sleep(0.1)
    raise AssertionError(f"job {workload} never became {status}")


def finish(proc: subprocess.Popen[str], sig: int | None = None, timeout: float = 120) -> tuple[int, str]:
    """Send ``sig`` (if any), wait, and return (exit code, stderr); never leaves the process behind."""
    try:
        if sig is not None:
            proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # reaps it and closes its pipes
    assert_no_bug(proc.returncode, stderr)
    return proc.returncode, stderr
