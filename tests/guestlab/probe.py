"""Measurements inside a guest: fio runs over SSH, parsed from JSON, for tests that assert shapes.

Under TCG absolute speeds mean nothing (the emulated CPU tops out near 6,000 4k IOPS and swings with
the host's load), so these helpers return numbers for comparison with the caps the test itself set.
"""

from __future__ import annotations

import itertools
import json
import shlex
import threading
import time
from dataclasses import dataclass, field
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


def _random(rw: str) -> str:
    """RANDREAD's job with ``rw`` instead of randread."""
    return RANDREAD.replace("--rw=randread", f"--rw={rw}")


def iops(guest: Guest, device: str, seconds: int = 3, rw: str = "randread", size: str = "16M") -> float:
    """IOPS of one 4k QD16 job on ``device`` for ``seconds``."""
    direction = "write" if "write" in rw else "read"
    args = (f"{_random(rw)} --runtime={seconds} --size={size} "
            f"--name=j --filename={shlex.quote(device)}")
    return job_iops(fio_json(guest, args), direction)["j"]


def iops_per_second(guest: Guest, device: str, seconds: int, size: str = "16M", rw: str = "randread") -> list[float]:
    """4k QD16 random IOPS of each second (fio's averaged IOPS log), to see bursts, steps and stalls."""
    name = "persec"
    fio_json(guest, f"{_random(rw)} --runtime={seconds} --size={size} --name={name} "
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


@dataclass
class WriteWatch:
    """QEMU's own count of one lab disk's writes (ops and bytes), polled from the host every ``every`` s while
    something runs in the guests: when the disk was busy, on the host's clock, whatever the guests' clocks and
    their fio windows say. fio's client/server merge divides every client's I/Os by the longest client
    runtime, so when the clients' windows do not open together it counts more I/Os than that runtime
    allows at a shared cap; the span the disk was busy bounds how much more (issue 30)."""

    guest: Guest
    disk: str
    every: float = 0.1
    samples: list[tuple[float, int, int]] = field(default_factory=list)  # (monotonic s, write ops, bytes)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> WriteWatch:
        self._thread = threading.Thread(target=self._poll, name=f"watch-{self.disk}", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _poll(self) -> None:
        while not self._stop.is_set():
            stats = self.guest.qmp("query-blockstats")
            assert isinstance(stats, list)
            for entry in stats:
                node = str(entry.get("node-name") or "")
                if node == self.disk or node.startswith(f"{self.disk}-"):
                    s = entry["stats"]
                    self.samples.append((time.monotonic(), int(s["wr_operations"]), int(s["wr_bytes"])))
                    break
            self._stop.wait(self.every)

    def spans(self, max_op_bytes: int, min_rate: float, gap_s: float = 1.5) -> list[tuple[float, float]]:
        """The stretches (start, end; s) in which the disk took writes of at most ``max_op_bytes`` on average
        (a job's own blocks, not the layout's big buffered writes) at ``min_rate`` ops/s or more, joined
        across pauses shorter than ``gap_s``: one stretch per fio run of a diskbench run's steps. Each is
        widened by one sample either side (a run that starts or ends within a sample interval does fewer
        ops there than ``min_rate``), so it holds all of that run's writes."""
        spans: list[tuple[float, float]] = []
        samples = self.samples
        for i, ((t0, ops0, b0), (t1, ops1, b1)) in enumerate(itertools.pairwise(samples)):
            ops = ops1 - ops0
            if ops == 0 or (b1 - b0) / ops > max_op_bytes or ops / (t1 - t0) < min_rate:
                continue
            start, end = samples[max(0, i - 1)][0], samples[min(len(samples) - 1, i + 2)][0]
            if spans and t0 - spans[-1][1] < gap_s:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
        return spans

    def ops_in(self, start: float, end: float) -> int:
        """The writes the disk took between the first sample at or after ``start`` and the last at or before
        ``end``."""
        inside = [ops for t, ops, _ in self.samples if start <= t <= end]
        return inside[-1] - inside[0] if inside else 0
