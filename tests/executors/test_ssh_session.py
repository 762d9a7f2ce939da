"""One shell per connection: framing of stdout, stderr and exit codes, and how few sessions a run
opens, counted by the lab host's own sshd (LogLevel VERBOSE: one `Starting session` each)."""

from __future__ import annotations

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
    assert host.auth_log().count("Starting session") - base <= 5
