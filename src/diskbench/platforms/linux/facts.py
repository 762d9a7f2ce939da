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

# What a remote host is asked, all in one round trip (``Executor.run_many``).
_REMOTE: dict[str, list[str]] = {
    "hostname": ["uname", "-n"], "kernel": ["uname", "-r"], "arch": ["uname", "-m"], "cpus": ["nproc"],
    "meminfo": ["cat", "/proc/meminfo"], "cpuinfo": ["cat", "/proc/cpuinfo"],
    "os-release": ["cat", "/etc/os-release"], "lsblk": ["lsblk", "-J", "-O"],
}
_FILES = {"meminfo": "/proc/meminfo", "cpuinfo": "/proc/cpuinfo", "os-release": "/etc/os-release"}


def host_facts(ex: Executor) -> dict[str, Any]:
    facts: dict[str, Any] = {"executor": ex.name}
    if ex.name == "local":  # this machine: the same facts without starting programs
        uname = os.uname()
        facts.update(hostname=uname.nodename, kernel=uname.release, arch=uname.machine,
                     cpus=len(os.sched_getaffinity(0)), python=platform.python_version())
        facts.update(_proc_facts({key: _read(path) for key, path in _FILES.items()}))
        return facts
    outs = {key: out.stdout for key, out in zip(_REMOTE, ex.run_many(list(_REMOTE.values())), strict=True)
            if out.returncode == 0}
    facts.update({key: outs[key].strip() for key in ("hostname", "kernel", "arch", "cpus") if key in outs})
    if str(facts.get("cpus", "")).isdigit():
        facts["cpus"] = int(facts["cpus"])
    facts.update(_proc_facts(outs))
    if "lsblk" in outs:
        with contextlib.suppress(ValueError, AttributeError):
            facts["block_devices"] = json.loads(outs["lsblk"]).get("blockdevices", [])
    return facts


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _proc_facts(texts: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if m := re.search(r"^MemTotal:\s+(\d+) kB", texts.get("meminfo", ""), re.MULTILINE):
        out["memory_bytes"] = int(m.group(1)) * 1024
    if m := re.search(r"^model name\s*:\s*(.+)$", texts.get("cpuinfo", ""), re.MULTILINE):
        out["cpu_model"] = m.group(1).strip()
    if m := re.search(r'^PRETTY_NAME="?([^"\n]+)"?', texts.get("os-release", ""), re.MULTILINE):
        out["os"] = m.group(1)
    return out


def target_facts(ex: Executor, path: str) -> dict[str, Any]:
    """Filesystem of ``path`` and the disks beneath it (model, rotational, scheduler); for a raw block
    device (``raw: true``), the disks beneath it alone: the file system that holds its /dev node is not
    the target's."""
    facts: dict[str, Any] = {"path": path}
    if path.startswith("/dev/") and (devices := _disks_under(ex, path)):
        facts["devices"] = devices
        return facts
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
