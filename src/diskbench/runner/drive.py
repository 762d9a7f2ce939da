"""How a unit's engine is driven: the questions the unit pipeline asks, whoever answers them.

A unit runs on one machine (the engine on that machine's executor) or on a client group (the
engine's multi-host mode, driven from here); ``pipeline.run_unit`` asks both the same questions
in the same order (render, measure, results), and attributes and stores what they answer in
the same way. A drive answers from what its part prepared; it never records, counts or shows.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..attribution.attributor import Attributor
from ..engines.base import Engine, Place
from ..model import GroupResult
from ..plan import Unit
from .progress import JobTracker

if TYPE_CHECKING:
    from .knee import Kept, Searched, Step


@dataclass
class Share:
    """Results of one host of a unit, or the merge of all its hosts, and how to attribute them."""

    host: str  # the 'host' of the stored rows: a machine, a client, or the client group
    groups: list[GroupResult]
    attributor: Attributor | None  # None: stored without a bound (a merge the engine made of sections)
    places: list[Place] = field(default_factory=list)
    whole: bool = False  # rows named after the unit (a merge of its sections), not after each job


@dataclass
class Outcome:
    """What a finished unit gave: its results by host, the ones its summary line shows, and why
    it failed (None: it did not)."""

    shares: list[Share]
    shown: list[GroupResult]
    message: str | None


class Drive(ABC):
    """One unit's engine, where the unit runs."""

    engine: Engine
    version: str | None  # the engine's version where it runs (for the testbed key)

    @abstractmethod
    def label(self, job: Unit) -> str:
        """How progress lines name the unit."""

    @abstractmethod
    def render(self, job: Unit, art: Path) -> str:
        """Write the unit's job file(s) into ``art``; the text recorded with the unit."""

    def facts(self) -> dict[str, Any]:
        """What the unit's target is (file system, disks), recorded with the unit."""
        return {}

    @abstractmethod
    def prepare(self, job: Unit, art: Path, label: str) -> None:
        """Passes before the measured run (lay out, precondition, warm up, drain), if any."""

    @abstractmethod
    def measure(self, job: Unit, rendered: str, art: Path, tracker: JobTracker) -> int:
        """The measured run; its exit code. Every file it writes lands in ``art``."""

    def knee(self, job: Unit, art: Path, tracker: JobTracker, record: Callable[[Step], None],
             kept: dict[int, Kept]) -> Searched:
        """``iodepth: auto``: the knee search's steps in place of the measured run, each handed to
        ``record`` as it ends (``kept``: the steps an earlier attempt stored, taken instead of measured);
        ``results`` then answers with the knee's step. Only where a unit runs on one machine (the plan
        refuses it on a client group)."""
        from ..errors import ExecutionError

        raise ExecutionError(f"{self.label(job)}: iodepth: auto runs on one machine, not here")

    @abstractmethod
    def results(self, job: Unit, art: Path, rc: int) -> Outcome:
        """The measured run's output as results by host, and why the unit failed."""

    def kept(self, art: Path) -> None:  # noqa: B027 - optional hook
        """After the results are committed: what to do with the raw output (default: leave it)."""
