"""A workload's ``iodepth: auto`` and its ``knee:`` block: find the knee of the latency-vs-load curve.

``iodepth: auto`` runs the workload at queue depth 1, 2, 4, ... (each step one engine run, stopped
adaptively when the workload has a ``stop:``) until its IOPS stop growing, its p99 passes
``p99_under`` or the depth reaches ``max_iodepth``, then bisects around the knee; what the knee is
and how the search goes is ``attribution/knee.py``. The block tunes it::

    iodepth: auto
    knee: {min_iodepth: 1, max_iodepth: 256, gain: 10%, p99_under: 2ms, bisect: 1}

``knee:`` belongs to a workload with ``iodepth: auto`` (never to ``defaults:`` or a section), and
``iodepth: auto`` alone takes every default.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..attribution.knee import KneeRule, steps_at_most
from ..text import shown
from ..units import parse_duration
from .block import read_block

GAIN = "10%"
MAX_IODEPTH = 256
MAX_LATENCY_S = 3600.0


class Knee(BaseModel):
    """How ``iodepth: auto`` searches (see the module's docstring)."""

    model_config = ConfigDict(extra="forbid")

    min_iodepth: int = Field(1, ge=1, le=65536, description="the first queue depth the search measures")
    max_iodepth: int = Field(MAX_IODEPTH, ge=1, le=65536, description="the deepest queue the search measures")
    gain: str = Field(GAIN, description="the IOPS a doubling of the queue depth must add to count as growth, "
                      "e.g. 10%: below it the curve has reached its plateau")
    p99_under: str | None = Field(None, description="a p99 latency limit, e.g. 2ms or 500us: the search also "
                                  "reports the highest IOPS whose p99 is under it, and doubles no further once "
                                  "the p99 passed it")
    bisect: int = Field(1, ge=0, le=4, description="how many times to halve the interval around the knee (and "
                        "around the p99 limit) after the doubling: 0 doubles only")

    @field_validator("gain", mode="before")
    @classmethod
    def _gain(cls, v: Any) -> str:
        text = str(v).strip()
        try:
            number = float(text.removesuffix("%"))
        except ValueError:
            raise ValueError(f"{shown(v)} is not a percentage; give e.g. gain: {GAIN}") from None
        if not 1 <= number <= 100:
            raise ValueError(f"{shown(v)}: give a percentage from 1% to 100%")
        return f"{number:g}%"

    @field_validator("p99_under", mode="before")
    @classmethod
    def _latency(cls, v: Any) -> Any:
        if v is None:
            return v
        if isinstance(v, bool):
            raise ValueError(f"{shown(v)} is not a latency; give e.g. p99_under: 2ms")
        try:
            seconds = parse_duration(v)
        except ValueError:
            raise ValueError(f"{shown(v)} is not a latency; give e.g. p99_under: 2ms or 500us") from None
        if not 1e-6 <= seconds <= MAX_LATENCY_S:
            raise ValueError(f"{shown(v)}: give a latency from 1us to 1h, e.g. 2ms")
        return str(v)

    @model_validator(mode="after")
    def _range(self) -> Knee:
        if self.max_iodepth <= self.min_iodepth:
            raise ValueError(f"max_iodepth ({self.max_iodepth}) must be deeper than min_iodepth ({self.min_iodepth})")
        return self

    def rule(self) -> KneeRule:
        """The search's settings in numbers (``attribution/knee.py``)."""
        return KneeRule(min_depth=self.min_iodepth, max_depth=self.max_iodepth,
                        gain=float(self.gain.removesuffix("%")) / 100,
                        p99_under_us=parse_duration(self.p99_under) * 1e6 if self.p99_under is not None else None,
                        bisect=self.bisect)

    @property
    def steps(self) -> int:
        """The most engine runs the search may take (``plan`` counts them all)."""
        return steps_at_most(self.rule())


def step_name(workload: str, depth: int | str) -> str:
    """The name of a search's step at ``depth``: what an ``iodepth`` sweep names its job at that depth, so
    reports draw the steps as a sweep's curve (``randread-4k-iodepth8``)."""
    return f"{workload}-iodepth{depth}"


def step_clash(names: list[tuple[int, str, Knee | None]]) -> tuple[int, str] | None:
    """The first name a knee search's steps would share, as (the workload's index, the problem); None when
    none. ``names`` are the profile's workloads as they expand (index, name once swept, its knee).

    Each step is stored as a job named ``step_name(NAME, Q)`` for any depth Q the search may measure
    (every one from ``min_iodepth`` to ``max_iodepth``: a bisection may pick any), and a job's name is
    what resume, reports and the gate match on: a workload of such a name would be one job with the
    step (each replacing the other's results), and so would a second search under the same name."""
    for i, (index, name, own) in enumerate(names):
        for j, (_, owner, knee) in enumerate(names):
            if i == j or knee is None:
                continue
            depth = _step_depth(name, owner)
            if depth is not None and knee.min_iodepth <= depth <= knee.max_iodepth:
                return index, (f"{name!r} is the name of a step of the knee search of workload {owner!r} "
                               f"(iodepth: auto names its steps {step_name(owner, 'Q')}, Q from {knee.min_iodepth} to "
                               f"{knee.max_iodepth}); rename one")
            if name == owner and own is not None and i > j:
                return index, (f"workload {name!r} searches its knee under the same name as another workload "
                               f"(a sweep's value makes it): both searches would name their steps "
                               f"{step_name(owner, 'Q')}; rename one")
    return None


def _step_depth(name: str, owner: str) -> int | None:
    """The depth ``name`` is the step of ``owner`` at (None: it is no such step)."""
    prefix = step_name(owner, "")
    rest = name.removeprefix(prefix)
    if not name.startswith(prefix) or not (rest.isascii() and rest.isdigit()):
        return None
    return int(rest) if str(int(rest)) == rest else None


def knee_value(v: Any) -> Any:
    """``knee: {...}`` read here, so that a wrong key is one error naming it (as ``stop:``)."""
    if isinstance(v, dict):
        return read_block(Knee, v)
    if v is not None and not isinstance(v, Knee):
        raise ValueError(f"{shown(v)}: give a mapping such as {{max_iodepth: 256, p99_under: 2ms}}")
    return v
