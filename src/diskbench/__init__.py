"""diskbench: benchmark local and cloud storage with fio, from profile to report."""

from __future__ import annotations

__version__ = "0.1.0"
