"""Profile validation at the edges test_validation.py leaves open: the smallest values each rule
takes, a YAML number or null where a text is usual, and a section that names its own target."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from diskbench.profile.targets import DirTarget
from diskbench.profile.workload import Workload, WorkloadOptions


def error(model: type[BaseModel], data: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    return str(caught.value.errors()[0]["msg"]).removeprefix("Value error, ")


def test_one_byte_is_a_size() -> None:
    # "a size greater than zero": 1 byte is the least (fio takes size=1)
    assert WorkloadOptions(size=1).size == "1"  # type: ignore[arg-type]
    assert WorkloadOptions(bs="1").bs == "1"
    assert error(WorkloadOptions, {"size": "0k"}) == "'0k' is not a size greater than zero"


def test_a_null_size_is_no_size() -> None:
    assert WorkloadOptions.model_validate({"size": None}).size is None  # `size: null` or `size: ~` in YAML


def test_a_yaml_float_duration_is_written_as_plain_decimal_seconds() -> None:
    """A YAML float reaches fio's job file as text fio reads back: 1e-10 s as 0.0000000001, not
    Python's 1e-10 (which fio would not read as seconds)."""
    assert WorkloadOptions(runtime=1e-10).runtime == "0.0000000001"  # type: ignore[arg-type]
    assert WorkloadOptions(ramp_time=1.5).ramp_time == "1.5"  # type: ignore[arg-type]
    assert WorkloadOptions(runtime=2.0).runtime == "2.0"  # type: ignore[arg-type]


def test_any_positive_drain_time_is_one() -> None:
    # 0 < time <= 30 days: one second and half a second are both drain times
    w = Workload.model_validate({"name": "w", "rw": "read", "drain_burst": "1s"})
    assert (w.drain_burst, w.drain_s) == ("1s", 1.0)
    assert Workload.model_validate({"name": "w", "drain_burst": "0.5s"}).drain_s == 0.5


def test_a_section_with_its_own_target_runs_as_a_job_of_the_workload() -> None:
    """for_section gives the job the section's settings on the workload's; the section's target is
    where it runs (Workload.section_targets), not a key of the job."""
    two = Workload.model_validate({"name": "w", "rw": "read", "bs": "4k", "sections": [
        {"name": "reader", "rw": "randread", "target": "cached"}, {"name": "writer", "rw": "write"}]})
    assert two.sections is not None
    job = two.for_section(two.sections[0])
    assert (job.name, job.rw, job.bs, job.sections) == ("reader", "randread", "4k", None)
    assert two.section_targets() == ["cached"]


def test_a_warmup_of_30_days_and_a_second_is_too_long() -> None:
    assert DirTarget(dir="/d", warmup="2592000s").warmup == "2592000s"  # 30 x 86400 s: the most
    assert error(DirTarget, {"dir": "/d", "warmup": "2592001s"}) == "'2592001s' is longer than 30 days"
