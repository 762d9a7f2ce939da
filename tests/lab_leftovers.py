"""What a lab whose pytest died (SIGKILL, a machine restart) could not remove, found by its id.

``Lab.close()`` removes everything by the lab's id, but a process killed outright runs no
teardown: its namespace keeps its 198.18.0.0/15 subnet (a later lab drawing the same subnet
then cannot reach its own host) and its users stay (the next ``useradd azureuser`` fails).
Every lab writes its owner's pid and start time to ``/run/diskbench-lab-<id>/owner``; a lab
whose owner is gone is swept at the start of the next session. Labs of a live session (another
pytest, a mutation run) are left alone.
"""

from __future__ import annotations

import re
import shutil
import time
from functools import partial
from pathlib import Path

from .lab import BLKIO, MARK, sh, start_time

RUN = Path("/run")
SUDOERS = Path("/etc/sudoers.d")
_sh = partial(sh, check=False)


def live_lab_ids() -> set[str]:
    """Labs whose owner still runs."""
    live = set()
    for shared in RUN.glob(f"{MARK}*"):
        owner = shared / "owner"
        mark = owner.read_text().split() if owner.exists() else []
        alive = len(mark) == 2 and mark[0].isdigit() and start_time(int(mark[0])) == mark[1]
        being_made = not owner.exists() and time.time() - shared.stat().st_mtime < 60
        if alive or being_made:
            live.add(shared.name.removeprefix(MARK))
    return live


def sweep(live: set[str] | None = None) -> list[str]:
    """Remove every lab's leftovers but the live ones'; returns what was removed (for a log)."""
    live = live_lab_ids() if live is None else live
    removed: list[str] = []
    netns = _sh("ip", "netns", "list").stdout.split()
    for ns in [n for n in netns if re.fullmatch(r"dbl-[0-9a-f]{4}-\d+", n)]:
        if ns.split("-")[1] not in live:
            for pid in _sh("ip", "netns", "pids", ns).stdout.split():
                _sh("kill", "-KILL", pid)
            _sh("ip", "netns", "del", ns)  # its veth peer goes with it, and so the pair
            removed.append(f"netns {ns}")
    for sudoers in SUDOERS.glob(f"{MARK}*"):
        if sudoers.name.removeprefix(MARK) not in live:
            names = sudoers.read_text().split()
            if names:
                removed += _remove_user(names[0])
            sudoers.unlink()
            removed.append(f"sudoers {sudoers.name}")
    for line in Path("/etc/passwd").read_text().splitlines():
        name, _, _, _, gecos = (line.split(":") + [""] * 5)[:5]
        if gecos.startswith(MARK) and gecos.removeprefix(MARK) not in live:
            removed += _remove_user(name)
    for cgroup in BLKIO.glob(f"{MARK}*") if BLKIO.exists() else []:
        if cgroup.name.removeprefix(MARK).split("-")[0] not in live:
            try:
                cgroup.rmdir()
                removed.append(f"cgroup {cgroup.name}")
            except OSError:
                pass  # still holds a process: left for its owner or the next sweep
    for shared in RUN.glob(f"{MARK}*"):
        if shared.name.removeprefix(MARK) not in live:
            shutil.rmtree(shared, ignore_errors=True)
            removed.append(f"{shared}")
    return removed


def _remove_user(name: str) -> list[str]:
    if _sh("id", name).returncode != 0:
        return []
    _sh("pkill", "-KILL", "-u", name)
    _sh("userdel", name)
    return [f"user {name}"]
