"""OpenStack: connect, pre-flight, create a run's server (keypair, security group, volumes), tear down.

Everything a run creates carries its run id (in the name, the server's tag and metadata, the
volumes' metadata), so ``teardown`` and ``find_leftovers`` find it again after a crash. The
openstacksdk is imported inside the functions, so importing this package costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .journal import Journal
    from .preflight import preflight
    from .provision import provision
    from .session import Waits, connect
    from .spec import Created, FlavorInfo, HostKey, Leftover, Problem, Spec, VolumeSpec
    from .teardown import find_leftovers, teardown

# name -> module: imported on first use, so that loading the provider (which every
# `diskbench --help` does, to list provider commands) does not load the cloud layer.
_WHERE = {"Journal": "journal", "preflight": "preflight", "provision": "provision", "Waits": "session",
          "connect": "session", "Created": "spec", "FlavorInfo": "spec", "HostKey": "spec", "Leftover": "spec",
          "Problem": "spec", "Spec": "spec", "VolumeSpec": "spec", "find_leftovers": "teardown",
          "teardown": "teardown"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)


__all__ = ["Created", "FlavorInfo", "HostKey", "Journal", "Leftover", "Problem", "Spec", "VolumeSpec", "Waits",
           "connect", "find_leftovers", "preflight", "provision", "teardown"]
