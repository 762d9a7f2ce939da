"""The lab's sweep: what a killed session's lab left is removed by its id, a live lab's is not."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .lab import Lab, _subnet_of, lab_supported, sh
from .lab_leftovers import live_lab_ids, sweep

pytestmark = pytest.mark.skipif(lab_supported() is not None, reason=f"lab hosts: {lab_supported()}")

REPO = Path(__file__).resolve().parents[1]
DIES_WITH_A_LAB = """
import os, sys, time
from pathlib import Path
from tests.lab import Lab
lab = Lab(Path(sys.argv[1]))
lab.add_host()
user = lab.add_sudo_user()
plain = lab.add_user(f"dbp{lab.id}")
print(lab.id, lab.hosts[0].ns, user, plain, flush=True)
time.sleep(600)
"""


def test_a_killed_sessions_lab_is_swept_and_a_live_one_is_not(lab: Lab, tmp_path: Path) -> None:
    lab.add_host()
    mine = lab.add_sudo_user()
    child = subprocess.Popen([sys.executable, "-c", DIES_WITH_A_LAB, str(tmp_path)], cwd=REPO,
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert child.stdout is not None
        dead_id, dead_ns, dead_user, dead_plain = child.stdout.readline().split()
        assert dead_id in live_lab_ids() and lab.id in live_lab_ids()
    finally:
        child.send_signal(signal.SIGKILL)  # no teardown runs, as when a CI job is killed
        child.wait()
        child.stdout.close()  # type: ignore[union-attr]
        # its sshd, started in a session of its own, outlives it: the sweep must kill it too
    assert dead_id not in live_lab_ids()
    removed = sweep()

    assert f"netns {dead_ns}" in removed and f"user {dead_user}" in removed and f"user {dead_plain}" in removed
    assert dead_ns not in sh("ip", "netns", "list").stdout
    for user in (dead_user, dead_plain):
        assert sh("id", user, check=False).returncode != 0
    assert not Path(f"/run/diskbench-lab-{dead_id}").exists()
    assert not Path(f"/etc/sudoers.d/diskbench-lab-{dead_id}").exists()
    b, c = _subnet_of(dead_id)
    assert f"198.{b}.{c}." not in sh("ip", "-br", "addr").stdout  # the subnet is free again
    # the live lab is whole: its namespace, user, and a working sshd
    assert lab.hosts[0].ns in sh("ip", "netns", "list").stdout
    assert sh("id", mine, check=False).returncode == 0
    lab.hosts[0].wait_listening(timeout=2)


def test_a_new_lab_takes_no_subnet_another_lab_holds(lab: Lab, tmp_path: Path) -> None:
    others = []
    try:
        for i in range(20):
            root = tmp_path / str(i)
            root.mkdir()
            others.append(Lab(root))
        subnets = [o.subnet for o in [lab, *others]]
        assert len(set(subnets)) == len(subnets)
    finally:
        for other in others:
            other.close()
