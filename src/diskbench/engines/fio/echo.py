"""fio's echo of its job options, held against the job file diskbench sent.

fio's JSON repeats every option it read: ``global options`` and each job's ``job options``. The
job file travels to the host and fio reads it there as root; if what fio read is not what was
sent (a file swapped on the way, a workspace someone else could write), the numbers belong to
another job. So a result counts only when fio's echo matches the rendered job, option for option.
"""

from __future__ import annotations

from typing import Any


def sections(rendered: str) -> dict[str, dict[str, str]]:
    """``[section]`` -> {option: value} of a job file; bare flags (``new_group``) have no value
    and fio does not echo them."""
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for raw in rendered.splitlines():
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = out.setdefault(line[1:-1], {})
        elif current is not None and "=" in line:
            key, _, value = line.partition("=")
            current[key.strip()] = value.strip()
    return out


def mismatch(rendered: str, doc: dict[str, Any]) -> str | None:
    """What fio ran that the job file did not say (None when they agree, or when this fio does not
    echo its options: fio before 2.x's JSON had no ``global options``)."""
    echoed_global = doc.get("global options")
    jobs = doc.get("jobs")
    if not isinstance(echoed_global, dict) or not isinstance(jobs, list):
        return None
    sent = sections(rendered)
    diff = _diff("[global]", sent.pop("global", {}), echoed_global)
    if diff:
        return diff
    for job in jobs:
        if not isinstance(job, dict) or not isinstance(job.get("job options"), dict):
            continue
        name = str(job.get("jobname", ""))
        if name not in sent:
            return f"fio ran a job {name!r} that the job file does not have"
        diff = _diff(f"[{name}]", sent[name], job["job options"])
        if diff:
            return diff
    return None


def _diff(where: str, sent: dict[str, str], echoed: dict[str, Any]) -> str | None:
    for key in sorted(set(sent) | set(echoed)):
        if key not in echoed:
            return f"{where} {key}={sent[key]} was sent, but fio did not read it"
        if str(echoed[key]) != sent.get(key):
            told = "not sent" if key not in sent else f"sent {key}={sent[key]}"
            return f"{where} fio read {key}={echoed[key]} ({told})"
    return None
