"""The Windows platform: PowerShell over OpenSSH, disks by LUN, Storage Spaces, NTFS, DiskSpd.

Written from Microsoft's documentation and checked by tests that decode every script; it has
not run on a real Windows host in diskbench's test suite (none is available there).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from ...errors import ExecutionError
from ...executors.base import Executor
from ..base import DeviceMap, Journal, Platform, Preparer, Shell
from .powershell import encoded_command, ps_quote
from .shell import PowerShellShell

DISKSPD_ZIP = "https://github.com/microsoft/diskspd/releases/download/v2.2/DiskSpd.ZIP"
FACTS = """$os = Get-CimInstance Win32_OperatingSystem; $cs = Get-CimInstance Win32_ComputerSystem
$cpu = Get-CimInstance Win32_Processor | Select-Object -First 1
[pscustomobject]@{hostname = $env:COMPUTERNAME; os = $os.Caption; os_build = $os.BuildNumber;
  kernel = $os.Version; arch = $env:PROCESSOR_ARCHITECTURE; cpus = [int]$cs.NumberOfLogicalProcessors;
  cpu_model = $cpu.Name; memory_bytes = [int64]$cs.TotalPhysicalMemory} | ConvertTo-Json -Compress"""
TARGET = """$item = Get-Item -LiteralPath {path}; $letter = $item.PSDrive.Name
$v = Get-Volume -DriveLetter $letter; $p = Get-Partition -DriveLetter $letter
$disks = @($p | Get-Disk | ForEach-Object {{ [pscustomobject]@{{name = "PhysicalDrive$($_.Number)";
  model = $_.FriendlyName; bus = [string]$_.BusType; location = $_.Location}} }})
[pscustomobject]@{{path = {path}; mountpoint = "$($letter):"; fstype = $v.FileSystem;
  cluster_bytes = $v.AllocationUnitSize; devices = $disks}} | ConvertTo-Json -Compress -Depth 4"""


class WindowsPlatform(Platform):
    name: ClassVar[str] = "windows"
    engine: ClassVar[str | None] = "diskspd"

    def __init__(self) -> None:
        self._shell = PowerShellShell()

    def shell(self) -> Shell:
        return self._shell

    def _ps(self, ex: Executor, text: str, timeout: float = 60) -> Any:
        return ex.run(encoded_command(text), timeout=timeout)

    def which(self, ex: Executor, program: str, *, privileged: bool = False) -> str | None:
        out = self._ps(ex, f"(Get-Command {ps_quote(program)} -ErrorAction Stop).Source")
        return (out.stdout.strip() or None) if out.returncode == 0 else None

    def make_scratch_dir(self, ex: Executor, near: str | None = None) -> str:
        base = near or "C:/ProgramData/diskbench/scratch"
        name = "('diskbench-scratch-' + [guid]::NewGuid().ToString('N').Substring(0, 8))"
        out = self._ps(ex, f"$d = Join-Path {ps_quote(base)} {name}\n"
                           "New-Item -ItemType Directory -Force -Path $d | Out-Null\n$d")
        if out.returncode != 0:
            raise ExecutionError(f"{ex.name}: cannot create a scratch directory in {base}: {out.stderr.strip()}")
        return str(out.stdout.strip().replace("\\", "/"))

    def remove_tree(self, ex: Executor, path: str) -> None:
        self._ps(ex, f"Remove-Item -LiteralPath {ps_quote(path)} -Recurse -Force -ErrorAction SilentlyContinue")

    def is_dir(self, ex: Executor, path: str) -> bool:
        out = self._ps(ex, f"if (Test-Path -LiteralPath {ps_quote(path)} -PathType Container) {{ exit 0 }}\nexit 1")
        return bool(out.returncode == 0)

    def host_facts(self, ex: Executor) -> dict[str, Any]:
        out = self._ps(ex, FACTS)
        try:
            facts: dict[str, Any] = json.loads(out.stdout)
        except ValueError:
            return {"executor": ex.name}
        return {"executor": ex.name, **facts}

    def target_facts(self, ex: Executor, path: str) -> dict[str, Any]:
        out = self._ps(ex, TARGET.format(path=ps_quote(path)))
        try:
            facts: dict[str, Any] = json.loads(out.stdout)
        except ValueError:
            return {"path": path}
        return facts

    def preparer(self, ex: Executor, *, devices: DeviceMap, allowed: list[str], name: str, run_id: str,
                 scratch_base: str | None, line: Callable[[str], None],
                 journal: Journal | None = None, exclusive: bool = True) -> Preparer:
        from .prepare import WindowsPreparer

        # not journalled yet: resume and cleanup undo what Linux hosts were left with
        return WindowsPreparer(ex, self, devices=devices, allowed=allowed, name=name, run_id=run_id,
                               scratch_base=scratch_base, line=line)

    def install(self, ex: Executor, package: str, *, host: str, line: Callable[[str], None]) -> None:
        """DiskSpd from its release zip into C:\\Windows (on the PATH of every session)."""
        if package != "diskspd":
            raise ExecutionError(f"{host}: diskbench cannot install {package} on Windows", hint=f"install {package}")
        line(f"{host}: installing DiskSpd from {DISKSPD_ZIP}")
        out = self._ps(ex, f"""$ErrorActionPreference = 'Stop'; $ProgressPreference = 'SilentlyContinue'
$zip = Join-Path $env:TEMP 'diskspd.zip'; $dir = Join-Path $env:TEMP 'diskspd'
Invoke-WebRequest -UseBasicParsing -Uri {ps_quote(DISKSPD_ZIP)} -OutFile $zip
Expand-Archive -LiteralPath $zip -DestinationPath $dir -Force
Copy-Item -LiteralPath (Join-Path $dir 'amd64\\diskspd.exe') `
  -Destination (Join-Path $env:SystemRoot 'diskspd.exe') -Force""",
                       timeout=600)
        if out.returncode != 0:
            detail = (out.stderr or out.stdout).strip().splitlines()
            raise ExecutionError(f"{host}: installing DiskSpd failed: {detail[-1] if detail else out.returncode}",
                                 hint="copy diskspd.exe into C:\\Windows yourself, or allow the VM to reach GitHub")
