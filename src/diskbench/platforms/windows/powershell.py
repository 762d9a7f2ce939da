"""PowerShell for driving DiskSpd on Windows hosts (over OpenSSH, whose default shell may be cmd.exe).

Scripts travel as ``powershell -EncodedCommand <base64 of UTF-16LE>``: no quoting survives both
cmd.exe and PowerShell, an encoded command needs none. Inside scripts every value is a
single-quoted literal (:func:`ps_quote`), where PowerShell expands nothing. DiskSpd runs detached
(long warm-ups outlive SSH and load-balancer idle timeouts): a small runner script starts it with
``Start-Process``, its XML going straight to a file, and writes the exit code to another file when it
ends; the caller polls for that file and reads the results (:func:`read_file_script`, base64 so any
bytes survive). The runner itself is created through WMI (``Win32_Process.Create``): Windows OpenSSH
puts a session's processes in a job that is killed when the session ends (Win32-OpenSSH #1195,
#1642), and a process WMI creates is outside that job.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence

POWERSHELL = "powershell"
CMD_LIMIT = 8191  # cmd.exe's longest command line, the tightest limit on the way
# PowerShell also takes the typographic single quotes as quote characters (its tokenizer's
# IsSingleQuote): each of them must be doubled like "'" to stay literal.
_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
_QUOTE_RE = re.compile(f"([{_SINGLE_QUOTES}])")


def ps_quote(value: str) -> str:
    """``value`` as a PowerShell single-quoted literal: nothing in it is expanded ($, `, newlines)."""
    if "\x00" in value:
        raise ValueError("a NUL character cannot be passed to PowerShell")
    return "'" + _QUOTE_RE.sub(r"\1\1", value) + "'"


def encoded_command(script: str) -> list[str]:
    """argv that runs ``script`` in Windows PowerShell without any quoting problem."""
    encoded = base64.b64encode(script.encode("utf-16-le")).decode("ascii")
    argv = [POWERSHELL, "-NoProfile", "-NonInteractive", "-EncodedCommand", encoded]
    if len(" ".join(argv)) > CMD_LIMIT:
        raise ValueError(f"the encoded script is longer than cmd.exe's {CMD_LIMIT}-character command line; "
                         "write it to a file on the host first")
    return argv


def windows_arg(arg: str) -> str:
    """One argument quoted for a Windows command line (the rules of CommandLineToArgvW and the CRT)."""
    if arg and not re.search(r'[\s"]', arg):
        return arg
    out, backslashes = ['"'], 0
    for ch in arg:
        if ch == "\\":
            backslashes += 1
            continue
        out.append("\\" * (backslashes * 2 + 1 if ch == '"' else backslashes))
        out.append(ch)
        backslashes = 0
    out.append("\\" * (backslashes * 2) + '"')
    return "".join(out)


def windows_command_line(argv: Sequence[str]) -> str:
    return " ".join(windows_arg(a) for a in argv)


def _runner(argv: Sequence[str], stdout_path: str, stderr_path: str, exit_code_path: str,
            workdir: str | None) -> str:
    """The script that waits for DiskSpd and records its exit code (255: it could not be started)."""
    where = f" -WorkingDirectory {ps_quote(workdir)}" if workdir else ""
    rc_tmp = exit_code_path + ".tmp"
    return "\n".join([
        "$rc = 255",
        "try {",
        f"  $p = Start-Process -FilePath {ps_quote(argv[0])} -ArgumentList {ps_quote(windows_command_line(argv[1:]))}"
        f" -RedirectStandardOutput {ps_quote(stdout_path)} -RedirectStandardError {ps_quote(stderr_path)}"
        f"{where} -NoNewWindow -Wait -PassThru",
        "  $rc = $p.ExitCode",
        "} catch {",
        f"  Set-Content -LiteralPath {ps_quote(stderr_path + '.launch')} -Value $_.Exception.Message",
        "}",
        f"Set-Content -LiteralPath {ps_quote(rc_tmp)} -Value $rc -Encoding Ascii",
        f"Move-Item -LiteralPath {ps_quote(rc_tmp)} -Destination {ps_quote(exit_code_path)} -Force",
    ])


def start_detached_script(argv: Sequence[str], *, stdout_path: str, stderr_path: str, exit_code_path: str,
                          runner_path: str, workdir: str | None = None) -> str:
    """Script that starts ``argv`` (DiskSpd) detached from the SSH session and prints the runner's process id.

    DiskSpd's stdout (its XML) goes to ``stdout_path`` byte for byte, stderr to ``stderr_path``;
    ``exit_code_path`` appears (atomically) with the exit code once DiskSpd has ended. The runner
    script is written to ``runner_path``. Use absolute Windows paths.
    """
    if not argv:
        raise ValueError("nothing to start")
    runner = _runner(argv, stdout_path, stderr_path, exit_code_path, workdir)
    line = windows_command_line(["powershell.exe", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass",
                                 "-File", runner_path])
    return "\n".join([
        "$ErrorActionPreference = 'Stop'",
        f"Remove-Item -LiteralPath {ps_quote(exit_code_path)} -Force -ErrorAction SilentlyContinue",
        f"Set-Content -LiteralPath {ps_quote(runner_path)} -Value {ps_quote(runner)} -Encoding UTF8",
        "$r = Invoke-CimMethod -ClassName Win32_Process -MethodName Create"
        f" -Arguments @{{CommandLine = {ps_quote(line)}}}",
        "if ($r.ReturnValue -ne 0) { throw \"Win32_Process.Create failed with $($r.ReturnValue)\" }",
        "$r.ProcessId",
    ])


def read_file_script(path: str) -> str:
    """Script that prints the file's bytes as base64 (see :func:`decode_read_output`)."""
    return ("$ErrorActionPreference = 'Stop'\n"
            f"[Convert]::ToBase64String([IO.File]::ReadAllBytes({ps_quote(path)}))")


def decode_read_output(stdout: str) -> bytes:
    """The file's bytes from what :func:`read_file_script` printed (CRLF and padding tolerated)."""
    return base64.b64decode("".join(stdout.split()), validate=True)


def path_exists_script(path: str) -> str:
    """Script that prints ``yes`` if ``path`` exists (taken literally: [ ] * are not wildcards), else ``no``."""
    return f"if (Test-Path -LiteralPath {ps_quote(path)}) {{ 'yes' }} else {{ 'no' }}"
