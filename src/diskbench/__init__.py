"""diskbench: benchmark local and cloud storage, from profile to report.

The library works without the CLI, a store or a terminal::

    import diskbench
    profile = diskbench.load_profile("local", overrides={"defaults.runtime": "3s"})
    results = diskbench.run(profile, workloads=["randread-4k"], store=None, progress=None)
    print(results.get("randread-4k", "read").clat_us["p99"])

Names are imported on first use, so ``import diskbench`` (and the CLI's ``--help``) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Result", "Results", "__version__", "load_profile", "run"]

if TYPE_CHECKING:
    from .api import Result, Results, load_profile, run


def __getattr__(name: str) -> Any:
    if name in ("load_profile", "run", "Results", "Result"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'diskbench' has no attribute {name!r}")
