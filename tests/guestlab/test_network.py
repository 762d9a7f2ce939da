"""Two guests on a private segment: an NFS server and a client (nconnect), and fio client/server
reached both from the other guest and from the host through a forwarded port."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.guestlab.guest import Guest, GuestLab
from tests.guestlab.spec import nfs_server, plain

pytestmark = pytest.mark.guest

FIO_PORT = 8765
JOB = """\
[nfsjob]
directory=/export
size=8M
rw=randread
bs=4k
ioengine=psync
runtime=2
time_based
"""


def mount_nfs(client: Guest, server: str, vers: str, nconnect: int) -> str:
    """Mount, then return the mount's /proc/self/mountstats block."""
    source = f"{server}:/" if vers.startswith("4") else f"{server}:/export"
    opts = f"vers={vers},nconnect={nconnect}" + (",nolock" if vers == "3" else "")
    client.check(f"mkdir -p /mnt/nfs && mount -t nfs -o {opts} {source} /mnt/nfs")
    stats = client.check("cat /proc/self/mountstats")
    return next(block for block in stats.split("\ndevice ") if " mounted on /mnt/nfs " in block)


def test_nfs_nconnect_and_fio_client_server(guest_lab: GuestLab, tmp_path: Path) -> None:
    segment = guest_lab.segment("stream")
    server, client = guest_lab.start_all(
        nfs_server("nfs", ip2="192.0.2.2/24", forwards=(FIO_PORT,)),
        plain("client", ip2="192.0.2.1/24"),
        segment=segment,
    )
    print(f"boot to 'sshd started': server {server.boot_seconds:.1f} s, client {client.boot_seconds:.1f} s")
    server.check("echo hello-from-nfs > /export/hello.txt && fio --server --daemonize=/run/fio-server.pid")

    for vers in ("4.2", "3"):
        block = mount_nfs(client, "192.0.2.2", vers, nconnect=2)
        try:
            assert client.check("cat /mnt/nfs/hello.txt").strip() == "hello-from-nfs"
            assert re.search(r"\bnconnect=2\b", block), block
            assert f"vers={vers}" in block, block
            xprts = re.findall(r"^\s*xprt:\s+tcp ", block, re.M)
            print(f"NFS vers={vers}: {len(xprts)} xprt lines; opts", re.findall(r"opts:\s+(\S+)", block))
            assert len(xprts) == 2, block  # one transport per connection
        finally:
            client.run("umount /mnt/nfs")

    # fio client/server between the guests, over the private segment
    client.check(f"cat > /tmp/job.fio <<'EOF'\n{JOB}EOF")
    rc, out, err = client.run("fio --client=192.0.2.2 --output-format=json /tmp/job.fio", timeout=120)
    assert rc == 0, err
    assert json.loads(out[out.index("{"):])["client_stats"][0]["read"]["iops"] > 0

    # and from the host through the server's forwarded port (the format is ip:HOST,PORT)
    if shutil.which("fio") is None:
        pytest.fail("fio is not installed on the host: apt-get install -y fio")
    host_fio = subprocess.run(["fio", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    guest_fio = server.check("fio --version").strip()
    if host_fio != guest_fio:  # e.g. an Ubuntu CI runner; Debian 12 hosts match the bookworm guest
        pytest.skip(f"host {host_fio} != guest {guest_fio}: fio client/server needs one version on both ends")
    server.check("rm -f /export/nfsjob.*")
    job = tmp_path / "job.fio"
    job.write_text(JOB)
    host = subprocess.run(["fio", f"--client=ip:127.0.0.1,{server.forwarded[FIO_PORT]}", "--output-format=json",
                           str(job)], capture_output=True, text=True, timeout=120, check=False)
    assert host.returncode == 0, host.stderr
    doc = json.loads(host.stdout[host.stdout.index("{"):])
    stats = doc["client_stats"][0]
    assert stats["read"]["iops"] > 0
    assert "nfsjob.0.0" in server.check("ls /export")  # the job's file: it ran in the server guest
