"""A third-party provider's ``machines:`` schema (docs/plugins.md) is validated with the profile, and its
problems read as diskbench's own: a union's alternatives said once (at the key, not per alternative),
and an ``assert`` in its validator without pydantic's "Assertion failed, " prefix."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, ClassVar, Literal

import pytest
from pydantic import AfterValidator, BaseModel, model_validator

from diskbench import registry
from diskbench.errors import ProfileError
from diskbench.profile import parse_profile
from diskbench.profile.assembly import profile_model
from diskbench.profile.machines import MachineBase
from diskbench.providers.local import LocalProvider


def _slot(v: int) -> int:
    if v < 1:
        raise ValueError("a rack slot counts from 1")
    return v


def _named(v: str) -> str:
    if not v.startswith("slot-"):
        raise ValueError("a named slot starts with slot-")
    return v


class LabMachine(MachineBase):
    """A lab's machine: a slot by number or by name, in a rack."""

    provider: Literal["lab"]
    slot: Annotated[int, AfterValidator(_slot)] | Annotated[str, AfterValidator(_named)] = 1
    rack: int = 1

    @model_validator(mode="after")
    def _rack(self) -> Any:
        if self.rack == 13:  # an ``assert`` in a plugin's code (pytest would rewrite one written here)
            raise AssertionError("rack 13 holds the switches")
        return self


class LabProvider(LocalProvider):
    name: ClassVar[str] = "lab"

    def machine_schema(self) -> type[BaseModel]:
        return LabMachine


@pytest.fixture
def lab(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The provider installed for this test only (the profile model is built again without it after)."""
    monkeypatch.setitem(registry.providers._loaded, "lab", LabProvider())
    profile_model.cache_clear()
    yield
    profile_model.cache_clear()


def problem(machine: str, workload: str = "{name: a, rw: read}") -> str:
    with pytest.raises(ProfileError) as caught:
        parse_profile(f"name: p\nmachines:\n  - {{provider: lab, name: m1, target: {{dir: /d}}, {machine}}}\n"
                      f"workloads:\n  - {workload}\n", "p.yaml")
    return str(caught.value)


def test_a_unions_alternatives_are_one_problem_and_the_next_is_still_said(lab: None) -> None:
    assert problem("slot: [1]", "{name: a, rw: read, bs: 7q}") == (
        "p.yaml: 2 problems:\n"
        "  p.yaml:3: machines[0].slot: Input should be a valid integer\n"
        "  p.yaml:5: workloads[0].bs: '7q' is not a block size (use e.g. 4k, 8k, 64k, 1M)")


def test_an_assert_reads_as_its_message(lab: None) -> None:
    assert problem("rack: 13") == "p.yaml:3: machines[0]: rack 13 holds the switches"


def test_its_own_checks_and_keys_read_as_diskbenchs(lab: None) -> None:
    assert problem("slot: 0") == "p.yaml:3: machines[0].slot: a rack slot counts from 1"
    assert problem("rakc: 2") == "p.yaml:3: machines[0]: unknown key 'rakc' (did you mean rack?)"
