"""diskbench: benchmark local and cloud storage, from profile to report.

The library works without the CLI, a store or a terminal; every command is a function here::

    import diskbench
    profile = diskbench.load_profile("local", overrides={"defaults.runtime": "3s"})
    results = diskbench.run(profile, workloads=["randread-4k"], store=None, progress=None)
    print(results.get("randread-4k", "read").clat_us["p99"])

Names are imported on first use, so ``import diskbench`` (and the CLI's ``--help``) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

__all__ = ["Comparison", "Explanation", "Result", "Results", "__version__", "accept", "cleanup", "compare", "doctor",
           "explain", "gate", "history", "import_file", "load_profile", "open_store", "plan", "profiles", "render",
           "report", "results", "resume", "run", "run_options", "runs"]

if TYPE_CHECKING:
    from .api import (
        Comparison,
        Explanation,
        Result,
        Results,
        accept,
        cleanup,
        compare,
        doctor,
        explain,
        gate,
        history,
        import_file,
        load_profile,
        open_store,
        plan,
        profiles,
        render,
        report,
        results,
        resume,
        run,
        run_options,
        runs,
    )


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'diskbench' has no attribute {name!r}")
