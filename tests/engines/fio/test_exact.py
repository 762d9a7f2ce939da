"""diskbench's numbers equal fio's to the bucket, at the sample counts where rounding decides.

With N a multiple of 1000 (p99.9) or 2000 (p99.95), exact arithmetic and fio's extended-precision
arithmetic disagree by one sample; these runs make fio produce exactly such N (size = N x bs, no
time limit) and compare with what fio printed. Merges are compared with fio's own merge of the
same jobs: client/server's "All clients" (fio >= 3.39 prints its percentiles too; with older fio
the percentiles are checked against fio's expression compiled natively).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from diskbench.engines.fio.parse import parse_fio_output
from diskbench.engines.fio.percentiles import merge_bins, percentiles_from_bins
from diskbench.model import PERCENTILES, pkey

from ...conftest import needs_fio
from .fio_arith import fio_rank, needs_cc

pytestmark = needs_fio
PLIST = ":".join(f"{p:g}" for p in PERCENTILES)


def _fio(tmp_path: Path, name: str, *options: str) -> dict[str, object]:
    out = tmp_path / f"{name}.json"
    subprocess.run(["fio", "--output-format=json+", f"--output={out}", f"--directory={tmp_path}",
                    f"--name={name}", "--rw=randread", "--bs=4k", "--ioengine=psync",
                    f"--percentile_list={PLIST}", *options], check=True, capture_output=True)
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def _printed(clat: dict[str, object]) -> dict[float, int]:
    return {float(k): int(v) for k, v in clat["percentile"].items()}  # type: ignore[attr-defined]


CASES = {
    "single": lambda n: [f"--size={4 * n}k"],
    "numjobs-group": lambda n: [f"--size={2 * n}k", "--numjobs=2", "--group_reporting"],
    "rate-capped": lambda n: [f"--size={4 * n}k", "--rate_iops=4000"],
    "rate-capped-group": lambda n: [f"--size={n}k", "--numjobs=4", "--group_reporting",
                                    "--rate_iops=3000"],
}


@pytest.mark.parametrize("n", [1000, 2000, 3000])
@pytest.mark.parametrize("case", sorted(CASES))
def test_percentiles_equal_fios_at_round_counts(tmp_path: Path, case: str, n: int) -> None:
    doc = _fio(tmp_path, case.replace("-", ""), *CASES[case](n))
    (job,) = doc["jobs"]  # type: ignore[misc]
    clat = job["read"]["clat_ns"]
    assert clat["N"] == n
    printed = _printed(clat)
    # fio's rule and arithmetic on fio's own bins give exactly what fio printed ...
    assert percentiles_from_bins({int(k): v for k, v in clat["bins"].items()}, PERCENTILES) == printed
    # ... and a result that is one fio job or group reports fio's own numbers.
    (group,) = parse_fio_output(json.dumps(doc))
    got = group.directions[0].clat
    assert got is not None and got.exact
    assert got.percentiles == {pkey(p): v / 1000 for p, v in printed.items()}
    assert group.directions[0].iops == job["read"]["iops"]


@needs_cc
def test_merging_per_job_bins_follows_fios_arithmetic(tmp_path: Path) -> None:
    """Per-job bins merged by diskbench, checked against fio's expression run natively."""
    doc = _fio(tmp_path, "perjob", "--size=4000k", "--numjobs=2")  # 2 x 1000 IOs: N = 2000
    (group,) = parse_fio_output(json.dumps(doc))
    bins = merge_bins({int(k): v for k, v in j["read"]["clat_ns"]["bins"].items()} for j in doc["jobs"])
    values = sorted(v for v, c in bins.items() for _ in range(c))
    assert len(values) == 2000
    got = group.directions[0].clat
    assert got is not None
    for p in PERCENTILES:
        assert got.percentiles[pkey(p)] == values[fio_rank(p, 2000) - 1] / 1000, p


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def fio_servers(tmp_path: Path) -> Iterator[list[str]]:
    """Two fio servers on two loopback addresses, stopped by their own handles."""
    procs, clients = [], []
    for address in ("127.0.0.2", "127.0.0.3"):
        port = _free_port()
        procs.append(subprocess.Popen(["fio", f"--server=ip:{address},{port}"], cwd=tmp_path, start_new_session=True,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        clients.append(f"--client=ip:{address},{port}")
    try:
        deadline = time.monotonic() + 10
        for client in clients:
            address, port = client.split("ip:", 1)[1].split(",")
            while time.monotonic() < deadline:
                with socket.socket() as s:
                    if s.connect_ex((address, int(port))) == 0:
                        break
                time.sleep(0.05)
        yield clients
    finally:
        for proc in procs:  # the server forks a worker per connection: stop the whole session
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@needs_cc
def test_client_server_merge_equals_fios_all_clients(tmp_path: Path, fio_servers: list[str]) -> None:
    job = tmp_path / "job.fio"
    job.write_text(f"[cs]\ndirectory={tmp_path}\nrw=randread\nbs=4k\nioengine=psync\nsize=3000k\n"
                   f"rate_iops=3000\npercentile_list={PLIST}\n")
    out = subprocess.run(["fio", *fio_servers, "--output-format=json+", str(job)], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    doc = json.loads(out[out.index("{"):out.rindex("}") + 1])
    entries = doc["client_stats"]
    (all_clients,) = [e for e in entries if e["jobname"] == "All clients"]
    (group,) = parse_fio_output(out)
    read = group.directions[0]
    fio_all = all_clients["read"]
    assert group.hosts and len(group.hosts) == 2
    assert read.ios == fio_all["total_ios"] == 1500  # 2 clients x 750 IOs
    # fio's rule (I/Os over the longest runtime); fio prints IOPS with 6 decimals, so equal to that precision
    assert read.iops == pytest.approx(fio_all["iops"], abs=5e-7 + 1e-12 * fio_all["iops"])
    assert read.bw_bytes_per_s == fio_all["bw_bytes"]
    clat, fio_clat = read.clat, fio_all["clat_ns"]
    assert clat is not None and clat.exact and clat.samples == fio_clat["N"]
    assert (clat.min, clat.max) == (fio_clat["min"] / 1000, fio_clat["max"] / 1000)
    assert clat.mean == round(fio_clat["mean"] / 1000, 6)  # fio's merged mean, shown to the ns/1000
    if "percentile" in fio_clat:  # fio >= 3.39 prints its merge of the same bins
        assert clat.percentiles == {pkey(float(k)): v / 1000 for k, v in fio_clat["percentile"].items()}
    bins = merge_bins({int(k): v for k, v in e["read"]["clat_ns"]["bins"].items()}
                      for e in entries if e is not all_clients)
    values = sorted(v for v, c in bins.items() for _ in range(c))
    for p in PERCENTILES:
        assert clat.percentiles[pkey(p)] == values[fio_rank(p, len(values)) - 1] / 1000, p
