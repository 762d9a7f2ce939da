"""What a run learns of every host before its units: the engines there, and the host's facts.

A machine and each client of a client group are learnt alike: each engine's version (installed
first where the host allows it), the platform's facts and every provider's (a cloud VM says what
it is), recorded under the host's name with each engine's version as ``<engine>_version``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import registry
from ..engines.base import Engine
from ..executors.base import Executor
from ..platforms.base import Platform
from ..profile import Host
from .recorder import Recorder


def learn(store: Recorder, run_id: str, ex: Executor, platform: Platform, engines: Sequence[Engine], *,
          name: str, host: Host | None, line: Callable[[str], None],
          known: Mapping[str, str | None] | None = None) -> tuple[dict[str, Any], dict[str, str | None]]:
    """The host's facts (recorded) and each engine's version there; ``known``: versions already
    asked this run (this machine's, checked before the run was recorded)."""
    facts = platform.host_facts(ex)
    versions: dict[str, str | None] = {}
    for engine in engines:
        version = (known or {}).get(engine.name) or engine.ensure(
            ex, platform, install=host.install_engine if host else False, host=name, line=line)
        versions[engine.name] = facts[f"{engine.name}_version"] = version
    for provider in registry.providers.all():
        facts.update(provider.host_facts(ex))
    store.add_host_facts(run_id, name, facts)
    return facts, versions


def cpus(facts: Mapping[str, Any]) -> int | None:
    """The host's CPU count, when its facts say (the attribution of a CPU-bound result needs it)."""
    found = facts.get("cpus")
    return found if isinstance(found, int) else None
