"""Linux host facts and a target's filesystem, read from this machine."""

from __future__ import annotations

from diskbench.executors.local import LocalExecutor
from diskbench.platforms.linux.facts import host_facts, target_facts


def test_local_host_facts() -> None:
    facts = host_facts(LocalExecutor())
    assert facts["hostname"] and facts["kernel"] and facts["cpus"] >= 1 and facts["memory_bytes"] > 0


def test_target_facts_of_this_directory(tmp_path: object) -> None:
    facts = target_facts(LocalExecutor(), str(tmp_path))
    assert facts["fstype"] and facts["mountpoint"]
