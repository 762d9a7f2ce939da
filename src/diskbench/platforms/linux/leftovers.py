"""Undoing what a killed run left on a Linux host: its mounts, arrays, folders and workspace.

Each undo checks first that the thing is still the run's own (a mount point still mounted, an
array's members still carrying its UUID, a folder with diskbench's name), so cleaning up after a
run that died long ago never touches what someone made since.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from ...executors.base import Executor
from ..base import Platform
from .prepare import stop_array, unmount_point

LEFTOVER_WAIT_S = 20.0  # a killed run's array or mount: nothing of this run holds it any more


def undo(platform: Platform, ex: Executor, entry: dict[str, Any], line: Callable[[str], None]) -> bool:
    """Undo ``entry`` (a journal entry) on the host; True when it is gone, False when it is not
    a Linux kind or could not be undone (said on ``line``)."""
    kind, what, detail = entry["kind"], str(entry["what"]), entry.get("detail") or {}
    if kind == "filesystem":  # stays on the device it was made on; nothing runs there any more
        return True
    if kind == "mount":
        return _unmount(ex, what, bool(detail.get("made_point")), line)
    if kind == "array":
        return _stop_array(ex, what, str(detail.get("device") or what), [str(m) for m in detail.get("members", [])],
                           str(detail.get("uuid", "")), line)
    if kind == "scratch":
        return _remove(platform, ex, what, line)
    if kind == "workspace":
        _stop_engines(platform, ex, what)
        return _remove(platform, ex, what, line)
    return False


def _unmount(ex: Executor, point: str, made_point: bool, line: Callable[[str], None]) -> bool:
    if ex.run(["mountpoint", "-q", point]).returncode == 0:
        if not unmount_point(ex, point, wait_s=LEFTOVER_WAIT_S):
            line(f"{ex.name}: could not unmount {point}: it is still busy")
            return False
        line(f"{ex.name}: unmounted {point}")
    if made_point:
        ex.run(["rmdir", point], privileged=True)
    return True


def _stop_array(ex: Executor, md: str, device: str, members: list[str], uuid: str,
                line: Callable[[str], None]) -> bool:
    """The array stopped (found by its device, its /dev/md/ name or its UUID) and the superblocks of this
    run's array zeroed; a member that carries another array's superblock now is left alone."""
    if not uuid and not members:
        return True
    target = device if ex.run(["test", "-e", device]).returncode == 0 else md
    left = stop_array(ex, target, members, uuid, ours_only=True, wait_s=LEFTOVER_WAIT_S)
    if left is not None:
        line(f"{ex.name}: could not stop {md} ({left}); stop it with mdadm --stop {device}")
        return False
    line(f"{ex.name}: stopped {md}")
    return True


def _remove(platform: Platform, ex: Executor, path: str, line: Callable[[str], None]) -> bool:
    if "/diskbench-" not in path:  # only ever a folder diskbench named
        line(f"{ex.name}: not removing {path}: not a folder diskbench made")
        return False
    if platform.is_dir(ex, path):
        platform.remove_tree(ex, path)
        line(f"{ex.name}: removed {path}")
    return True


def _stop_engines(platform: Platform, ex: Executor, root: str) -> None:
    """Engines still running from a workspace (their wrappers' pid files): stopped as a Ctrl-C
    would, so their files and devices are free again."""
    pids = ex.run(["sh", "-c", f"cat {shlex.quote(root)}/*/*/pid 2>/dev/null"]).stdout.split()
    for pid in (p for p in pids if p.isdigit()):
        if ex.run(["kill", "-0", pid], privileged=True).returncode == 0:
            ex.run(["sh", "-c", platform.shell().stop(pid, shlex.join)], privileged=True, timeout=30)
