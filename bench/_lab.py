"""Shared by the bench/ scripts that need SSH lab hosts: a one-job profile run in-process.

Not a benchmark itself (the leading underscore keeps bench/all from running it).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from diskbench.expand import build_plan  # noqa: E402
from diskbench.profile import LoadedProfile, parse_profile  # noqa: E402
from diskbench.providers.static import parse_destination  # noqa: E402
from diskbench.runner import Runner, RunOptions  # noqa: E402
from diskbench.store import Store  # noqa: E402
from diskbench.ui import UI  # noqa: E402
from tests.lab import Lab, LabHost  # noqa: E402

# Capped (rate_iops) so that fio does not need a core of its own: the lab's hosts share this
# machine's CPUs, and 8 CPU-bound fio processes on 2 cores would measure the CPUs, not diskbench.
ONE_JOB = ("name: one-job\ndefaults: {size: 8M, runtime: 1s, ramp_time: 0s, ioengine: psync}\n"
           "workloads:\n  - {name: rr, rw: randread, bs: 4k, rate_iops: 500}\n")


def run_on_hosts(lab: Lab, hosts: list[LabHost], db: Path, profile: str = ONE_JOB,
                 user: str | None = None) -> float:
    """`diskbench run --profile ... --host H1 --host H2 ...` in this process; its wall time.

    ``user``: log in as this sudo user (see ``Lab.add_sudo_user``: /bin/sh, no rc files, like a
    cloud VM's) instead of root, whose shell start-up files on this machine cost every session."""
    loaded = LoadedProfile(profile=parse_profile(profile), path="bench.yaml", text=profile)
    models = [parse_destination(f"{user}@{h.address}" if user else h.destination, key_file=str(lab.user_key),
                                sudo=user is not None) for h in hosts]
    options = RunOptions(hosts=[m.model_dump() for m in models], known_hosts=str(lab.known_hosts))
    start = time.perf_counter()
    outcome = Runner(Store(db), UI(plain=True, quiet=True)).start(build_plan(loaded, hosts=models), options)
    elapsed = time.perf_counter() - start
    if outcome.status != "completed":
        sys.exit(f"the diskbench run did not complete: {outcome.messages}")
    return elapsed


def sessions(host: LabHost) -> int:
    """Sessions sshd started so far (LogLevel VERBOSE logs one `Starting session` line each)."""
    return host.auth_log().count("Starting session")
