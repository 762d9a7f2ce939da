"""The ``knee:`` block at its edges (docs/knee.md's table): ``gain`` from 1% to 100%, ``p99_under`` from
1us to 1h, a block given as a ``Knee`` in code, and the names a search's steps take, up to and including
``max_iodepth``. Expected values are the documented ones, written out here."""

from __future__ import annotations

import textwrap

import pytest

from diskbench.errors import ProfileError
from diskbench.profile import parse_profile
from diskbench.profile.knee import Knee
from diskbench.profile.workload import Workload


def knee_of(block: str) -> Knee:
    p = parse_profile(f"name: p\nworkloads:\n  - {{name: a, rw: read, iodepth: auto, knee: {{{block}}}}}\n", "p.yaml")
    knee = p.resolved(p.workloads[0]).knee
    assert knee is not None
    return knee


def refused(text: str) -> str:
    with pytest.raises(ProfileError) as caught:
        parse_profile(textwrap.dedent(text), "p.yaml")
    return str(caught.value)


@pytest.mark.parametrize(("given", "gain"), [("1%", 0.01), ("100%", 1.0), ("1", 0.01), ("100", 1.0)])
def test_gain_takes_both_ends_of_its_range(given: str, gain: float) -> None:
    assert knee_of(f"gain: {given}").rule().gain == pytest.approx(gain)


@pytest.mark.parametrize("given", ["100.5%", "101", "0.99", "0.5%"])
def test_gain_outside_1_to_100_percent_is_refused(given: str) -> None:
    shown = repr(given) if given.endswith("%") else given
    assert refused(f"name: p\nworkloads:\n  - {{name: a, rw: read, iodepth: auto, knee: {{gain: {given}}}}}\n") == (
        f"p.yaml:3: workloads[0].knee: gain: {shown}: give a percentage from 1% to 100%")


@pytest.mark.parametrize(("given", "us"), [("1h", 3600e6), ("3600s", 3600e6), ("1us", 1.0)])
def test_p99_under_takes_both_ends_of_its_range(given: str, us: float) -> None:
    assert knee_of(f"p99_under: {given}").rule().p99_under_us == pytest.approx(us)


@pytest.mark.parametrize("given", ["3601s", "0.9us"])
def test_p99_under_outside_1us_to_1h_is_refused(given: str) -> None:
    assert refused(f"name: p\nworkloads:\n  - {{name: a, rw: read, iodepth: auto, knee: {{p99_under: {given}}}}}\n") \
        == f"p.yaml:3: workloads[0].knee: p99_under: '{given}': give a latency from 1us to 1h, e.g. 2ms"


@pytest.mark.parametrize(("given", "shown"), [("true", "True"), ("false", "False")])
def test_a_yes_or_no_is_no_latency(given: str, shown: str) -> None:
    assert refused(f"name: p\nworkloads:\n  - {{name: a, rw: read, iodepth: auto, knee: {{p99_under: {given}}}}}\n") \
        == f"p.yaml:3: workloads[0].knee: p99_under: {shown} is not a latency; give e.g. p99_under: 2ms"


def test_a_knee_built_in_code_is_taken_as_it_is() -> None:
    """The library builds workloads from models as well as from files (docs/library.md)."""
    knee = Knee(max_iodepth=16, gain="5%")
    got = Workload.model_validate({"name": "w", "rw": "read", "iodepth": "auto", "knee": knee})
    assert got.knee == knee and got.iodepth == 1


STEP = ("is the name of a step of the knee search of workload 'rr' (iodepth: auto names its steps rr-iodepthQ, "
        "Q from 4 to 64); rename one")


def test_max_iodepth_is_a_step_and_min_iodepth_the_first() -> None:
    """The search measures max_iodepth last (docs/knee.md), so it is a step's name; below min_iodepth is none."""
    assert refused("""\
        name: p
        workloads:
          - {name: rr, rw: randread, iodepth: auto, knee: {min_iodepth: 4, max_iodepth: 64}}
          - {name: rr-iodepth64, rw: randread}
        """) == f"p.yaml:4: workloads[1].name: 'rr-iodepth64' {STEP}"
    assert refused("""\
        name: p
        workloads:
          - {name: rr, rw: randread, iodepth: auto, knee: {min_iodepth: 4, max_iodepth: 64}}
          - {name: rr-iodepth4, rw: randread}
        """) == f"p.yaml:4: workloads[1].name: 'rr-iodepth4' {STEP}"
    for name in ("rr-iodepth3", "rr-iodepth65"):
        p = parse_profile("name: p\nworkloads:\n  - {name: rr, rw: randread, iodepth: auto, knee: {min_iodepth: 4, "
                          f"max_iodepth: 64}}}}\n  - {{name: {name}, rw: randread}}\n", "p.yaml")
        assert [w.name for w in p.workloads] == ["rr", name]


def test_a_workload_without_a_search_has_no_steps() -> None:
    """``rr-iodepth4`` is only a step's name when ``rr`` searches its knee."""
    p = parse_profile("name: p\nworkloads:\n  - {name: rr, rw: randread, iodepth: 4}\n"
                      "  - {name: rr-iodepth4, rw: randread}\n", "p.yaml")
    assert [w.name for w in p.workloads] == ["rr", "rr-iodepth4"]
