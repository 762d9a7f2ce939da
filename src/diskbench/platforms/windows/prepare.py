"""Storage targets on a Windows host: disks by LUN, Storage Spaces stripes, NTFS with 64K clusters.

The safety rule is the same as on Linux: a disk that has partitions, is not RAW, or holds the
system is never initialized unless named under ``destroy_data_on`` (as ``\\\\.\\PhysicalDriveN``
or ``lun:N``). What diskbench creates (partition, volume, storage pool) it removes at the end.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import DiskbenchError, ExecutionError, SafetyError
from ...executors.base import Executor
from ...profile.targets import DeviceTarget, DirTarget, LunsTarget, LunTarget, ScratchTarget, StripeTarget, TempTarget
from ..base import DeviceMap, Platform, Prepared, Preparer
from .powershell import encoded_command, ps_quote

if TYPE_CHECKING:
    from ...profile import TargetModel

ALLOCATION_UNIT = 65536  # NTFS clusters of 64 KiB, as the Azure guide formats data disks
INTERLEAVE = 65536  # Storage Spaces stripe unit, the guide's default for data disks

DISKS = """Get-Disk | ForEach-Object {
  $parts = @(Get-Partition -DiskNumber $_.Number -ErrorAction SilentlyContinue).Count
  [pscustomobject]@{number = $_.Number; location = $_.Location; style = [string]$_.PartitionStyle;
    partitions = $parts; system = [bool]$_.IsSystem; boot = [bool]$_.IsBoot; size = $_.Size;
    model = $_.FriendlyName}
} | ConvertTo-Json -Compress"""


class WindowsPreparer(Preparer):
    def __init__(self, ex: Executor, platform: Platform, *, devices: DeviceMap, allowed: list[str],
                 name: str, run_id: str, scratch_base: str | None, line: Callable[[str], None]) -> None:
        self.ex, self.platform, self.map = ex, platform, devices
        self.allowed = {a.lower() for a in allowed}
        self.name, self.run_id, self.scratch_base, self.line = name, run_id, scratch_base, line

    def _ps(self, text: str, what: str, timeout: float = 600) -> str:
        out = self.ex.run(encoded_command("$ErrorActionPreference = 'Stop'\n" + text), timeout=timeout)
        if out.returncode != 0:
            detail = (out.stderr or out.stdout).strip().splitlines()
            raise ExecutionError(f"{self.ex.name}: {what} failed: {detail[-1] if detail else out.returncode}")
        return out.stdout

    def disks(self) -> list[dict[str, Any]]:
        data = json.loads(self._ps(DISKS, "listing disks") or "[]")
        return data if isinstance(data, list) else [data]

    # --- targets ----------------------------------------------------------------------------
    def prepare(self, target: TargetModel, writes: bool) -> Prepared:
        if isinstance(target, ScratchTarget):
            path = self.platform.make_scratch_dir(self.ex, self.scratch_base)
            return Prepared(directory=path, cleanup=[lambda: self.platform.remove_tree(self.ex, path)])
        if isinstance(target, DirTarget):
            if not self.platform.is_dir(self.ex, target.dir):
                raise ExecutionError(f"{self.ex.name}: target directory {target.dir} does not exist")
            return Prepared(directory=target.dir)
        if isinstance(target, TempTarget):
            if target.raw:
                raise DiskbenchError(f"{self.ex.name}: temp: raw: true takes a temp disk that comes raw; Windows "
                                     f"mounts it as {' or '.join(self.map.temp_drives) or 'a drive'}",
                                     hint="leave raw: out to measure it there")
            return self._temp()
        if getattr(target, "fs", None) is not None:
            raise DiskbenchError(f"{self.ex.name}: Windows targets are formatted NTFS (64K clusters); remove fs:")
        numbers = self.numbers(target)
        self.require_writable(numbers, writes or not getattr(target, "raw", False))
        if getattr(target, "raw", False):
            if len(numbers) != 1:
                raise DiskbenchError(f"{self.ex.name}: raw: true takes one disk, not {len(numbers)}")
            return Prepared(filename=f"#{numbers[0]}", devices=[_drive(numbers[0])])
        prepared = Prepared(devices=[_drive(n) for n in numbers])
        try:
            letter = self._volume(numbers, prepared)
            prepared.directory = f"{letter}:/diskbench"
            self._ps(f"New-Item -ItemType Directory -Force -Path {ps_quote(letter + ':/diskbench')} | Out-Null",
                     "creating the target folder")
        except BaseException:
            prepared.release()
            raise
        return prepared

    def numbers(self, target: TargetModel) -> list[int]:
        disks = self.disks()
        if isinstance(target, (LunTarget, LunsTarget)):
            luns = [target.lun] if isinstance(target, LunTarget) else target.luns
            return [self._by_lun(disks, n) for n in luns]
        if isinstance(target, (DeviceTarget, StripeTarget)):
            names = [target.device] if isinstance(target, DeviceTarget) else target.stripe
            return [_number_of(name) for name in names]
        raise DiskbenchError(f"{self.ex.name}: target kind {target.kind} is not available on Windows")

    def _by_lun(self, disks: list[dict[str, Any]], n: int) -> int:
        """The data disk at LUN n: not on the controller of the system disk (whose LUNs are the OS
        and temp disks)."""
        system = {_adapter(d) for d in disks if d.get("system") or d.get("boot")}
        for pattern in self.map.lun_locations:
            wanted = pattern.format(n=n).lower()
            found = [d["number"] for d in disks if str(d.get("location", "")).lower().endswith(wanted)
                     and _adapter(d) not in system]
            if found:
                return int(found[0])
        raise ExecutionError(f"{self.ex.name}: no data disk at LUN {n}", hint=self.map.lun_hint or "is it attached?")

    def require_writable(self, numbers: list[int], writes: bool) -> None:
        if not writes:
            return
        by_number = {int(d["number"]): d for d in self.disks()}
        for n in numbers:
            disk = by_number.get(n)
            lun = str((disk or {}).get("location", "")).rsplit("LUN", 1)[-1].strip()
            if _drive(n).lower() in self.allowed or (lun.isdigit() and f"lun:{lun}" in self.allowed):
                continue
            if disk is None:
                raise ExecutionError(f"{self.ex.name}: there is no disk {n}")
            reasons = [why for why, bad in (
                ("holds the system", disk.get("system") or disk.get("boot")),
                (f"has {disk.get('partitions')} partition(s)", disk.get("partitions")),
                (f"is initialized ({disk.get('style')})", disk.get("style") not in ("RAW", "0", None)),
            ) if bad]
            if reasons:
                raise SafetyError(f"{self.ex.name}: refusing to write to {_drive(n)}: it {'; '.join(reasons)}",
                                  hint=f"if its data may be destroyed, name it under destroy_data_on: [{_drive(n)}]")

    def _volume(self, numbers: list[int], prepared: Prepared) -> str:
        label = f"diskbench-{self.run_id[-4:]}"
        if len(numbers) == 1:
            disk = self._one_disk(numbers[0], label)
            prepared.cleanup.append(lambda: self._clear([numbers[0]]))
        else:
            disk = self._pool(numbers, label)
            prepared.cleanup.append(lambda: self._remove_pool(label))
        self.line(f"{self.ex.name}: formatting NTFS (64K clusters) on disk {disk}")
        letter = self._ps(f"""$d = Get-Disk -Number {disk}
if ($d.PartitionStyle -eq 'RAW') {{ Initialize-Disk -Number {disk} -PartitionStyle GPT | Out-Null }}
$p = New-Partition -DiskNumber {disk} -UseMaximumSize -AssignDriveLetter
Format-Volume -Partition $p -FileSystem NTFS -AllocationUnitSize {ALLOCATION_UNIT} `
  -NewFileSystemLabel {ps_quote(label)} -Confirm:$false | Out-Null
$p.DriveLetter""", f"formatting disk {disk}").strip()
        if len(letter) != 1:
            raise ExecutionError(f"{self.ex.name}: no drive letter for disk {disk} ({letter!r})")
        return letter

    def _one_disk(self, number: int, label: str) -> int:
        return number

    def _pool(self, numbers: list[int], label: str) -> int:
        """A Storage Spaces simple (striped) virtual disk over ``numbers``, one column per disk."""
        self.line(f"{self.ex.name}: striping disks {', '.join(map(str, numbers))} (Storage Spaces, simple)")
        ids = ",".join(str(n) for n in numbers)
        out = self._ps(f"""$disks = Get-PhysicalDisk -CanPool $true |
  Where-Object {{ @({ids}) -contains [int]$_.DeviceId }}
if (@($disks).Count -ne {len(numbers)}) {{ throw "only $(@($disks).Count) of {len(numbers)} disks can be pooled" }}
$sub = Get-StorageSubSystem -FriendlyName 'Windows Storage*' | Select-Object -First 1
New-StoragePool -FriendlyName {ps_quote(label)} -StorageSubSystemUniqueId $sub.UniqueId -PhysicalDisks $disks | Out-Null
$v = New-VirtualDisk -StoragePoolFriendlyName {ps_quote(label)} -FriendlyName {ps_quote(label)} `
  -ResiliencySettingName Simple -NumberOfColumns {len(numbers)} -Interleave {INTERLEAVE} -UseMaximumSize
($v | Get-Disk).Number""", "creating the striped volume")
        return int(out.strip().splitlines()[-1])

    def _clear(self, numbers: list[int]) -> None:
        for n in numbers:
            self.ex.run(encoded_command(f"Clear-Disk -Number {n} -RemoveData -RemoveOEM -Confirm:$false"))

    def _remove_pool(self, label: str) -> None:
        self.ex.run(encoded_command(
            f"Remove-VirtualDisk -FriendlyName {ps_quote(label)} -Confirm:$false -ErrorAction SilentlyContinue\n"
            f"Remove-StoragePool -FriendlyName {ps_quote(label)} -Confirm:$false -ErrorAction SilentlyContinue"))

    def _temp(self) -> Prepared:
        for drive in self.map.temp_drives:
            path = f"{drive}/diskbench"
            out = self.ex.run(encoded_command(
                f"if (Test-Path -LiteralPath {ps_quote(drive + '/')}) {{ New-Item -ItemType Directory -Force "
                f"-Path {ps_quote(path)} | Out-Null }} else {{ exit 1 }}"))
            if out.returncode == 0:
                return Prepared(directory=path)
        raise ExecutionError(f"{self.ex.name}: no temp disk at {', '.join(self.map.temp_drives) or '(no known drive)'}",
                             hint=self.map.temp_hint or "this machine may have none")


def _adapter(disk: dict[str, Any]) -> str:
    """"Integrated : Adapter 3 : Port 0 : Target 0 : LUN 2" -> "integrated : adapter 3"."""
    return str(disk.get("location", "")).lower().split(" : port")[0]


def _drive(number: int) -> str:
    return f"\\\\.\\PhysicalDrive{number}"


def _number_of(name: str) -> int:
    tail = name.rsplit("PhysicalDrive", 1)[-1].lstrip("#")
    if not tail.isdigit():
        raise DiskbenchError(f"{name!r} is not a Windows disk (use \\\\.\\PhysicalDriveN, or lun: N)")
    return int(tail)
