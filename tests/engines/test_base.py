"""An engine run that did not end by itself, told apart with real fio: stopped by diskbench's own timeout
(the executor's watchdog: ``TIMED_OUT``), or killed from outside (SIGKILL to its process by its id, as
the kernel's OOM killer or a user sends it), which names the signal and points at dmesg instead of
reading as a timeout. fio runs the ``null`` engine (no data file), time-based, far longer than the test
lets it."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from diskbench import registry
from diskbench.engines.base import _signal_of
from diskbench.executors.base import TIMED_OUT
from diskbench.executors.local import LocalExecutor

from ..conftest import needs_fio
from ..interrupting import fio_in, until

JOB = "[long]\nioengine=null\nsize=1M\nrw=randread\nbs=4k\ntime_based=1\nruntime=60\nrate_iops=1000\n"


def _run(art: Path, timeout: float) -> int:
    """The job through the local executor, as a unit's measured run goes: fio's command, its output file."""
    engine = registry.engines.get("fio")
    (art / "by-hand.fio").write_text(JOB)
    return LocalExecutor().stream(engine.command(str(art / "by-hand.fio"), str(art / engine.output_name)),
                                  on_output=lambda _text: None, timeout=timeout, stdout_path=art / "stdout.txt",
                                  stderr_path=art / "stderr.txt", workdir=str(art))


@needs_fio
def test_diskbenchs_own_timeout_says_it_stopped_the_engine(tmp_path: Path) -> None:
    rc = _run(tmp_path, timeout=1.0)
    assert rc == TIMED_OUT
    _groups, message = registry.engines.get("fio").outcome(tmp_path, rc)
    # the watchdog's SIGINT lets fio write its partial figures, which it says are partial: diskbench says
    # first that it stopped fio
    assert message is not None and message.startswith(
        "fio did not finish in time and was stopped by diskbench's timeout (exit 124); fio was stopped by signal 2")
    assert "killed" not in message and "dmesg" not in message
    assert not fio_in(tmp_path)


@needs_fio
def test_a_kill_from_outside_names_the_signal_and_not_a_timeout(tmp_path: Path) -> None:
    got: list[int] = []
    runs = threading.Thread(target=lambda: got.append(_run(tmp_path, timeout=60.0)))
    runs.start()
    try:
        until(lambda: bool(fio_in(tmp_path)), 30, "fio never started")
        for pid in fio_in(tmp_path):  # this test's own fio, by its id
            os.kill(pid, signal.SIGKILL)
    finally:
        runs.join(timeout=30)
    assert got == [-9]
    _groups, message = registry.engines.get("fio").outcome(tmp_path, got[0])
    assert message == ("fio was killed by SIGKILL (signal 9) from outside diskbench, exit -9, not by diskbench's "
                       "timeout (check dmesg on the host: the kernel's OOM killer logs 'Killed process' there)")


def test_an_exit_code_names_a_signal_only_when_a_signal_gave_it() -> None:
    """-N from a local process, 128+N from the SSH host's shell; fio's own exits (1; 128 after SIGINT) and
    diskbench's timeout are none."""
    assert [_signal_of(rc) for rc in (-9, 137, -11, 139)] == [9, 9, 11, 11]
    assert [_signal_of(rc) for rc in (0, 1, 128, TIMED_OUT, 255)] == [None] * 5
