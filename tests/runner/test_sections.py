"""A unit with sections: several jobs on several targets of one host in one engine run.

The Azure guide's fioreadwrite.ini reads one disk and writes another at once; diskbench runs it
as one fio run, stores each job's result on its own target, and their exact merge.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from diskbench.store import Store

from ..conftest import diskbench, needs_fio
from ..lab import Lab

pytestmark = needs_fio


def test_sections_run_at_once_on_their_own_targets(lab: Lab, db: Path, tmp_path: Path) -> None:
    host = lab.add_host()
    reads, writes = tmp_path / "reads", tmp_path / "writes"
    reads.mkdir()
    writes.mkdir()
    doc = {"name": "mixed", "defaults": {"size": "16M", "runtime": "2s", "ramp_time": "0s", "bs": "4k",
                                         "ioengine": "libaio", "iodepth": 4},
           "hosts": [host.profile_host(targets={"cached": {"dir": str(reads)}, "striped": {"dir": str(writes)}})],
           "workloads": [{"name": "readwrite", "numjobs": 2, "sections": [
               {"name": "reader1", "rw": "randread", "target": "cached"},
               {"name": "writer1", "rw": "randwrite", "target": "striped", "rate_iops": 200}]}]}
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(doc))
    out = diskbench("run", "--profile", str(tmp_path / "p.yaml"), "--known-hosts", str(lab.known_hosts),
                    "--format", "json", db=db)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    got = {(r["workload"], r["target"], r["direction"]): r for r in results}
    assert set(got) == {("readwrite/reader1", "cached", "read"), ("readwrite/writer1", "striped", "write"),
                        ("readwrite", "cached+striped", "read"), ("readwrite", "cached+striped", "write"),
                        ("readwrite", "cached+striped", "total")}
    assert {r["job"] for r in results} == {"lab0/cached+striped/readwrite"}  # one unit, one engine run
    reader, writer = got[("readwrite/reader1", "cached", "read")], got[("readwrite/writer1", "striped", "write")]
    both_read = got[("readwrite", "cached+striped", "read")]
    both_write = got[("readwrite", "cached+striped", "write")]
    assert (both_read["ios"], both_write["ios"]) == (reader["ios"], writer["ios"])  # the merge adds nothing
    assert writer["iops"] < 2 * 200 * 1.15  # each of the two writers capped at 200 IOPS
    (job_file_path,) = Path(Store(db).get_run("last")["artifacts_dir"]).glob("*/job.fio")
    job_file = job_file_path.read_text()
    assert f"directory={reads}" in job_file and f"directory={writes}" in job_file and "new_group" in job_file
