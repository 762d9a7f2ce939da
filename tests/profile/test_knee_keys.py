"""``iodepth: auto`` and its ``knee:`` block as a user writes them (docs/knee.md): each accepted form with
the search settings it becomes, each refusal as its one line naming the file, line and key. The
expected figures are written out here, not computed with the code under test."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from diskbench.attribution.knee import KneeRule
from diskbench.errors import ProfileError
from diskbench.profile import load_profile, parse_profile
from diskbench.profile.knee import Knee

from .test_validation import w


def resolved(text: str) -> list[Any]:
    p = parse_profile(textwrap.dedent(text), "p.yaml")
    return [p.resolved(x) for x in p.workloads]


def profile_error(text: str) -> str:
    with pytest.raises(ProfileError) as caught:
        resolved(text)
    return str(caught.value)


def test_iodepth_auto_takes_every_default() -> None:
    got = w(iodepth="auto")
    assert got.knee == Knee() and got.knee.rule() == KneeRule(1, 256, 0.10, None, 1)
    assert got.iodepth == 1  # the first step's, until the search runs (render and plan show it)
    assert got.rounds == 9 + 1  # QD 1, 2, 4, ..., 256 and one bisection


@pytest.mark.parametrize("given", ["auto", "AUTO", " Auto "])
def test_iodepth_auto_in_any_case(given: str) -> None:
    assert w(iodepth=given).knee == Knee()


def test_the_knee_block_becomes_the_rule() -> None:
    got = w(iodepth="auto", knee={"min_iodepth": 2, "max_iodepth": 64, "gain": "5%", "p99_under": "500us",
                                  "bisect": 2})
    assert got.knee is not None
    assert got.knee.rule() == KneeRule(min_depth=2, max_depth=64, gain=0.05, p99_under_us=pytest.approx(500.0),
                                       bisect=2)
    assert got.iodepth == 2 and got.rounds == 6 + 2 * 2  # 2..64 doubling; two bisections per bracket


@pytest.mark.parametrize(("given", "us"), [("2ms", 2000.0), ("1.5ms", 1500.0), ("500us", 500.0), ("1s", 1e6),
                                           ("1us", 1.0)])
def test_p99_under_in_fios_time_units(given: str, us: float) -> None:
    got = w(iodepth="auto", knee={"p99_under": given}).knee
    assert got is not None and got.rule().p99_under_us == pytest.approx(us)


def test_defaults_do_not_choose_the_workloads_depth() -> None:
    """``defaults.iodepth: 32`` fills fixed workloads; a workload's ``iodepth: auto`` searches its own."""
    fixed, auto = resolved("""\
        name: p
        defaults: {iodepth: 32}
        workloads:
          - {name: a, rw: read}
          - {name: b, rw: read, iodepth: auto, knee: {max_iodepth: 16}}
        """)
    assert (fixed.iodepth, fixed.knee) == (32, None)
    assert auto.iodepth == 1 and auto.knee == Knee(max_iodepth=16)


def test_a_swept_block_size_searches_each_size() -> None:
    p = parse_profile("name: p\nworkloads:\n  - {name: a, rw: randread, bs: [4k, 64k], iodepth: auto}\n")
    names = [(x.name, x.knee is not None) for x, _ in p.expand(p.workloads[0])]
    assert names == [("a-bs4k", True), ("a-bs64k", True)]


@pytest.mark.parametrize(("line", "message"), [
    ("{name: a, rw: read, knee: {max_iodepth: 64}}",
     "workloads[0].knee: only with iodepth: auto; set iodepth: auto, or drop knee"),
    ("{name: a, rw: read, iodepth: 8, knee: {max_iodepth: 64}}",
     "workloads[0].knee: a fixed iodepth (8) has no knee to search; set iodepth: auto, or drop knee"),
    ("{name: a, rw: read, iodepth: auto, knee: {max_iodepth: 4, min_iodepth: 4}}",
     "workloads[0].knee: max_iodepth (4) must be deeper than min_iodepth (4)"),
    ("{name: a, rw: read, iodepth: auto, knee: {p99_under: fast}}",
     "workloads[0].knee: p99_under: 'fast' is not a latency; give e.g. p99_under: 2ms or 500us"),
    ("{name: a, rw: read, iodepth: auto, knee: {p99_under: 2h}}",
     "workloads[0].knee: p99_under: '2h': give a latency from 1us to 1h, e.g. 2ms"),
    ("{name: a, rw: read, iodepth: auto, knee: {gain: half}}",
     "workloads[0].knee: gain: 'half' is not a percentage; give e.g. gain: 10%"),
    ("{name: a, rw: read, iodepth: auto, knee: {gain: 0.5%}}",
     "workloads[0].knee: gain: '0.5%': give a percentage from 1% to 100%"),
    ("{name: a, rw: read, iodepth: auto, knee: {bisect: 5}}",
     "workloads[0].knee: bisect: Input should be less than or equal to 4"),
    ("{name: a, rw: read, iodepth: auto, knee: {max_depth: 64}}",
     "workloads[0].knee: max_depth: Extra inputs are not permitted"),
    ("{name: a, rw: read, iodepth: auto, knee: 64}",
     "workloads[0].knee: 64: give a mapping such as {max_iodepth: 256, p99_under: 2ms}"),
    ("{name: a, rw: read, iodepth: auto, protocol: steady_state}",
     "workloads[0].iodepth: iodepth: auto and protocol: steady_state both run the job several times; keep one"),
    ("{name: a, iodepth: auto, sections: [{name: s, rw: read}]}",
     "workloads[0].iodepth: iodepth: auto searches one job's queue depth; a workload with sections runs several "
     "jobs at once: give each section its iodepth"),
    ("{name: a, rw: read, sections: [{name: s, iodepth: auto}]}",
     "workloads[0].sections[0].iodepth: iodepth: auto searches one workload's queue depth: give it on the "
     "workload itself (not in defaults, a section or a sweep)"),
])
def test_a_wrong_knee_is_one_line_with_file_line_and_key(line: str, message: str) -> None:
    assert profile_error(f"name: p\nworkloads:\n  - {line}\n") == f"p.yaml:3: {message}"


def test_iodepth_auto_in_defaults_is_refused_where_it_is_given() -> None:
    assert profile_error("name: p\ndefaults: {iodepth: auto}\nworkloads:\n  - {name: a, rw: read}\n") == (
        "p.yaml:2: defaults.iodepth: iodepth: auto searches one workload's queue depth: give it on the workload "
        "itself (not in defaults, a section or a sweep)")


def test_a_knee_error_in_block_style_names_its_own_line() -> None:
    assert profile_error("""\
        name: p
        workloads:
          - name: a
            rw: read
            iodepth: auto
            knee:
              max_iodepth: 64
              gain: lots
        """) == "p.yaml:6: workloads[0].knee: gain: 'lots' is not a percentage; give e.g. gain: 10%"


STEP_OF_RR = ("is the name of a step of the knee search of workload 'rr' (iodepth: auto names its steps "
              "rr-iodepthQ, Q from 1 to 64); rename one")


def test_a_workload_named_as_a_step_is_refused_at_its_name() -> None:
    """Each step is stored as a job named ``NAME-iodepthQ``, for any depth the search may measure (a
    bisection may pick any between min_iodepth and max_iodepth): a workload of that name would be the
    same job, its results replaced by the step's."""
    assert profile_error("""\
        name: p
        workloads:
          - name: rr
            rw: randread
            iodepth: auto
            knee: {max_iodepth: 64}
          - name: rr-iodepth12
            rw: randread
        """) == f"p.yaml:7: workloads[1].name: 'rr-iodepth12' {STEP_OF_RR}"
    assert profile_error("""\
        name: p
        workloads:
          - {name: rr-iodepth1, rw: read}
          - {name: rr, rw: randread, iodepth: auto, knee: {max_iodepth: 64}}
        """) == f"p.yaml:3: workloads[0].name: 'rr-iodepth1' {STEP_OF_RR}"


@pytest.mark.parametrize("name", ["rr-iodepth128", "rr-iodepth04", "rr-iodepth", "rr-iodepth4k", "rr-4", "r-iodepth4"])
def test_a_name_no_step_takes_is_accepted(name: str) -> None:
    """Past max_iodepth, with a leading zero, no number, or another workload's prefix: no step has it."""
    got = resolved(f"""\
        name: p
        workloads:
          - {{name: rr, rw: randread, iodepth: auto, knee: {{max_iodepth: 64}}}}
          - {{name: {name}, rw: randread}}
        """)
    assert [x.name for x in got] == ["rr", name]


def test_a_sweep_that_names_a_job_as_a_step_is_refused() -> None:
    """A swept block size searches each size's knee (``r-bs4k``: steps ``r-bs4k-iodepthQ``); an iodepth
    sweep of ``r-bs4k`` names its jobs alike."""
    assert profile_error("""\
        name: p
        workloads:
          - {name: r, rw: randread, bs: [4k, 64k], iodepth: auto, knee: {max_iodepth: 16}}
          - {name: r-bs4k, rw: randread, iodepth: [8, 32]}
        """) == ("p.yaml:4: workloads[1].name: 'r-bs4k-iodepth8' is the name of a step of the knee search of "
                 "workload 'r-bs4k' (iodepth: auto names its steps r-bs4k-iodepthQ, Q from 1 to 16); rename one")


def test_two_searches_under_one_name_are_refused() -> None:
    """A sweep's value can give a search the name of another workload's: their steps would be the same jobs."""
    assert profile_error("""\
        name: p
        workloads:
          - {name: r, rw: randread, bs: [4k], iodepth: auto}
          - {name: r-bs4k, rw: randread, iodepth: auto}
        """) == ("p.yaml:4: workloads[1].name: workload 'r-bs4k' searches its knee under the same name as another "
                 "workload (a sweep's value makes it): both searches would name their steps r-bs4k-iodepthQ; "
                 "rename one")


def test_a_set_that_renames_a_workload_as_a_step_is_named(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: p\nworkloads:\n  - {name: rr, rw: randread, iodepth: auto, knee: {max_iodepth: 64}}\n"
                    "  - {name: other, rw: randread}\n")
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path), ["workloads[1].name=rr-iodepth2"])
    assert str(caught.value) == (f"{path}: --set workloads[1].name=rr-iodepth2: workloads[1].name: 'rr-iodepth2' "
                                 + STEP_OF_RR)
