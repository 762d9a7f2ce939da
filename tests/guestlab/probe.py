"""Measurements inside a guest: fio runs over SSH, parsed from JSON, for tests that assert shapes.

Under TCG absolute speeds mean nothing (the emulated CPU tops out near 6,000 4k IOPS and swings with
the host's load), so these helpers return numbers for comparison with the caps the test itself set.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from .guest import Guest, GuestLabError

RANDREAD = "--rw=randread --bs=4k --iodepth=16 --ioengine=libaio --direct=1 --time_based"


def fio_json(guest: Guest, args: str, timeout: float = 120) -> dict[str, Any]:
    """Run ``fio <args> --output-format=json`` in the guest and return the parsed document."""
    rc, out, err = guest.run(f"cd /tmp && fio {args} --output-format=json", timeout)
    if rc != 0 or "{" not in out:
        raise GuestLabError(f"guest {guest.name}: fio {args} exited {rc}: {err.strip()[-600:]}")
    doc: dict[str, Any] = json.loads(out[out.index("{"):])
    return doc


def job_iops(doc: dict[str, Any], direction: str = "read") -> dict[str, float]:
    """IOPS per job name."""
    return {job["jobname"]: float(job[direction]["iops"]) for job in doc["jobs"]}


def iops(guest: Guest, device: str, seconds: int = 3, rw: str = "randread", size: str = "16M") -> float:
    """IOPS of one 4k QD16 job on ``device`` for ``seconds``."""
    direction = "write" if "write" in rw else "read"
    args = (f"{RANDREAD.replace('--rw=randread', f'--rw={rw}')} --runtime={seconds} --size={size} "
            f"--name=j --filename={shlex.quote(device)}")
    return job_iops(fio_json(guest, args), direction)["j"]


def iops_per_second(guest: Guest, device: str, seconds: int, size: str = "16M") -> list[float]:
    """4k QD16 random-read IOPS of each second (fio's averaged IOPS log), to see bursts and steps."""
    name = "persec"
    fio_json(guest, f"{RANDREAD} --runtime={seconds} --size={size} --name={name} "
                    f"--filename={shlex.quote(device)} --write_iops_log={name} --log_avg_msec=1000")
    rc, out, err = guest.run(f"cat /tmp/{name}_iops.1.log && rm -f /tmp/{name}_iops.*.log")
    if rc != 0:
        raise GuestLabError(f"guest {guest.name}: no fio IOPS log: {err.strip()}")
    return [float(line.split(",")[1]) for line in out.splitlines() if line.strip()]


def disk_ops(guest: Guest, disks: list[str]) -> dict[str, dict[str, int]]:
    """Reads and writes each of the lab disks ``disks`` (DiskSpec names) was given by the guest: QEMU's own
    counters at the disk's device (over QMP), what every member of a stripe took, seen from the host."""
    stats = guest.qmp("query-blockstats")
    assert isinstance(stats, list)
    found: dict[str, dict[str, int]] = {}
    for entry in stats:
        node = str(entry.get("node-name") or "")
        for disk in disks:
            if node == disk or node.startswith(f"{disk}-"):
                found[disk] = {"read": int(entry["stats"]["rd_operations"]),
                               "write": int(entry["stats"]["wr_operations"])}
    missing = set(disks) - set(found)
    if missing:
        tops = [s.get("node-name") for s in stats]
        raise GuestLabError(f"guest {guest.name}: no device for {sorted(missing)} among {tops}")
    return found


def md_state(guest: Guest, members: list[str]) -> tuple[list[str], list[str]]:
    """The md arrays active in the guest's own kernel (its /proc/mdstat), and the members on which
    ``mdadm --examine`` still finds a superblock: both empty once an array is really gone."""
    mdstat = guest.check("cat /proc/mdstat")
    active = [line.split()[0] for line in mdstat.splitlines() if line.startswith("md") and " : " in line]
    carrying = [m for m in members if guest.run(f"mdadm --examine {shlex.quote(m)}")[0] == 0]
    return active, carrying
