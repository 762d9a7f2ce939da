"""Running a plan: the runner, its options, and what it reports as it goes."""

from __future__ import annotations

from ..errors import Interrupted
from .options import RunOptions, RunOutcome
from .runner import Runner

__all__ = ["Interrupted", "RunOptions", "RunOutcome", "Runner"]
