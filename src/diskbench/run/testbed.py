"""Which results are comparable: a key over the declared configuration, never over measurements.

Two runs share a testbed when they declare the same machine (region, VM size, disks, caching,
image, or the same SSH host / local machine), the same target, the same fio version and the
same rendered job file. The scratch directory's random name is not part of it.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from .plan import LOCAL, PlannedJob


def normalized_job_file(rendered: str) -> str:
    """The job file without comments and without the (scratch) path it happened to run in."""
    lines = []
    for line in rendered.splitlines():
        if not line.strip() or line.lstrip().startswith((";", "#")):
            continue
        if line.startswith(("directory=", "filename=")):
            line = line.split("=", 1)[0] + "=<target>"
        lines.append(line)
    return "\n".join(lines)


def declared(job: PlannedJob, rendered: str, fio_version: str | None) -> dict[str, Any]:
    machine: dict[str, Any] = {"provider": job.provider, "name": job.machine}
    if job.machine_spec:
        machine.update(job.machine_spec)
    elif job.host is not None:
        machine.update(address=job.host.address, port=job.host.port)
    elif job.provider == LOCAL:
        machine["hostname"] = os.uname().nodename
    return {"machine": machine, "target": job.target.model_dump(exclude_none=True),
            "target_name": job.target_label, "fio": fio_version, "job": normalized_job_file(rendered)}


def testbed_key(job: PlannedJob, rendered: str, fio_version: str | None) -> str:
    text = json.dumps(declared(job, rendered, fio_version), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
