"""Which results are comparable: a key over the declared configuration, never over measurements.

Two runs share a testbed when they declare the same machine (a provider's machine spec, or the
same SSH host / local machine), the same target, the same engine version and the same job file
(as the engine normalizes it: without comments and without the scratch path it ran in), and
flush the caches before the job alike (``flush_cache``). A knee search (``iodepth: auto``) declares
its search too: its own testbed is never a fixed depth's (each of its steps has that depth's).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from ..plan import LOCAL, Unit


def declared(job: Unit, job_text: str, engine: str, version: str | None) -> dict[str, Any]:
    machine: dict[str, Any] = {"provider": job.provider, "name": job.machine}
    if job.machine_spec:
        machine.update(job.machine_spec)
    elif job.host is not None:
        machine.update(address=job.host.address, port=job.host.port)
    elif job.provider == LOCAL:
        machine["hostname"] = os.uname().nodename
    out: dict[str, Any] = {"machine": machine, "target": job.target.model_dump(exclude_none=True),
                           "target_name": job.target_label, engine: version, "job": job_text}
    if job.workload.flush_cache:  # what is cached when measuring starts: not in the job file, but declared
        out["flush_cache"] = job.workload.flush_cache
    if job.workload.knee is not None:  # the job file is its first step's; what it searches is not in it
        out["knee"] = job.workload.knee.model_dump()
    return out


def testbed_key(job: Unit, job_text: str, engine: str, version: str | None) -> str:
    text = json.dumps(declared(job, job_text, engine, version), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
