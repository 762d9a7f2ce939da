"""Seed 002 (Azure NetApp Files: many clients on one NFS volume) in guests: the bundled profile's mount and
jobs against an NFS server whose export sits on a throttled disk, the lab's stand-in for the volume's cap.

The article drives one volume from six clients and reads two shapes off it: throughput grows with the
clients until the volume holds it, and total IOPS fall as the read/write mix shifts towards writes
(reads are answered from the service's cache, writes are not). Here one NFS server guest exports a
directory on a disk whose QEMU throttle is the volume's cap, and two client guests run the profile's
own workloads (``anf-nfs-scaleout``: its defaults, its randrepeat, and the mount options diskbench
gives an ANF volume) as a client group. The caps are set from a calibration of this machine, so a busy
machine lowers them instead of the results falling off them.

Not here: the article's randrepeat=0 vs 1 comparison. Its effect comes from reading one data set
again in later iterations with the same seed (the server or client cache then answers); diskbench
gives every client its own folder and every unit its own files, so no run of the profile reads a
block a second time, and both settings measure the same in a guest (see the closing note of issue 30).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from diskbench.expand import build_plan
from diskbench.profile import load_profile

from ..conftest import diskbench
from .calibrate import HEADROOM, calibrate
from .guest import Guest, GuestLab
from .spec import DiskSpec, Throttle, nfs_server, plain

pytestmark = pytest.mark.guest
FIO_PORT = 8765
SERVER = "192.0.2.2"
KIB64 = 64 * 1024


def anf_options() -> str:
    """The mount options diskbench gives the bundled profile's ANF volume (the article's, without bg)."""
    (options,) = {j.target.options for j in build_plan(load_profile("anf-nfs-scaleout")).units
                  if j.target is not None and hasattr(j.target, "options")}
    return str(options)


def lab_profile(clients: list[Guest], workload: dict[str, Any], runtime: str = "4s") -> dict[str, Any]:
    """anf-nfs-scaleout on lab hosts: its defaults and ``workload`` (one of its own, cut to the lab), the
    export of the lab's NFS server mounted with the options an ANF volume gets (none given here)."""
    bundled = load_profile("anf-nfs-scaleout").profile
    defaults = bundled.defaults.model_dump(exclude_none=True)
    defaults.update(size="8M", runtime=runtime, ramp_time="1s", numjobs=2)
    return {"name": "anf-lab", "defaults": defaults, "workloads": [workload],
            "hosts": [c.profile_host(install_fio=False) for c in clients],
            "shared": {"target": {"nfs": f"{SERVER}:/export"}, "port": FIO_PORT,
                       "ports": {c.name: c.forwarded[FIO_PORT] for c in clients}}}


def bundled_workload(name: str, **changes: object) -> dict[str, Any]:
    (w,) = [w for w in load_profile("anf-nfs-scaleout").profile.workloads if w.name == name]
    return {**w.model_dump(exclude_none=True, exclude={"description"}), **changes}


def run(tmp_path: Path, known: Path, doc: dict[str, Any], *machines: str) -> tuple[list[dict[str, Any]], str]:
    """The profile ``doc`` on the client group (or only ``machines`` of it); results and what it said."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(doc))
    out = diskbench("run", "--profile", str(tmp_path / "p.yaml"), "--known-hosts", str(known), "--format", "json",
                    *[a for m in machines for a in ("--machine", m)], db=tmp_path / "db.sqlite", timeout=900)
    print(out.stderr[-4000:])
    assert out.returncode == 0, out.stderr[-3000:] + out.stdout[-2000:]
    return json.loads(out.stdout)["results"], out.stderr


def total(results: list[dict[str, Any]], workload: str) -> float:
    """The client group's merged IOPS of ``workload``, reads and writes together."""
    rows = [r for r in results if r["workload"] == workload and r["host"] == "clients"]
    assert rows, (workload, sorted({(r["workload"], r["host"]) for r in results}))
    return sum(r["iops"] for r in rows if r["direction"] != "total") or sum(r["iops"] for r in rows)


def between(value: float, low: float, high: float, what: str) -> None:
    assert low <= value, f"{what}: {value:,.0f} below {low:,.0f}"
    assert value <= high, f"{what}: {value:,.0f} above {high:,.0f}"


# Open (issue 30): in two runs on a quiet machine the clients' 4k writes reached 49% of the emulated
# volume cap (162 of 330, 94 of 191), whatever the cap: a sync export on ext4 costs the throttled
# disk about two I/Os per NFS write (data and journal), so the cap in NFS writes is not write_cap.
# Until the lab's volume is throttled per NFS operation (or the factor is measured apart), this
# test's "all writes at the volume's cap" cannot hold; the shapes it checks before that passed.
@pytest.mark.xfail(reason="the emulated volume cap counts disk I/Os, about two per NFS write (issue 30)",
                   strict=False)
def test_clients_grow_to_the_volume_cap_and_the_mix_falls_towards_writes(guest_lab: GuestLab, tmp_path: Path) -> None:
    cal = calibrate(guest_lab)
    budget = cal.budget(3)
    write_cap = max(20, int(0.6 * HEADROOM * budget))  # the volume's 4k write IOPS (server and NFS cost more)
    per_client = max(4, write_cap // 4)  # 64k writes a client is paced to (two jobs): a client's own ceiling
    volume_bps = int(1.5 * per_client * KIB64)  # the volume's throughput: 1.5 clients' worth of 64k writes
    print(f"calibrated {cal.iops:,.0f} IOPS ({budget:,.0f} a guest with 3 running): volume {write_cap} 4k IOPS, "
          f"{volume_bps / 1e6:.2f} MB/s; a client paced to {per_client} x 64k IOPS")
    volume = DiskSpec("vol", size_mib=256, bus="virtio", cap=Throttle(iops=write_cap, bps=volume_bps))
    segment = guest_lab.segment("mcast")
    server, *clients = guest_lab.start_all(
        nfs_server("nfs", ip2=f"{SERVER}/24", disks=(volume,), caps_after_boot=True),
        plain("c1", ip2="192.0.2.11/24", forwards=(FIO_PORT,)),
        plain("c2", ip2="192.0.2.12/24", forwards=(FIO_PORT,)),
        segment=segment, timeout=300)
    server.apply_caps()
    server.check("mkfs.ext4 -q -F -E nodiscard /dev/disk/by-id/virtio-vol && mount /dev/disk/by-id/virtio-vol "
                 "/export && chmod 1777 /export && exportfs -ra")  # ext4: mkfs.xfs wants 300 MB
    for c in clients:  # an NFSv3 mount without nolock needs rpc.statd, which a cloud image runs (nfs-common)
        c.check("mkdir -p /run/rpcbind && (pgrep -x rpcbind || rpcbind -w) && (pgrep -x rpc.statd || rpc.statd)")
    known = tmp_path / "known_hosts"
    known.write_text("".join(c.known_hosts_line() + "\n" for c in clients))

    # 1. throughput grows with the clients until the volume holds it: one client, then two
    # two jobs a client, QD2: four I/Os in flight per client drain through the volume's cap in a tenth
    # of the runtime (a deeper queue would be counted as the cap's tail: test_lab_runs.lab_iodepth)
    paced = bundled_workload("seq-64k", rwmixread=[0], rate_iops=max(1, per_client // 2), iodepth=2)
    one, said = run(tmp_path / "one", known, lab_profile(clients, paced), "c1")
    two, _ = run(tmp_path / "two", known, lab_profile(clients, paced))
    cap64 = volume_bps / KIB64
    got1, got2 = total(one, "seq-64k-rwmixread0"), total(two, "seq-64k-rwmixread0")
    print(f"64k writes: one client {got1:,.0f}, two {got2:,.0f} IOPS; client {per_client}, volume {cap64:,.0f}")
    between(got1, 0.85 * per_client, 1.05 * per_client, "one client (its own pace)")  # fio's pacing: a few %
    between(got2, 0.8 * cap64, 1.08 * cap64, "two clients (the volume's cap)")
    assert got2 < 0.9 * 2 * per_client  # held: not the two clients' sum
    # the mount the bundled profile asks for, as the clients' kernels report it
    options = set(anf_options().split(","))
    assert {"nconnect=8", "hard", "vers=3", "rsize=262144", "wsize=262144"} <= options
    seen = re.findall(r"/export mounted with (\S+)", said)
    assert seen and all({"hard", "nconnect=8", "vers=3", "rsize=262144", "wsize=262144"} <= set(s.split(","))
                        for s in seen), seen

    # 2. the read/write mix: reads come from the server's cache, writes go to the volume at its cap
    mix = bundled_workload("rand-4k", rwmixread=[100, 50, 0], iodepth=max(1, int(0.05 * write_cap)))
    results, _ = run(tmp_path / "mix", known, lab_profile(clients, mix))
    iops = {m: total(results, f"rand-4k-rwmixread{m}") for m in (100, 50, 0)}
    print(f"4k mix: {iops}; volume {write_cap} write IOPS")
    between(iops[0], 0.6 * write_cap, 1.08 * write_cap, "all writes (the volume's cap)")
    between(iops[50], 1.5 * iops[0], 2.3 * iops[0], "half reads (writes at the cap, as many reads)")
    assert iops[100] > 1.2 * iops[50], iops  # monotone: fewer writes, more IOPS (the article's trend)
    for c in clients:  # unmounted, servers stopped
        assert f"{SERVER}:/export" not in c.check("cat /proc/mounts")
