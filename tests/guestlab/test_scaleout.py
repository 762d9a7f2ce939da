"""The NFS shared-target profile end to end: one NFS server guest, two client guests.

diskbench mounts the export on both clients with nconnect, starts fio --server on each (reached
through the guests' forwarded ports), runs a small rwmixread sweep for both at once, and leaves
nothing mounted or running. The merged rows add up the clients' I/Os.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import diskbench
from tests.guestlab.guest import GuestLab
from tests.guestlab.spec import nfs_server, plain

pytestmark = pytest.mark.guest
FIO_PORT = 8765


def test_nfs_shared_target_two_clients(guest_lab: GuestLab, tmp_path: Path, db: Path) -> None:
    segment = guest_lab.segment("mcast")
    server, *clients = guest_lab.start_all(
        nfs_server("nfs", ip2="192.0.2.2/24"),
        plain("c1", ip2="192.0.2.11/24", forwards=(FIO_PORT,)),
        plain("c2", ip2="192.0.2.12/24", forwards=(FIO_PORT,)),
        segment=segment, timeout=300)
    server.check("chmod 1777 /export")
    known = tmp_path / "known_hosts"
    known.write_text("".join(c.known_hosts_line() + "\n" for c in clients))
    doc = {"name": "nfs-pair",
           "defaults": {"size": "4M", "runtime": "2s", "ramp_time": "0s", "bs": "4k", "ioengine": "psync",
                        "direct": True, "rw": "randrw"},
           "hosts": [c.profile_host(install_fio=False) for c in clients],
           "shared": {"target": {"nfs": "192.0.2.2:/export",
                                 "options": "rw,nconnect=2,hard,rsize=262144,wsize=262144,vers=3,tcp,nolock"},
                      "port": FIO_PORT, "ports": {c.name: c.forwarded[FIO_PORT] for c in clients}},
           "workloads": [{"name": "mix", "rwmixread": [100, 50, 0]}]}
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(doc))
    out = diskbench("run", "--profile", str(tmp_path / "p.yaml"), "--known-hosts", str(known),
                    "--format", "json", db=db, timeout=900)
    assert out.returncode == 0, out.stderr + out.stdout
    results = json.loads(out.stdout)["results"]
    for w in ("mix-rwmixread100", "mix-rwmixread50", "mix-rwmixread0"):
        rows = {(r["host"], r["direction"]): r for r in results if r["workload"] == w}
        assert {h for h, _ in rows} == {"clients", "c1", "c2"}, rows.keys()
        for d in {d for _, d in rows}:
            assert rows[("clients", d)]["ios"] == rows[("c1", d)]["ios"] + rows[("c2", d)]["ios"] > 0
    said = out.stderr + out.stdout
    assert "mounting 192.0.2.2:/export" in said
    assert len(re.findall(r"/export mounted with \S*nconnect=2", said)) == 2, said
    for c in clients:  # unmounted, server stopped, nothing left on the export
        assert "192.0.2.2:/export" not in c.check("cat /proc/mounts")
        assert not re.search(r"fio --server", c.check("ps -eo args"))
    assert server.check("ls -A /export").strip() == ""
