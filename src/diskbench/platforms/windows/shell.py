"""What an executor sends to a Windows host (OpenSSH): PowerShell, always as ``-EncodedCommand``.

Windows OpenSSH hands a command line to cmd.exe; every script goes as UTF-16LE base64 through
``powershell -NoProfile -NonInteractive -EncodedCommand``, so no quoting rule of cmd.exe or
PowerShell can break it. A long command runs detached from the SSH session (Windows OpenSSH
ends a session's child processes with it): a runner started through WMI waits for the program
and writes its exit code atomically, exactly the file protocol the POSIX shell uses
(stdout.txt, stderr.txt, exit_code), so a dropped connection neither stops nor loses a run.

Nothing here has run on a real Windows host in diskbench's tests (there is none): the scripts
are checked by decoding them and by their structure, and the README says so.
"""

from __future__ import annotations

from collections.abc import Callable

from ..base import Shell
from .powershell import encoded_command, ps_quote, start_detached_script, windows_command_line


def script(text: str) -> str:
    """A command line that runs the PowerShell ``text`` (exit code: ``$LASTEXITCODE`` or 0/1)."""
    return windows_command_line(encoded_command(text))


def call(argv: list[str]) -> str:
    """PowerShell that runs ``argv`` (the program's exit code becomes the script's)."""
    return "& " + " ".join(ps_quote(a) for a in argv) + "\nexit $LASTEXITCODE"


class PowerShellShell(Shell):
    def join(self, argv: list[str]) -> str:
        if argv and argv[0].lower() in ("powershell", "powershell.exe"):
            return windows_command_line(argv)  # already a PowerShell invocation
        return script(call(argv))

    def quote(self, text: str) -> str:
        return ps_quote(text)

    def privileged(self, cmd: str, *, sudo: bool, user: str) -> str:
        return cmd  # diskbench logs in as an administrator on Windows: there is no sudo

    def which(self, program: str) -> str:
        return script(f"$c = Get-Command {ps_quote(program)} -ErrorAction SilentlyContinue\n"
                      "if ($c) { $c.Source } else { exit 1 }")

    def start_detached(self, argv: list[str], work: str, wrap: Callable[[list[str]], str]) -> str:
        folder = work.replace("/", "\\")
        body = start_detached_script(argv, stdout_path=f"{folder}\\stdout.txt", stderr_path=f"{folder}\\stderr.txt",
                                     exit_code_path=f"{folder}\\exit_code", runner_path=f"{folder}\\runner.ps1",
                                     workdir=folder)
        return f"$runner = & {{\n{body}\n}}\n[Console]::Error.WriteLine(\"PID $runner\")\n$p = $runner\n"

    def follow(self, work: str, pid: str | None, start: str, received: int) -> str:
        folder = work.replace("/", "\\")
        head = f"$p = {int(pid)}\n" if pid else start
        out, rc = ps_quote(folder + "\\stdout.txt"), ps_quote(folder + "\\exit_code")
        return script(head + f"""
$out = {out}; $rc = {rc}; $offset = {received}
$stdout = [Console]::OpenStandardOutput(); $buf = New-Object byte[] 65536
function Drain {{
  if (-not (Test-Path -LiteralPath $out)) {{ return }}
  $fs = [IO.File]::Open($out, 'Open', 'Read', 'ReadWrite')
  try {{
    [void]$fs.Seek($script:offset, 'Begin')
    while (($n = $fs.Read($buf, 0, $buf.Length)) -gt 0) {{ $stdout.Write($buf, 0, $n); $script:offset += $n }}
    $stdout.Flush()
  }} finally {{ $fs.Close() }}
}}
while (-not (Test-Path -LiteralPath $rc)) {{
  Drain
  if (-not (Get-Process -Id $p -ErrorAction SilentlyContinue) -and -not (Test-Path -LiteralPath $rc)) {{ break }}
  Start-Sleep -Milliseconds 200
}}
Drain
$code = if (Test-Path -LiteralPath $rc) {{ (Get-Content -LiteralPath $rc -Raw).Trim() }} else {{ '' }}
[Console]::Error.WriteLine("RC $code")
""")

    def stop(self, pid: str, wrap: Callable[[list[str]], str]) -> str:
        # DiskSpd writes no partial results: stop the runner and its children at once.
        return script(f"taskkill /PID {int(pid)} /T /F | Out-Null")

    def write_file(self, path: str) -> str:
        target = path.replace("/", "\\")
        return script(f"""$path = {ps_quote(target)}
New-Item -ItemType Directory -Force -Path (Split-Path -Parent $path) | Out-Null
$in = [Console]::OpenStandardInput(); $fs = [IO.File]::Create($path)
try {{ $in.CopyTo($fs) }} finally {{ $fs.Close() }}""")

    def read_file(self, path: str) -> str:
        target = path.replace("/", "\\")
        return script(f"$path = {ps_quote(target)}\nif (-not (Test-Path -LiteralPath $path)) {{ exit 1 }}\n"
                      "[Convert]::ToBase64String([IO.File]::ReadAllBytes($path))")

    def make_workspace(self) -> str:
        """A new folder in the login user's own %TEMP% (private to that user), named at random."""
        return script("$d = Join-Path $env:TEMP ('diskbench-' + [guid]::NewGuid().ToString('N'))\n"
                      "New-Item -ItemType Directory -Path $d -ErrorAction Stop | Out-Null\n"
                      "Write-Output ($d -replace '\\\\', '/')")
