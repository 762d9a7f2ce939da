"""What a Linux host is: kernel, CPU, memory, block devices, and a target's filesystem and disks."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
from pathlib import Path
from typing import Any

from ...executors.base import Executor


def host_facts(ex: Executor) -> dict[str, Any]:
    facts: dict[str, Any] = {"executor": ex.name}
    if ex.name == "local":  # this machine: the same facts without starting seven programs
        uname = os.uname()
        facts.update(hostname=uname.nodename, kernel=uname.release, arch=uname.machine,
                     cpus=str(len(os.sched_getaffinity(0))))
    for key, argv in {"hostname": ["uname", "-n"], "kernel": ["uname", "-r"],
                      "arch": ["uname", "-m"], "cpus": ["nproc"]}.items():
        out = ex.run(argv) if key not in facts else None
        if out is not None and out.returncode == 0:
            facts[key] = out.stdout.strip()
    if "cpus" in facts and facts["cpus"].isdigit():
        facts["cpus"] = int(facts["cpus"])
    facts.update(_proc_facts(ex))
    if ex.name == "local":
        facts["python"] = platform.python_version()
    else:
        blk = ex.run(["lsblk", "-J", "-O"])
        if blk.returncode == 0:
            with contextlib.suppress(ValueError):
                facts["block_devices"] = json.loads(blk.stdout).get("blockdevices", [])
    return facts


def _cat(ex: Executor, path: str) -> str:
    if ex.name == "local":
        try:
            return Path(path).read_text(errors="replace")
        except OSError:
            return ""
    return ex.run(["cat", path]).stdout


def _proc_facts(ex: Executor) -> dict[str, Any]:
    out: dict[str, Any] = {}
    mem = _cat(ex, "/proc/meminfo")
    if m := re.search(r"^MemTotal:\s+(\d+) kB", mem, re.MULTILINE):
        out["memory_bytes"] = int(m.group(1)) * 1024
    cpu = _cat(ex, "/proc/cpuinfo")
    if m := re.search(r"^model name\s*:\s*(.+)$", cpu, re.MULTILINE):
        out["cpu_model"] = m.group(1).strip()
    osr = _cat(ex, "/etc/os-release")
    if m := re.search(r'^PRETTY_NAME="?([^"\n]+)"?', osr, re.MULTILINE):
        out["os"] = m.group(1)
    return out


def target_facts(ex: Executor, path: str) -> dict[str, Any]:
    """Filesystem of ``path`` and the disks beneath it (model, rotational, scheduler)."""
    facts: dict[str, Any] = {"path": path}
    mnt = ex.run(["findmnt", "-J", "-T", path, "-o", "TARGET,SOURCE,FSTYPE,OPTIONS"])
    try:
        fs = json.loads(mnt.stdout)["filesystems"][0]
    except (ValueError, KeyError, IndexError):
        return facts
    facts.update(mountpoint=fs.get("target"), source=fs.get("source"), fstype=fs.get("fstype"),
                 mount_options=fs.get("options"))
    source = str(fs.get("source") or "")
    if source.startswith("/dev/"):
        facts["devices"] = _disks_under(ex, source.split("[")[0])
    return facts


def _disks_under(ex: Executor, device: str) -> list[dict[str, Any]]:
    out = ex.run(["lsblk", "-J", "-s", "-o", "NAME,TYPE,MODEL,ROTA,SCHED,SIZE,TRAN", device])
    try:
        roots = json.loads(out.stdout)["blockdevices"]
    except (ValueError, KeyError):
        return []
    nodes: list[dict[str, Any]] = []
    stack = list(roots)
    while stack:
        node = stack.pop(0)
        stack.extend(node.pop("children", None) or [])
        node["rotational"] = _as_bool(node.pop("rota", None))
        node["scheduler"] = node.pop("sched", None)
        nodes.append(node)
    # The disks beneath partitions, LVM or md; a loop device or the like stands for itself.
    return [n for n in nodes if n.get("type") == "disk"] or nodes[-1:]


def _as_bool(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    return str(value).strip() in ("1", "true")
