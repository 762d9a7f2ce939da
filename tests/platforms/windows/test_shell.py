"""The commands the Windows platform sends: every one decodes to the PowerShell it means.

There is no Windows host here; these tests decode each command line (cmd.exe -> powershell
-EncodedCommand -> UTF-16LE script) and check the script's protocol with the SSH executor
(stdout bytes on stdout, PID and RC lines on stderr) and the safety rule's decisions, which are
made in Python from what the host reports.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from diskbench.errors import SafetyError
from diskbench.executors.base import Completed, Executor
from diskbench.platforms.base import DeviceMap
from diskbench.platforms.windows import WindowsPlatform
from diskbench.platforms.windows.prepare import WindowsPreparer
from diskbench.platforms.windows.shell import PowerShellShell
from diskbench.profile import parse_target


def decode(command: str) -> str:
    found = re.search(r"-EncodedCommand (\S+)", command)
    assert found, command
    return base64.b64decode(found.group(1)).decode("utf-16-le")


def test_commands_are_encoded_powershell() -> None:
    sh = PowerShellShell()
    line = sh.join(["diskspd", "-Rxml", "-XC:\\work dir\\job.xml"])
    assert line.startswith("powershell -NoProfile -NonInteractive -EncodedCommand ")
    assert decode(line) == "& 'diskspd' '-Rxml' '-XC:\\work dir\\job.xml'\nexit $LASTEXITCODE"
    assert decode(sh.join(["x", "it's $(evil)"])) == "& 'x' 'it''s $(evil)'\nexit $LASTEXITCODE"
    assert sh.privileged("cmd", sudo=True, user="azureuser") == "cmd"  # administrators need no sudo
    workspace = decode(sh.make_workspace())  # a new folder of the login user's own, named at random
    assert "Join-Path $env:TEMP ('diskbench-' + [guid]::NewGuid()" in workspace and "-ErrorAction Stop" in workspace


def test_detached_start_and_follow_speak_the_executors_protocol() -> None:
    sh = PowerShellShell()
    start = sh.start_detached(["diskspd", "-Rxml", "-XC:/w/job.xml"], "C:/w", lambda argv: " ".join(argv))
    script = decode(sh.follow("C:/w", None, start, 0))
    assert "Win32_Process" in script and "[Console]::Error.WriteLine(\"PID $runner\")" in script
    assert "'C:\\w\\stdout.txt'" in script and "'C:\\w\\exit_code'" in script
    assert "[Console]::Error.WriteLine(\"RC $code\")" in script and "$offset = 0" in script
    again = decode(sh.follow("C:/w", "4242", start, 1234))
    assert again.startswith("$p = 4242") and "$offset = 1234" in again and "Win32_Process" not in again
    assert "taskkill /PID 4242 /T /F" in decode(sh.stop("4242", lambda argv: ""))
    assert "OpenStandardInput" in decode(sh.write_file("C:/w/job.xml"))
    assert "ToBase64String" in decode(sh.read_file("C:/w/stdout.txt"))


class ScriptedWindows(Executor):
    """Answers the preparer's PowerShell by what the decoded script asks for."""

    name = "win"
    platform = "windows"

    def __init__(self, answers: dict[str, Callable[[str], tuple[int, str]]]) -> None:
        self.answers, self.scripts = answers, []

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        script = base64.b64decode(argv[-1]).decode("utf-16-le")
        self.scripts.append(script)
        for marker, answer in self.answers.items():
            if marker in script:
                rc, out = answer(script)
                return Completed(argv, rc, out, "")
        return Completed(argv, 0, "", "")

    def stream(self, *args: object, **kwargs: object) -> int:  # type: ignore[override]
        raise NotImplementedError

    def write_text(self, path: str, text: str) -> None:
        raise NotImplementedError

    def fetch(self, path: str, dest: Path) -> bool:
        return False

    def workspace(self, local_dir: Path) -> str:
        return str(local_dir)


DISKS = [
    {"number": 0, "location": "Integrated : Adapter 0 : Port 0 : Target 0 : LUN 0", "style": "GPT", "partitions": 4,
     "system": True, "boot": True},
    {"number": 2, "location": "Integrated : Adapter 3 : Port 0 : Target 0 : LUN 0", "style": "RAW", "partitions": 0,
     "system": False, "boot": False},
    {"number": 3, "location": "Integrated : Adapter 3 : Port 0 : Target 0 : LUN 1", "style": "GPT", "partitions": 1,
     "system": False, "boot": False},
]
AZURE = DeviceMap(lun_locations=(": LUN {n}",), temp_drives=("D:",))


def _preparer(ex: ScriptedWindows, allowed: list[str] | None = None) -> WindowsPreparer:
    return WindowsPreparer(ex, WindowsPlatform(), devices=AZURE, allowed=allowed or [], name="win", run_id="r-0001",
                           scratch_base=None, line=lambda _m: None)


def test_a_blank_data_disk_is_formatted_ntfs_64k_and_cleared_at_the_end() -> None:
    ex = ScriptedWindows({"Get-Disk | ForEach-Object": lambda _s: (0, json.dumps(DISKS)),
                          "New-Partition": lambda _s: (0, "F\n")})
    prepared = _preparer(ex).prepare(parse_target({"lun": 0}), writes=True)
    assert prepared.directory == "F:/diskbench" and prepared.devices == ["\\\\.\\PhysicalDrive2"]
    formatting = next(s for s in ex.scripts if "Format-Volume" in s)
    assert "-Number 2" in formatting and "-AllocationUnitSize 65536" in formatting and "NTFS" in formatting
    prepared.release()
    assert "Clear-Disk -Number 2 -RemoveData" in ex.scripts[-1]


def test_a_disk_with_partitions_is_refused_unless_named() -> None:
    ex = ScriptedWindows({"Get-Disk | ForEach-Object": lambda _s: (0, json.dumps(DISKS))})
    with pytest.raises(SafetyError, match=r"refusing to write to \\\\.\\PhysicalDrive3: it has 1 partition"):
        _preparer(ex).prepare(parse_target({"lun": 1}), writes=True)
    assert not any("Format-Volume" in s or "Initialize-Disk" in s for s in ex.scripts)
    ex = ScriptedWindows({"Get-Disk | ForEach-Object": lambda _s: (0, json.dumps(DISKS)),
                          "New-Partition": lambda _s: (0, "G\n")})
    assert _preparer(ex, ["lun:1"]).prepare(parse_target({"lun": 1}), writes=True).directory == "G:/diskbench"


def test_several_luns_become_one_storage_spaces_simple_volume() -> None:
    disks = [*DISKS[:2], {**DISKS[2], "style": "RAW", "partitions": 0}]
    ex = ScriptedWindows({"Get-Disk | ForEach-Object": lambda _s: (0, json.dumps(disks)),
                          "New-VirtualDisk": lambda _s: (0, "7\n"), "New-Partition": lambda _s: (0, "H\n")})
    prepared = _preparer(ex).prepare(parse_target({"luns": [0, 1]}), writes=True)
    pool = next(s for s in ex.scripts if "New-VirtualDisk" in s)
    assert "-ResiliencySettingName Simple -NumberOfColumns 2 -Interleave 65536" in pool and "@(2,3)" in pool
    assert prepared.directory == "H:/diskbench"
    prepared.release()
    assert "Remove-StoragePool" in ex.scripts[-1]


def test_the_temp_disk_is_d_and_xfs_is_refused() -> None:
    ex = ScriptedWindows({})
    assert _preparer(ex).prepare(parse_target("temp"), writes=True).directory == "D:/diskbench"
    with pytest.raises(Exception, match="formatted NTFS"):
        _preparer(ex).prepare(parse_target({"lun": 0, "fs": "xfs"}), writes=True)
