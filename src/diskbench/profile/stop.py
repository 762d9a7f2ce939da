"""A workload's ``stop:`` block: end each job once its answer is known (``run --adaptive`` gives the defaults).

``stop: {within: 2%, confidence: 95%, min: 10s, max: 60s}``: the job ends once its mean IOPS, MB/s
and p99 are known within +-2% at 95% confidence and the series shows no trend, never before
``min`` (default 10 s, or the runtime when that is shorter), at the latest at ``max``. ``max`` is
the job's runtime: given here, it replaces the workload's ``runtime``; left out, the runtime is
the maximum. ``p99_within`` asks the p99 its own width (default: ``within``): a tail percentile
rests on the 1% of I/Os above it, so the same width can cost it many times the run a mean needs
(docs/adaptive.md). ``stop: true`` takes ``defaults.stop`` (else every default); ``stop: false`` turns a
``defaults.stop`` off for one workload. How the rule decides is ``attribution/stop_rule.py``; how
the engine is stopped, the engine's (``Engine.live``).

A workload's block is laid over ``defaults.stop`` key by key (``Profile.stop_of``), and a
workload's own setting beats a default: its maximum is the first of its own ``stop.max``, its own
``runtime``, ``defaults.stop.max``, ``defaults.runtime`` and the built-in runtime.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..attribution.stop_rule import StopRule
from ..text import shown
from ..units import MAX_JOB_S, parse_duration
from .block import read_block

WITHIN, CONFIDENCE, MIN = "2%", "95%", "10s"
EXAMPLES = {"within": WITHIN, "p99_within": "5%"}


def _percent(value: Any, key: str, low: float, high: float) -> str:
    """``2%``, ``2`` or ``2.5%`` as text; the bounds are in percent."""
    text = str(value).strip()
    try:
        number = float(text.removesuffix("%"))
    except ValueError:
        raise ValueError(f"{shown(value)} is not a percentage; give e.g. {key}: "
                         f"{EXAMPLES.get(key, CONFIDENCE)}") from None
    if not low <= number <= high:
        raise ValueError(f"{shown(value)}: give a percentage from {low:g}% to {high:g}%")
    return f"{number:g}%"


class Stop(BaseModel):
    """When a job may end before its runtime (see the module's docstring)."""

    model_config = ConfigDict(extra="forbid")

    within: str = Field(WITHIN, description="the +- half-width asked of mean IOPS, MB/s and p99, e.g. 2%")
    p99_within: str | None = Field(None, description="the +- half-width asked of the p99 alone (default: "
                                   "within), e.g. 5%")
    confidence: str = Field(CONFIDENCE, description="the confidence of that interval, e.g. 95%")
    min: str | None = Field(None, description="the shortest a job runs (default 10s, or the runtime when "
                            "shorter), e.g. 20s")
    max: str | None = Field(None, description="the longest a job runs (default: its runtime), e.g. 60s")

    @field_validator("within", mode="before")
    @classmethod
    def _within(cls, v: Any) -> str:
        return _percent(v, "within", 0.1, 50)

    @field_validator("p99_within", mode="before")
    @classmethod
    def _p99_within(cls, v: Any) -> str | None:
        return None if v is None else _percent(v, "p99_within", 0.1, 50)

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, v: Any) -> str:
        return _percent(v, "confidence", 50, 99.9)

    @field_validator("min", "max", mode="before")
    @classmethod
    def _duration(cls, v: Any) -> Any:
        if v is None:
            return v
        try:
            seconds = parse_duration(v)
        except ValueError:
            raise ValueError(f"{shown(v)} is not a duration; give e.g. 10s or 2m") from None
        if not 1 <= seconds <= MAX_JOB_S:
            raise ValueError(f"{shown(v)}: give a duration from 1s to 30 days")
        return str(v)

    def rule(self, runtime_s: float, in_flight: int) -> StopRule:
        """The rule for a job whose runtime (its maximum) is ``runtime_s`` and which keeps ``in_flight``
        I/Os in flight; its first interval is a head (fio's reset leaves its queue there: the
        segments of an engine that cannot stop early have none, ``runner/one_machine.py``)."""
        return StopRule(within=_fraction(self.within), confidence=_fraction(self.confidence),
                        min_s=parse_duration(self.min) if self.min else min(parse_duration(MIN), runtime_s),
                        max_s=runtime_s, in_flight=in_flight, head=True,
                        p99_within=_fraction(self.p99_within) if self.p99_within else None)


def _fraction(percent: str) -> float:
    """A percentage as ``_percent`` keeps it (``2.5%``) as a fraction (0.025)."""
    return float(percent.removesuffix("%")) / 100


def stop_value(v: Any) -> Any:
    """``stop: true`` is every default; ``false`` stays (it turns ``defaults.stop`` off); a mapping
    is read here, so that a wrong key is one error naming it (not one per member of the union)."""
    if isinstance(v, str) and v.lower() in ("true", "false", "yes", "no", "on", "off"):
        v = v.lower() in ("true", "yes", "on")  # as --set gives it
    if v is True:
        return Stop()
    if isinstance(v, dict):
        return read_block(Stop, v)
    if v is not None and not isinstance(v, (bool, Stop)):
        raise ValueError(f"{shown(v)}: give true, false or a mapping such as {{within: 2%, max: 60s}}")
    return v
