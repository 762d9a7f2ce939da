"""OpenStack: connect, pre-flight, create a run's server (keypair, security group, volumes), tear down.

Everything a run creates carries its run id (in the name, the server's tag and metadata, the
volumes' metadata), so ``teardown`` and ``find_leftovers`` find it again after a crash. The
openstacksdk is imported inside the functions, so importing this package costs nothing.
"""

from __future__ import annotations

from .journal import Journal
from .preflight import preflight
from .provision import provision
from .session import Waits, connect
from .spec import Created, FlavorInfo, HostKey, Leftover, Problem, Spec, VolumeSpec
from .teardown import find_leftovers, teardown

__all__ = ["Created", "FlavorInfo", "HostKey", "Journal", "Leftover", "Problem", "Spec", "VolumeSpec", "Waits",
           "connect", "find_leftovers", "preflight", "provision", "teardown"]
