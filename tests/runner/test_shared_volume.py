"""The run's shared volume as its parts share it: made once for whichever needs it first, measured by
one part at a time in the plan's order, and never two mounts of one NFS server up at once on a host."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import pytest

from diskbench import registry
from diskbench.errors import ExecutionError
from diskbench.plan import Unit
from diskbench.platforms.base import Prepared
from diskbench.profile.targets import NfsTarget
from diskbench.providers.base import RunContext
from diskbench.runner.machine import MachineWork, nfs_server, same_server
from diskbench.runner.options import RunOptions, RunOutcome
from diskbench.runner.progress import NullProgress
from diskbench.runner.recorder import MemoryRecorder
from diskbench.runner.shared_volume import SharedVolume
from diskbench.runner.state import RunState

from ..conftest import plan_of


def test_the_export_is_made_once_for_every_part_that_asks() -> None:
    made: list[int] = []
    gate = threading.Event()

    def make() -> str:
        made.append(1)
        gate.wait(5)  # a volume takes minutes: every other part asks meanwhile
        return "10.213.1.4:/diskbench-abcd1234"

    volume = SharedVolume(make, ["clients", "single"])
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(volume.export())) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    gate.set()
    for t in threads:
        t.join(5)
    assert made == [1] and got == ["10.213.1.4:/diskbench-abcd1234"] * 4


def test_a_failure_to_make_it_is_every_parts_and_nothing_is_made_twice() -> None:
    calls: list[int] = []

    def make() -> str:
        calls.append(1)
        raise ExecutionError("anf: quota")

    volume = SharedVolume(make, ["clients"])
    for _ in range(2):
        with pytest.raises(ExecutionError, match="anf: quota"):
            volume.export()
    assert calls == [1]


def test_parts_take_turns_in_the_plans_order() -> None:
    """The machine that mounts the volume itself waits for the client group, however soon it is ready."""
    volume = SharedVolume(lambda: "x:/y", ["clients", "single"])
    events: list[str] = []
    said: list[str] = []

    def part(name: str, delay: float) -> None:
        time.sleep(delay)
        with volume.turn(name, lambda: False, said.append) as go:
            assert go
            events.append(f"{name} starts")
            time.sleep(0.05)
            events.append(f"{name} ends")

    single = threading.Thread(target=part, args=("single", 0.0))
    group = threading.Thread(target=part, args=("clients", 0.2))
    single.start()
    group.start()
    single.join(5)
    group.join(5)
    assert events == ["clients starts", "clients ends", "single starts", "single ends"]
    assert said == ["single: waiting for clients to finish with the shared volume (one part measures it at a time)"]


def test_a_part_that_ended_before_its_turn_frees_the_next_and_a_stop_ends_the_wait() -> None:
    volume = SharedVolume(lambda: "x:/y", ["clients", "single", "third"])
    volume.done("clients")  # the group failed to connect: the runner says it is done with the volume
    with volume.turn("single", lambda: False, lambda _text: None) as go:
        assert go
    stopped = threading.Event()
    threading.Timer(0.1, stopped.set).start()
    other = SharedVolume(lambda: "x:/y", ["clients", "single"])
    started = time.monotonic()
    with other.turn("single", stopped.is_set, lambda _text: None) as go:
        assert not go  # Ctrl-C while waiting: nothing to measure
    assert time.monotonic() - started < 2
    with other.turn("elsewhere", lambda: False, lambda _text: None) as go:  # a part not on the volume
        assert go


def test_two_mounts_of_one_nfs_server_take_turns_on_a_host() -> None:
    mounted = {"nconnect8": "10.213.1.4", "local": "192.0.2.9"}
    assert same_server(mounted, "no-nconnect", "10.213.1.4", ["no-nconnect"], "m") == ["nconnect8"]
    assert same_server(mounted, "nconnect8", "10.213.1.4", ["nconnect8"], "m") == []  # itself
    assert same_server(mounted, "other", "198.51.100.1", ["other"], "m") == []
    with pytest.raises(ExecutionError, match="no-nconnect and nconnect8 mount the same NFS server"):
        same_server(mounted, "no-nconnect", "10.213.1.4", ["nconnect8", "no-nconnect"], "m")
    assert nfs_server("10.213.1.4:/diskbench-abcd") == "10.213.1.4"
    assert nfs_server("[fd00::4]:/export/a") == "[fd00::4]"


SHARED = """\
name: s
defaults: {rw: randread, runtime: 10s, ramp_time: 0, size: 1G}
workloads:
  - {name: group-r}
  - {name: one, iodepth: [1, 16], targets: [with, without]}
  - {name: flushed, targets: [with], flush_cache: 1G}
hosts:
  - {name: c1, address: 192.0.2.11}
  - name: single
    address: 192.0.2.13
    targets:
      with: {nfs: shared, options: "rw,nconnect=8,hard,vers=3,tcp"}
      without: {nfs: shared, options: "rw,hard,vers=3,tcp"}
    workloads: [one, flushed]
shared:
  target: {nfs: "192.0.2.2:/export"}
  clients: [c1]
"""


class _Line(NullProgress):
    def __init__(self) -> None:
        super().__init__()
        self.said: list[str] = []

    def line(self, text: str) -> None:
        self.said.append(text)


class _Preparer:
    def __init__(self) -> None:
        self.flushed: list[tuple[str | None, int, str]] = []

    def flush_cache(self, where: Prepared, size: int, art: Path, name: str = "flush") -> None:
        self.flushed.append((where.directory, size, name))


def _machine(tmp_path: Path) -> tuple[MachineWork, RunState, list[Unit]]:
    plan = plan_of(SHARED)
    single = [u for u in plan.units if u.machine == "single"]
    run_id = "20261201-120000-abcd"
    prun = registry.providers.get("static").start(RunContext(run_id, tmp_path, lambda _t: None))
    state = RunState(run_id, MemoryRecorder(tmp_path), _Line(), len(plan.units), RunOutcome(run_id, "running"),
                     {"static": prun})
    made: list[str] = []
    state.shared = SharedVolume(lambda: made.append("made") or "192.0.2.2:/export", plan.shared_turns())
    return MachineWork(state, single, plan, RunOptions()), state, single


def test_a_machine_mounts_the_runs_volume_with_its_own_options_in_its_turn(tmp_path: Path) -> None:
    work, state, single = _machine(tmp_path)
    assert state.shared is not None and state.shared.turns == ["clients", "single"]
    resolved = work._resolved(single[0].target)
    assert isinstance(resolved, NfsTarget) and resolved.nfs == "192.0.2.2:/export"
    assert resolved.options == "rw,nconnect=8,hard,vers=3,tcp"  # its own, not the group's
    took: list[bool] = []
    with contextlib.ExitStack() as stack:
        waiting = threading.Thread(target=lambda: took.append(work._take_turn(stack)))
        waiting.start()
        time.sleep(0.3)
        assert waiting.is_alive() and not took  # the group has not finished with the volume
        state.shared.done("clients")
        waiting.join(5)
        assert took == [True] and work._take_turn(stack)  # held, once, until the machine is done
    assert "single: waiting for clients to finish with the shared volume" in state.ui.said[0]  # type: ignore[attr-defined]


def test_a_machine_releases_its_other_mount_of_the_server_first_and_flushes_its_targets(tmp_path: Path) -> None:
    work, state, single = _machine(tmp_path)
    released: list[str] = []
    work.prepared = {"with": Prepared(directory="/mnt/a/d", cleanup=[lambda: released.append("with")])}
    work._servers = {"with": "192.0.2.2"}
    work._target_facts = {"/mnt/a/d": {"mount_options": "rw,vers=3,nconnect=8"}}
    without = next(u for u in single if u.target_name == "without")
    work._one_mount_per_server("without", work._resolved(without.target), without)
    assert released == ["with"] and "with" not in work.prepared and work._servers == {"without": "192.0.2.2"}
    assert work._target_facts == {}  # the next mount's options are read again, not the last one's recorded
    assert any("releasing with before mounting without" in s for s in state.ui.said)  # type: ignore[attr-defined]
    flushed = next(u for u in single if u.workload.flush_cache)
    work.prepared = {"with": Prepared(directory="/mnt/a/d")}
    work.preparer = _Preparer()  # type: ignore[assignment]
    work._flush(flushed, tmp_path / "unit")
    assert work.preparer.flushed == [("/mnt/a/d", 1 << 30, "flush")]  # type: ignore[attr-defined]
