"""One shell per connection: framing of stdout, stderr and exit codes, and how few sessions a run
opens, counted by the lab host's own sshd (LogLevel VERBOSE: one `Starting session` each)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from diskbench.errors import ExecutionError
from diskbench.executors.hostkeys import HostKeyTrust
from diskbench.executors.ssh import SSHExecutor
from diskbench.providers.static import parse_destination

from ..conftest import needs_fio
from ..lab import Lab, LabHost


def _executor(lab: Lab, host: LabHost) -> SSHExecutor:
    model = parse_destination(host.destination, key_file=str(lab.user_key))
    return SSHExecutor(model, HostKeyTrust(known_hosts=str(lab.known_hosts))).connect()


def test_commands_share_one_session(lab: Lab, tmp_path: Path) -> None:
    host = lab.add_host()
    base = host.auth_log().count("Starting session")
    ex = _executor(lab, host)
    try:
        out = ex.shell("printf 'no newline'; echo oops >&2; exit 3")
        assert (out.returncode, out.stdout, out.stderr) == (3, "no newline", "oops\n")
        assert ex.run(["cat"]).stdout == ""  # stdin is closed: nothing can eat the framing
        assert ex.run(["sh", "-c", "printf 'a\\n\\n'"]).stdout == "a\n\n"
        big = "x" * 300_000 + "\n"
        ex.write_text("/tmp/diskbench-session-test/sub/f.txt", big)
        assert ex.fetch("/tmp/diskbench-session-test/sub/f.txt", tmp_path / "f.txt")
        assert (tmp_path / "f.txt").read_text() == big
        assert not ex.fetch("/tmp/diskbench-session-test/missing", tmp_path / "g.txt")
        ex.run(["rm", "-rf", "/tmp/diskbench-session-test"])
        assert ex.channels == 1
    finally:
        ex.close()
    assert host.auth_log().count("Starting session") - base == 1


def test_many_commands_go_up_at_once_and_come_back_in_order(lab: Lab, tmp_path: Path) -> None:
    host = lab.add_host()
    ex = _executor(lab, host)
    try:
        outs = ex.run_many([["echo", "one"], ["sh", "-c", "echo bad >&2; exit 4"], ["printf", "three"],
                            ["sh", "-c", "printf 'x%.0s' $(seq 100000)"]])
        assert [(o.returncode, o.stdout, o.stderr) for o in outs[:3]] == [
            (0, "one\n", ""), (4, "", "bad\n"), (0, "three", "")]
        assert outs[3].stdout == "x" * 100_000
        ex.write_text("/tmp/diskbench-many-test/a.txt", "a\n")
        ex.write_text("/tmp/diskbench-many-test/b.txt", "b" * 70_000)
        got = ex.fetch_many([("/tmp/diskbench-many-test/a.txt", tmp_path / "a"),
                             ("/tmp/diskbench-many-test/missing", tmp_path / "m"),
                             ("/tmp/diskbench-many-test/b.txt", tmp_path / "b")])
        assert got == [True, False, True]
        assert (tmp_path / "a").read_text() == "a\n" and (tmp_path / "b").read_text() == "b" * 70_000
        ex.run(["rm", "-rf", "/tmp/diskbench-many-test"])
        assert ex.channels == 1
    finally:
        ex.close()


def test_a_long_command_streams_through_the_session(lab: Lab, tmp_path: Path) -> None:
    """fio is started and followed through the session shell: its stdout arrives as it is written,
    its exit code and stderr are kept, and no second session is opened."""
    host = lab.add_host()
    base = host.auth_log().count("Starting session")
    ex = _executor(lab, host)
    seen: list[tuple[float, str]] = []
    try:
        work = "/tmp/diskbench-stream-test"
        ex.run(["mkdir", "-p", work])
        rc = ex.stream(["sh", "-c", "echo first; sleep 1; echo second; echo oops >&2; exit 3"],
                       on_output=lambda text: seen.append((time.monotonic(), text)), timeout=30,
                       stdout_path=tmp_path / "out", stderr_path=tmp_path / "err", workdir=work)
        assert rc == 3
        assert (tmp_path / "out").read_text() == "first\nsecond\n"
        assert (tmp_path / "err").read_text() == "oops\n"
        assert "".join(t for _, t in seen) == "first\nsecond\n"
        assert seen[-1][0] - seen[0][0] > 0.5  # "first" came before the sleep ended
        ex.run(["rm", "-rf", work])
        assert ex.channels == 1
    finally:
        ex.close()
    assert host.auth_log().count("Starting session") - base == 1


def test_a_hung_command_times_out_and_the_next_one_works(lab: Lab) -> None:
    host = lab.add_host()
    ex = _executor(lab, host)
    try:
        with pytest.raises(ExecutionError):
            ex.shell("sleep 30", timeout=1)
        assert ex.run(["echo", "again"]).stdout == "again\n"
    finally:
        ex.close()


@needs_fio
def test_one_job_run_opens_few_sessions(lab: Lab, db: Path, tiny_profile: Path) -> None:
    from ..conftest import diskbench

    host = lab.add_host()
    base = host.auth_log().count("Starting session")
    out = diskbench("run", "--profile", str(tiny_profile), "--workload", "rr",
                    "--host", host.destination, "--key", str(lab.user_key),
                    "--known-hosts", str(lab.known_hosts), db=db)
    assert out.returncode == 0, out.stderr
    assert host.auth_log().count("Starting session") - base == 1  # facts, fio, outputs: one shell
