"""The POSIX shell an executor speaks to a Linux host: quoting, sudo, detached runs, following.

A long command runs under ``setsid`` with its output, pid and exit code in files on the host,
so a dropped connection neither kills nor loses it; following it is ``tail --pid`` on that
file, which ends the moment the wrapper exits.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from ..base import Shell


class PosixShell(Shell):
    def join(self, argv: list[str]) -> str:
        return shlex.join(argv)

    def quote(self, text: str) -> str:
        return shlex.quote(text)

    def privileged(self, cmd: str, *, sudo: bool, user: str) -> str:
        return "sudo -n " + cmd if sudo and user != "root" else cmd

    def which(self, program: str) -> str:
        return f"command -v {shlex.quote(program)}"

    def start_detached(self, argv: list[str], work: str, wrap: Callable[[list[str]], str]) -> str:
        """Start ``cmd`` detached in ``work`` (files stdout.txt, stderr.txt, pid, exit_code).

        ``wrap`` turns the detached wrapper's argv into a command line (with sudo where the host
        needs it). The wrapper outlives a Ctrl-C sent to its group (trap), so the exit code is
        always written; the pid comes back on stderr as ``PID <n>``.
        """
        inner = (f"trap : INT TERM HUP; echo $$ > pid; {self.join(argv)} > stdout.txt 2> stderr.txt; "
                 "echo $? > exit_code.part; mv exit_code.part exit_code")
        launch = wrap(["setsid", "sh", "-c", inner])
        return (f"cd {shlex.quote(work)} || exit 97; rm -f pid exit_code; ({launch}) >/dev/null 2>&1 </dev/null &\n"
                "i=0; while [ ! -s pid ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done\n"
                "p=$(cat pid 2>/dev/null); echo \"PID $p\" >&2\n")

    def follow(self, work: str, pid: str | None, start: str, received: int) -> str:
        """Stream stdout.txt from byte ``received`` until the wrapper exits, then ``RC <code>``."""
        head = f"cd {shlex.quote(work)} || exit 97; p={pid}" if pid else start
        return (f"{head}\n"
                f"tail -c +{received + 1} -s 0.05 -F --pid=$p stdout.txt 2>/dev/null\n"
                "echo \"RC $(cat exit_code 2>/dev/null)\" >&2\n")

    def stop(self, pid: str, wrap: Callable[[list[str]], str]) -> str:
        """SIGINT first (fio then writes what it has), SIGKILL after 10 s."""
        stop, kill = wrap(["kill", "-INT", "--", f"-{pid}"]), wrap(["kill", "-KILL", "--", f"-{pid}"])
        return (f"{stop}; for i in $(seq 50); do kill -0 {pid} 2>/dev/null || exit 0; sleep 0.2; "
                f"done; {kill}")

    def write_file(self, path: str) -> str:
        folder = shlex.quote(path.rsplit("/", 1)[0] or "/")
        return f"mkdir -p {folder} && cat > {shlex.quote(path)}"

    def read_file(self, path: str) -> str:
        return f"test -e {shlex.quote(path)} && base64 < {shlex.quote(path)}"

    def make_workspace(self) -> str:
        """``mktemp -d`` in /tmp (sticky: nobody else can rename or replace it), then checked: a
        directory, no link, ours, mode 0700; fio then runs as root only job files we wrote."""
        return ('d=$(mktemp -d /tmp/diskbench-XXXXXXXXXX) && [ -d "$d" ] && [ ! -L "$d" ] && [ -O "$d" ] '
                '&& [ "$(stat -c %a "$d")" = 700 ] && printf "%s\\n" "$d"')

    def hold_lock(self, name: str, info: str) -> str:
        """flock(1) on a file in /run/lock (or /tmp), held by a ``cat`` that ends when the SSH
        channel closes: a controller that dies lets go of its targets with its connection."""
        q = shlex.quote
        hold = (f"[ -L \"$0.who\" ] || printf '%s\\n' {q(info)} > \"$0.who\" 2>/dev/null; echo LOCKED; "
                "exec cat >/dev/null")  # (never writes through a link someone else put there)
        return (f"d=/run/lock; [ -w $d ] || d=/tmp; f=$d/diskbench-{q(name)}.lock\n"
                f"flock -n -E 75 \"$f\" sh -c {q(hold)} \"$f\" || "
                "{ r=$?; [ $r = 75 ] && cat \"$f.who\" 2>/dev/null; exit $r; }\n")

    def stop_pidfile(self, pidfile: str) -> list[str]:
        """TERM, up to 5 s for the daemon to go, then KILL; the pid file goes too."""
        f = shlex.quote(pidfile)
        return ["sh", "-c", f"if test -f {f}; then p=$(cat {f}); kill $p; i=0; "
                "while kill -0 $p 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; "
                f"kill -9 $p 2>/dev/null; fi; rm -f {f}"]

    def reached_address(self) -> list[str]:
        """The third of ``$SSH_CONNECTION``'s fields (client address and port, server address and port)."""
        return ["sh", "-c", 'set -- $SSH_CONNECTION; [ $# = 4 ] && printf "%s\\n" "$3"']

    def session(self) -> str:
        # the login shell, which ran every command when each had its own channel (bash's kill
        # takes `--`, dash's does not)
        return 'exec "${SHELL:-/bin/sh}"'

    def framed(self, cmd: str, token: str) -> str:
        """A subshell (an ``exit`` in ``cmd`` ends it, not the session); its stderr goes to the
        session's temp file ($E, removed when the session ends) and follows the marker line."""
        return (f"[ -n \"$E\" ] || {{ E=$(mktemp) && trap 'rm -f \"$E\"' EXIT; }}\n"
                f"(\n{cmd}\n) </dev/null 2>\"$E\"; r=$?\n"
                f"printf '\\n%s %s %s\\n' {token} \"$r\" \"$(wc -c < \"$E\")\"; cat \"$E\"\n")
