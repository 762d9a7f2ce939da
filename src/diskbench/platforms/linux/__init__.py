"""The Linux platform: POSIX shell, util-linux facts, mkfs/mount/mdadm, apt/dnf/zypper."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import ExecutionError
from ...executors.base import Executor
from ..base import DeviceMap, Journal, Platform, Preparer, Shell
from .facts import host_facts, target_facts
from .prepare import LinuxPreparer
from .shell import PosixShell

if TYPE_CHECKING:
    from ...check import Check

# Package managers in the order they are tried: (program, argv installing PACKAGE).
PACKAGE_MANAGERS: tuple[tuple[str, list[str]], ...] = (
    ("apt-get", ["sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq PACKAGE"]),
    ("dnf", ["dnf", "install", "-y", "-q", "PACKAGE"]),
    ("zypper", ["zypper", "--non-interactive", "install", "PACKAGE"]),
)


class LinuxPlatform(Platform):
    name: ClassVar[str] = "linux"
    engine: ClassVar[str | None] = "fio"
    flushes_caches: ClassVar[bool] = True  # LinuxPreparer.flush_cache (flush.py)

    def __init__(self) -> None:
        self._shell = PosixShell()

    def shell(self) -> Shell:
        return self._shell

    def which(self, ex: Executor, program: str, *, privileged: bool = False) -> str | None:
        # sudo's secure_path has the sbin folders a plain user's PATH may lack (Debian's does)
        out = ex.run(["sh", "-c", self._shell.which(program)], privileged=privileged)
        return (out.stdout.strip() or None) if out.returncode == 0 else None

    def make_scratch_dir(self, ex: Executor, near: str | None = None) -> str:
        base = near if near and near.startswith("/") else "/var/tmp"
        out = ex.run(["sh", "-c", f"mkdir -p {self._shell.quote(base)} && "
                      f"mktemp -d -p {self._shell.quote(base)} diskbench-scratch-XXXXXX"], privileged=True)
        if out.returncode != 0:
            raise ExecutionError(f"{ex.name}: cannot create a scratch directory in {base}: {out.stderr.strip()}")
        return out.stdout.strip()

    def remove_tree(self, ex: Executor, path: str) -> None:
        ex.run(["rm", "-rf", "--one-file-system", path], privileged=True)

    def remove_workspace(self, ex: Executor, root: str) -> None:
        if not root.startswith("/tmp/diskbench-"):  # only ever what make_workspace made
            raise ExecutionError(f"{ex.name}: refusing to remove {root}: not a diskbench workspace")
        self.remove_tree(ex, root)  # root-owned outputs of privileged runs are in it: one sudo rm

    def is_dir(self, ex: Executor, path: str) -> bool:
        return ex.run(["test", "-d", path]).returncode == 0

    def list_files(self, ex: Executor, path: str) -> dict[str, int] | None:
        out = ex.run(["find", path, "-maxdepth", "1", "-type", "f", "-printf", "%s %f\\n"], privileged=True)
        if out.returncode != 0:
            return None
        return {name: int(size) for size, _, name in (ln.partition(" ") for ln in out.stdout.splitlines())
                if size.isdigit()}

    def free_bytes(self, ex: Executor, path: str) -> int | None:
        """``df``'s available bytes: what a user may still write. Root's reserved blocks (5% of an ext4)
        are left out on purpose: a benchmark that fills them starves the host's own services."""
        out = ex.run(["df", "-B1", "--output=avail", path], privileged=True)
        lines = out.stdout.strip().splitlines()
        value = lines[-1].strip() if len(lines) > 1 else ""
        if out.returncode != 0 or not value.isdigit():
            detail = (out.stderr or out.stdout).strip().splitlines()
            raise ExecutionError(f"{ex.name}: cannot read the free space of {path} "
                                 f"({detail[-1] if detail else f'df exited {out.returncode}'})")
        return int(value)

    def remove_files(self, ex: Executor, path: str, names: list[str]) -> None:
        for start in range(0, len(names), 200):
            ex.run(["rm", "-f", "--", *(f"{path.rstrip('/')}/{n}" for n in names[start:start + 200])],
                   privileged=True)

    def host_facts(self, ex: Executor) -> dict[str, Any]:
        return host_facts(ex)

    def target_facts(self, ex: Executor, path: str) -> dict[str, Any]:
        return target_facts(ex, path)

    def preparer(self, ex: Executor, *, devices: DeviceMap, allowed: list[str], name: str, run_id: str,
                 scratch_base: str | None, line: Callable[[str], None],
                 journal: Journal | None = None, exclusive: bool = True) -> Preparer:
        return LinuxPreparer(ex, allowed=allowed, name=name, run_id=run_id, scratch_base=scratch_base,
                             line=line, devices=devices, platform=self, journal=journal, exclusive=exclusive)

    def undo(self, ex: Executor, entry: dict[str, Any], line: Callable[[str], None]) -> bool:
        from .leftovers import undo

        return undo(self, ex, entry, line)

    def install(self, ex: Executor, package: str, *, host: str, line: Callable[[str], None]) -> None:
        for manager, template in PACKAGE_MANAGERS:
            if self.which(ex, manager):
                line(f"{host}: installing {package} with {manager}")
                argv = [part.replace("PACKAGE", package) for part in template]
                out = ex.run(argv, timeout=900, privileged=True)
                if out.returncode == 0:
                    return
                detail = (out.stderr or out.stdout).strip().splitlines()
                raise ExecutionError(f"{host}: installing {package} with {manager} failed: "
                                     f"{detail[-1] if detail else out.returncode}")
        raise ExecutionError(f"{host}: {package} is not installed and no apt-get, dnf or zypper was found")

    def doctor(self, ex: Executor) -> list[Check]:
        from ...check import Check

        out = []
        for tool, package in (("findmnt", "util-linux"), ("lsblk", "util-linux")):
            path = self.which(ex, tool)
            fix = "" if path else f"apt-get install -y {package}"
            out.append(Check(tool, path is not None, path or "not found", fix))
        for tool, package in (("mdadm", "mdadm"), ("mkfs.xfs", "xfsprogs")):  # stripes and xfs targets only
            path = self.which(ex, tool, privileged=True)
            out.append(Check(tool, path is not None, path or "not found (needed for stripe and xfs targets)",
                             "" if path else f"apt-get install -y {package}", optional=True))
        return out

    def default_scratch_base(self, ex: Executor) -> str | None:
        if ex.name == "local":  # not /tmp, which may be tmpfs and refuse O_DIRECT
            import platformdirs

            return platformdirs.user_cache_dir("diskbench")
        return None
