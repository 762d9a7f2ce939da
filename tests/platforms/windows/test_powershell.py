"""PowerShell encoding and quoting, checked against PowerShell's and Windows' own tokenizing rules.

There is no PowerShell on the test machines; the readers below follow PowerShell's language
specification (single-quoted strings: a quote character is escaped by doubling it, and the four
typographic single quotes count as quote characters) and CommandLineToArgvW's rules.
"""

from __future__ import annotations

import base64

import pytest

from diskbench.platforms.windows.powershell import (
    CMD_LIMIT,
    decode_read_output,
    encoded_command,
    path_exists_script,
    ps_quote,
    read_file_script,
    start_detached_script,
    windows_arg,
    windows_command_line,
)

PS_QUOTES = "'\u2018\u2019\u201a\u201b"
HOSTILE = [
    "", "plain", "it's", "''", "'; Remove-Item C:\\ -Recurse; '", "$env:PATH", "$(Get-Date)", "`n`t`$",
    "line1\nline2\r\nline3", "tab\there", "\u2018smart\u2019 \u201aquotes\u201b", "naïve ünïcödé 日本語 🚀",
    "C:\\Program Files\\DiskSpd\\diskspd.exe", "\"double\" quotes", "a\\\\\"b", "trailing\\", "@{a=1}; & calc",
]


def ps_single_quoted(text: str) -> tuple[str, str]:
    """(value, rest) of the single-quoted literal at the start of ``text``, read as PowerShell does."""
    assert text[0] in PS_QUOTES
    out, i = [], 1
    while i < len(text):
        ch = text[i]
        if ch in PS_QUOTES:
            if i + 1 < len(text) and text[i + 1] in PS_QUOTES:
                out.append(ch)
                i += 2
                continue
            return "".join(out), text[i + 1:]
        out.append(ch)
        i += 1
    raise AssertionError("unterminated string")


def argv_from_command_line(line: str) -> list[str]:
    """CommandLineToArgvW (post-2008 CRT rules) for arguments after the program name."""
    args, cur, in_quotes, have, i = [], [], False, False, 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            n = 0
            while i < len(line) and line[i] == "\\":
                n, i = n + 1, i + 1
            if i < len(line) and line[i] == '"':
                cur.append("\\" * (n // 2))
                if n % 2:
                    cur.append('"')
                    i += 1
            else:
                cur.append("\\" * n)
            have = True
            continue
        if ch == '"':
            if in_quotes and i + 1 < len(line) and line[i + 1] == '"':
                cur.append('"')
                i += 2
                continue
            in_quotes, have = not in_quotes, True
        elif ch in " \t" and not in_quotes:
            if have:
                args.append("".join(cur))
                cur, have = [], False
        else:
            cur.append(ch)
            have = True
        i += 1
    if have:
        args.append("".join(cur))
    return args


@pytest.mark.parametrize("value", HOSTILE)
def test_ps_quote_round_trips_hostile_strings(value: str) -> None:
    quoted = ps_quote(value)
    assert quoted[0] == "'" and quoted[-1] == "'"
    assert ps_single_quoted(quoted + " rest") == (value, " rest")


def test_ps_quote_refuses_nul() -> None:
    with pytest.raises(ValueError):
        ps_quote("a\x00b")


@pytest.mark.parametrize("script", ["Get-Date", "Write-Output " + ps_quote("naïve 'x' $y `z\n🚀"), "x" * 1000])
def test_encoded_command_round_trip(script: str) -> None:
    argv = encoded_command(script)
    assert argv[:4] == ["powershell", "-NoProfile", "-NonInteractive", "-EncodedCommand"]
    assert base64.b64decode(argv[4], validate=True).decode("utf-16-le") == script
    assert all(c.isalnum() or c in "+/=" for c in argv[4])  # nothing cmd.exe or a shell would interpret


def test_encoded_command_refuses_what_cmd_cannot_carry() -> None:
    with pytest.raises(ValueError, match="8191"):
        encoded_command("x" * CMD_LIMIT)


@pytest.mark.parametrize("value", [v for v in HOSTILE if "\n" not in v])
def test_windows_arguments_survive_commandlinetoargvw(value: str) -> None:
    assert argv_from_command_line(windows_arg(value)) == [value]
    argv = ["-b4K", value, "-XC:\\a b\\p.xml", "x"]
    assert argv_from_command_line(windows_command_line(argv)) == argv


def _literals(script: str) -> list[str]:
    """Every single-quoted literal in a script, in order."""
    out, i = [], 0
    while i < len(script):
        if script[i] in PS_QUOTES:
            value, rest = ps_single_quoted(script[i:])
            out.append(value)
            i = len(script) - len(rest)
        else:
            i += 1
    return out


def test_start_detached_script_carries_every_value_literally() -> None:
    argv = ["C:\\Tools\\diskspd.exe", "-Rxml", "-XC:\\bench it's\\p.xml"]
    script = start_detached_script(argv, stdout_path="C:\\r\\out $x.xml", stderr_path="C:\\r\\err.txt",
                                   exit_code_path="C:\\r\\rc.txt", runner_path="C:\\r\\run [1].ps1",
                                   workdir="C:\\r")
    literals = _literals(script)
    assert "C:\\r\\rc.txt" in literals and "C:\\r\\run [1].ps1" in literals
    runner = next(v for v in literals if v.startswith("$rc = 255"))
    inner = _literals(runner)
    assert inner[0] == argv[0]
    assert argv_from_command_line(inner[1]) == argv[1:]
    assert {"C:\\r\\out $x.xml", "C:\\r\\err.txt", "C:\\r\\rc.txt", "C:\\r\\rc.txt.tmp", "C:\\r"} <= set(inner)
    assert "-RedirectStandardOutput" in runner and "-Wait" in runner and "Move-Item" in runner
    launch = next(v for v in literals if v.startswith("powershell.exe"))
    assert argv_from_command_line(launch)[-2:] == ["-File", "C:\\r\\run [1].ps1"]
    assert "Win32_Process -MethodName Create" in script and script.rstrip().endswith("$r.ProcessId")
    encoded_command(script)  # short enough for cmd.exe


def test_read_and_exists_scripts() -> None:
    script = read_file_script("C:\\r\\out 'x'.xml")
    assert _literals(script)[-1] == "C:\\r\\out 'x'.xml" and "ReadAllBytes" in script
    data = "<Results>\r\n naïve\r\n</Results>".encode("utf-16")
    printed = base64.b64encode(data).decode("ascii")
    assert decode_read_output(printed[:10] + "\r\n" + printed[10:] + "\r\n") == data
    exists = path_exists_script("C:\\a [b]\\*.xml")
    assert _literals(exists)[0] == "C:\\a [b]\\*.xml" and "-LiteralPath" in exists
