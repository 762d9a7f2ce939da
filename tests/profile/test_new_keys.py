"""The three newer profile keys as a user writes them: ``flush_cache`` (docs/profiles.md, Flushing
caches), ``stop:`` (docs/adaptive.md) and ``nfs: shared`` (docs/scale-out.md, One client of its own).

Each accepted form with the value it becomes, each refusal with its one-line message naming the
key, and the edges the docs give (within 0.1% to 50%, confidence 50% to 99.9%, min at most the
runtime, max replacing the runtime). The expected figures are written out here, not computed with
the code under test.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from diskbench.attribution.stop_rule import StopRule
from diskbench.errors import ProfileError
from diskbench.profile import load_profile, parse_profile
from diskbench.profile.stop import Stop
from diskbench.profile.targets import NfsTarget
from diskbench.profile.workload import Section, Workload, WorkloadOptions

from ..conftest import diskbench
from .test_validation import error, w


def _rule(**given: Any) -> StopRule:
    """A profile's rule: its first interval is fio's head (``StopRule.head``)."""
    return StopRule(head=True, **given)

GIB = 1024**3



def profile_error(text: str) -> str:
    """The error reading a profile gives, or resolving its workloads (what only the merge with
    defaults shows, as plan and run do)."""
    with pytest.raises(ProfileError) as caught:
        p = parse_profile(textwrap.dedent(text), "p.yaml")
        for x in p.workloads:
            p.resolved(x)
    return str(caught.value)


# --- flush_cache ------------------------------------------------------------------------------
def test_no_flush_cache_is_no_flush() -> None:
    assert (w().flush_cache, w().flush_bytes) == (None, 0)
    assert (w(flush_cache=None).flush_cache, w(flush_cache=None).flush_bytes) == (None, 0)


def test_flush_cache_true_drops_the_page_cache_and_reads_nothing() -> None:
    one = w(flush_cache=True)
    assert (one.flush_cache, one.flush_bytes) == (True, 0)


def test_flush_cache_false_is_no_flush() -> None:
    off = w(flush_cache=False)
    assert (off.flush_cache, off.flush_bytes) == (None, 0)


@pytest.mark.parametrize(("text", "value"), [
    ("true", True), ("TRUE", True), ("yes", True), ("Yes", True), ("on", True), ("ON", True),
    ("false", None), ("False", None), ("no", None), ("NO", None), ("off", None), ("Off", None),
])
def test_flush_cache_as_set_gives_it_is_a_boolean(text: str, value: bool | None) -> None:
    """``--set workloads[0].flush_cache=on`` may reach the model as the text "on": it is a yes or
    no, never a size (the six words YAML 1.1 reads as booleans, in any case)."""
    got = w(flush_cache=text)
    assert (got.flush_cache, got.flush_bytes) == (value, 0)


@pytest.mark.parametrize(("given", "text", "size"), [
    ("160g", "160g", 160 * GIB),   # the docs' example: 160 GiB
    ("160G", "160G", 160 * GIB),
    ("512m", "512m", 512 * 1024**2),
    ("1", "1", 1),                 # a bare number is bytes, as fio's sizes
    (4096, "4096", 4096),          # a YAML number too, kept as text
])
def test_flush_cache_size_reads_a_separate_data_set_of_that_size(given: Any, text: str, size: int) -> None:
    got = w(flush_cache=given)
    assert (got.flush_cache, got.flush_bytes) == (text, size)


@pytest.mark.parametrize(("given", "shown"), [
    ("abc", "'abc'"), ("0", "'0'"), (0, "0"), ("0g", "'0g'"), (-1, "-1"), ("maybe", "'maybe'"),
])
def test_flush_cache_neither_yes_nor_a_size_is_refused(given: Any, shown: str) -> None:
    assert error(Workload, {"name": "w", "flush_cache": given}) == (
        f"{shown}: give true, or the size of the separate data set to read, e.g. 160g")


def test_flush_cache_error_names_the_key_and_line() -> None:
    assert profile_error("""\
        name: p
        workloads:
          - {name: a, rw: randread, flush_cache: abc}
        """) == ("p.yaml:3: workloads[0].flush_cache: 'abc': give true, or the size of the separate data set "
                 "to read, e.g. 160g")


def test_flush_cache_in_a_yaml_profile() -> None:
    p = parse_profile(textwrap.dedent("""\
        name: p
        workloads:
          - {name: a, rw: randread, flush_cache: 160g}
          - {name: b, rw: randread, flush_cache: true}
          - {name: c, rw: randread}
        """), "p.yaml")
    got = [(x.flush_cache, x.flush_bytes) for x in (p.resolved(v) for v in p.workloads)]
    assert got == [("160g", 160 * GIB), (True, 0), (None, 0)]


# --- stop: accepted forms and defaults --------------------------------------------------------
def test_no_stop_runs_the_whole_runtime() -> None:
    assert (w().stop, w().stop_rule) == (None, None)


def test_stop_false_stays_false_so_it_turns_defaults_stop_off() -> None:
    off = w(stop=False, runtime="60s")
    assert (off.stop, off.stop_rule, off.runtime) == (False, None, "60s")


@pytest.mark.parametrize("given", [True, "true", "Yes", "ON", {}])
def test_stop_true_takes_every_default(given: Any) -> None:
    """Defaults (docs/adaptive.md): within 2%, confidence 95%, min 10s, max the runtime."""
    on = w(stop=given, runtime="60s")
    assert on.stop == Stop(within="2%", confidence="95%", min=None, max=None)
    assert on.runtime == "60s"
    assert on.stop_rule == _rule(within=0.02, confidence=0.95, min_s=10.0, max_s=60.0, in_flight=1)


@pytest.mark.parametrize(("options", "in_flight"), [
    ({}, 1),                                                   # fio's defaults: QD1, one job
    ({"iodepth": 16, "numjobs": 4}, 64),                       # each job's queue, every job
    ({"iodepth": 16, "numjobs": 4, "ioengine": "psync"}, 4),   # a sync engine: one a job, whatever its iodepth
    ({"iodepth": 8, "ioengine": "libaio"}, 8),
])
def test_the_stop_rule_knows_the_ios_in_flight(options: dict[str, Any], in_flight: int) -> None:
    """What drains after the stop (stop_rule.drain_widened): iodepth x numjobs, one a job for sync engines."""
    rule = w(stop=True, runtime="60s", **options).stop_rule
    assert rule is not None and rule.in_flight == in_flight


@pytest.mark.parametrize("given", ["false", "No", "OFF"])
def test_stop_false_as_set_gives_it(given: str) -> None:
    assert w(stop=given).stop is False


def test_stop_without_a_runtime_has_the_builtin_30s_as_its_maximum() -> None:
    assert w(stop=True).stop_rule == _rule(within=0.02, confidence=0.95, min_s=10.0, max_s=30.0, in_flight=1)


def test_stop_min_defaults_to_the_runtime_when_that_is_shorter() -> None:
    assert w(stop=True, runtime="5s").stop_rule == _rule(within=0.02, confidence=0.95, min_s=5.0, max_s=5.0,
                                                            in_flight=1)


def test_stop_values_become_the_rule() -> None:
    got = w(stop={"within": "5%", "confidence": "90%", "min": "20s", "max": "2m"})
    assert got.stop == Stop(within="5%", confidence="90%", min="20s", max="2m")
    assert got.runtime == "2m"  # max replaces the runtime
    assert got.stop_rule == _rule(within=0.05, confidence=0.90, min_s=20.0, max_s=120.0, in_flight=1)


def test_p99_within_is_the_p99s_own_width_and_defaults_to_within() -> None:
    """docs/adaptive.md: ``p99_within`` (default: ``within``), a percentage from 0.1% to 50%."""
    got = w(stop={"within": "3%", "p99_within": 5})
    assert got.stop == Stop(within="3%", p99_within="5%")
    assert got.stop_rule == _rule(within=0.03, confidence=0.95, min_s=10.0, max_s=30.0, in_flight=1,
                                     p99_within=0.05)
    assert w(stop={"within": "3%"}).stop_rule.p99_within is None  # type: ignore[union-attr]
    assert w(stop={"p99_within": None}).stop.p99_within is None  # type: ignore[union-attr]  (YAML null: the default)
    for given, text in (("0.1%", "0.1%"), (50, "50%"), ("12.5", "12.5%")):
        assert w(stop={"p99_within": given}).stop.p99_within == text  # type: ignore[union-attr]


def test_stop_max_replaces_the_runtime() -> None:
    assert w(stop={"max": "60s"}, runtime="300s").runtime == "60s"
    assert w(stop={"max": "60s"}).runtime == "60s"


def test_stop_without_max_keeps_the_runtime() -> None:
    assert w(stop={"within": "3%"}, runtime="45s").runtime == "45s"
    assert w(stop={"within": "3%"}).runtime is None  # the built-in default fills it in later


@pytest.mark.parametrize(("given", "text"), [
    ("2", "2%"), (2, "2%"), ("2.5%", "2.5%"), (0.1, "0.1%"), ("0.1%", "0.1%"), ("50%", "50%"), (50, "50%"),
])
def test_within_is_a_percentage_from_0_1_to_50(given: Any, text: str) -> None:
    assert w(stop={"within": given}).stop.within == text  # type: ignore[union-attr]


@pytest.mark.parametrize(("given", "text"), [("50", "50%"), ("99.9%", "99.9%"), (90, "90%")])
def test_confidence_is_a_percentage_from_50_to_99_9(given: Any, text: str) -> None:
    assert w(stop={"confidence": given}).stop.confidence == text  # type: ignore[union-attr]


@pytest.mark.parametrize("given", ["1s", "30d", "2592000s"])
def test_stop_durations_from_one_second_to_30_days(given: str) -> None:
    assert w(stop={"max": given}).stop.max == given  # type: ignore[union-attr]


def test_stop_min_may_equal_the_runtime() -> None:
    """"min: the shortest a job runs (at most the runtime)": equal is allowed."""
    eq = w(stop={"min": "30s"}, runtime="30s")
    assert eq.stop_rule == _rule(within=0.02, confidence=0.95, min_s=30.0, max_s=30.0, in_flight=1)
    assert w(stop={"min": "30s", "max": "30s"}).runtime == "30s"


def test_stop_min_without_a_runtime_is_checked_once_merged() -> None:
    """A workload read alone has no runtime yet: min is checked against the merged one."""
    assert w(stop={"min": "40s"}).stop.min == "40s"  # type: ignore[union-attr]


def test_stop_with_a_time_based_job() -> None:
    assert w(stop=True, time_based=True).time_based is True


# --- stop: refusals ---------------------------------------------------------------------------
@pytest.mark.parametrize(("stop", "message"), [
    ({"within": "two"}, "within: 'two' is not a percentage; give e.g. within: 2%"),
    ({"within": "0.09%"}, "within: '0.09%': give a percentage from 0.1% to 50%"),
    ({"within": "50.1%"}, "within: '50.1%': give a percentage from 0.1% to 50%"),
    ({"within": 0}, "within: 0: give a percentage from 0.1% to 50%"),
    ({"within": "100%"}, "within: '100%': give a percentage from 0.1% to 50%"),
    ({"p99_within": "wide"}, "p99_within: 'wide' is not a percentage; give e.g. p99_within: 5%"),
    ({"p99_within": "0.09%"}, "p99_within: '0.09%': give a percentage from 0.1% to 50%"),
    ({"p99_within": "50.1%"}, "p99_within: '50.1%': give a percentage from 0.1% to 50%"),
    ({"confidence": "high"}, "confidence: 'high' is not a percentage; give e.g. confidence: 95%"),
    ({"confidence": "49.9%"}, "confidence: '49.9%': give a percentage from 50% to 99.9%"),
    ({"confidence": "99.95%"}, "confidence: '99.95%': give a percentage from 50% to 99.9%"),
    ({"confidence": "100%"}, "confidence: '100%': give a percentage from 50% to 99.9%"),
    ({"min": "0.5s"}, "min: '0.5s': give a duration from 1s to 30 days"),
    ({"max": "2592001s"}, "max: '2592001s': give a duration from 1s to 30 days"),
    ({"min": "soon"}, "min: 'soon' is not a duration; give e.g. 10s or 2m"),
    ({"until": "5s"}, "until: Extra inputs are not permitted"),
    (5, "5: give true, false or a mapping such as {within: 2%, max: 60s}"),
    ("maybe", "'maybe': give true, false or a mapping such as {within: 2%, max: 60s}"),
    ([1], "[1]: give true, false or a mapping such as {within: 2%, max: 60s}"),
])
def test_a_wrong_stop_is_one_message_naming_the_key(stop: Any, message: str) -> None:
    assert error(Workload, {"name": "w", "stop": stop}) == message
    assert error(WorkloadOptions, {"stop": stop}) == message  # defaults.stop alike


def test_a_wrong_stop_in_a_file_is_one_line_with_file_line_and_key() -> None:
    """The docs' own example (docs/adaptive.md)."""
    assert profile_error("""\
        name: p
        workloads:
          - {name: a, rw: randread, stop: {within: two}}
        """) == "p.yaml:3: workloads[0].stop: within: 'two' is not a percentage; give e.g. within: 2%"


def test_stop_min_longer_than_the_runtime_is_refused() -> None:
    assert error(Workload, {"name": "w", "stop": {"min": "31s"}, "runtime": "30s"}) == (
        "stop.min (31s) is longer than the runtime (30s), the longest the job runs")
    assert error(Workload, {"name": "w", "stop": {"min": "30s", "max": "20s"}}) == (
        "stop.min (30s) is longer than stop.max (20s), the longest the job runs")  # the key the user gave
    # a YAML float is neither yes/no nor a size: the loader's one line, not pydantic's two (bool, str)
    assert error(Workload, {"name": "w", "rw": "read", "flush_cache": 1.5}) == (
        "1.5: give true, or the size of the separate data set to read, e.g. 160g")


def test_stop_min_longer_than_the_default_runtime_is_refused_once_merged() -> None:
    """What only the merge with the defaults shows is one line too, with the file, the line of the
    key where the profile gives it and, when that is in defaults, the workload it breaks."""
    assert profile_error("""\
        name: p
        workloads:
          - {name: a, rw: randread, stop: {min: 40s}}
        """) == ("p.yaml:3: workloads[0].stop.min: stop.min (40s) is longer than the runtime (30s), "
                 "the longest the job runs")
    assert profile_error("""\
        name: p
        defaults: {stop: {min: 20s}}
        workloads:
          - {name: a, rw: randread, runtime: 15s}
        """) == ("p.yaml:2: defaults.stop.min: stop.min (20s) is longer than the runtime (15s), the longest "
                 "the job runs (workload 'a', line 4)")


def test_a_merged_stop_error_names_the_line_of_the_key_in_block_style() -> None:
    assert profile_error("""\
        name: p
        defaults:
          runtime: 20s
          stop:
            within: 3%
            min: 15s
        workloads:
          - name: a
            rw: randread
          - name: b
            rw: randread
            runtime: 10s
        """) == ("p.yaml:6: defaults.stop.min: stop.min (15s) is longer than the runtime (10s), the longest "
                 "the job runs (workload 'b', line 10)")
    assert profile_error("""\
        name: p
        defaults:
          stop: {max: 20s}
        workloads:
          - name: a
            rw: randread
            stop:
              within: 3%
              min: 25s
        """) == ("p.yaml:9: workloads[0].stop.min: stop.min (25s) is longer than stop.max (20s), the longest "
                 "the job runs")
    # the workload's own protocol against the defaults' stop: the stop named, where it is given
    assert profile_error("""\
        name: p
        defaults:
          stop: true
        workloads:
          - {name: a, rw: randread}
          - {name: b, rw: randread, protocol: steady_state}
        """) == ("p.yaml:3: defaults.stop: stop and protocol: steady_state both decide how long a job runs; "
                 "keep one (workload 'b', line 6)")
    assert profile_error("""\
        name: p
        defaults: {time_based: false}
        workloads:
          - {name: a, rw: randread, stop: {within: 5%}}
        """) == ("p.yaml:2: defaults.time_based: stop needs a time-based job (its runtime is the maximum); "
                 "drop time_based: false (workload 'a', line 4)")


def test_a_stop_check_of_the_workload_alone_names_the_key_too() -> None:
    assert profile_error("""\
        name: p
        workloads:
          - name: a
            rw: randread
            runtime: 30s
            stop:
              min: 31s
        """) == ("p.yaml:7: workloads[0].stop.min: stop.min (31s) is longer than the runtime (30s), the longest "
                 "the job runs")


def test_a_merged_stop_error_is_one_line_from_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent("""\
        name: p
        defaults:
          stop:
            min: 20s
        workloads:
          - name: a
            rw: randread
            runtime: 15s
        """))
    out = diskbench("plan", "--profile", str(path))
    assert out.returncode == 2, out.stderr
    assert out.stderr == (f"error: {path}:4: defaults.stop.min: stop.min (20s) is longer than the runtime (15s), "
                          "the longest the job runs (workload 'a', line 6)\n")
    assert "Traceback" not in out.stderr


def test_stop_with_steady_state_is_refused() -> None:
    assert error(Workload, {"name": "w", "stop": True, "protocol": "steady_state"}) == (
        "stop and protocol: steady_state both decide how long a job runs; keep one")
    # stop: false is no adaptive stop: steady state is free to decide
    assert w(stop=False, protocol="steady_state").protocol == "steady_state"


def test_stop_needs_a_time_based_job() -> None:
    assert error(Workload, {"name": "w", "stop": True, "time_based": False}) == (
        "stop needs a time-based job (its runtime is the maximum); drop time_based: false")
    assert w(stop=False, time_based=False).time_based is False


@pytest.mark.parametrize("given", [True, False, {"within": "2%"}])
def test_a_section_takes_no_stop(given: Any) -> None:
    assert error(Section, {"name": "s", "stop": given}) == (
        "a section runs as long as its workload: give stop on the workload")


def test_a_section_without_stop_is_a_section() -> None:
    assert Section.model_validate({"name": "s", "rw": "read"}).stop is None


def test_a_section_stop_in_a_file_names_the_section() -> None:
    assert profile_error("""\
        name: p
        workloads:
          - name: a
            rw: randread
            sections: [{name: s, stop: true}]
        """) == ("p.yaml:5: workloads[0].sections[0].stop: a section runs as long as its workload: "
                 "give stop on the workload")


def test_a_workload_with_stop_and_sections_runs_each_section_as_a_job() -> None:
    two = w(stop={"max": "40s"}, sections=[{"name": "r", "rw": "randread"}, {"name": "x", "rw": "write"}])
    assert two.sections is not None
    job = two.for_section(two.sections[0])
    assert (job.name, job.rw, job.runtime, job.stop) == ("r", "randread", "40s", Stop(max="40s"))


# --- stop: from defaults ----------------------------------------------------------------------
def test_defaults_stop_and_a_workload_that_turns_it_off() -> None:
    """docs/adaptive.md's example: every workload stops adaptively but the one with stop: false."""
    p = parse_profile(textwrap.dedent("""\
        name: p
        defaults:
          runtime: 60s
          stop: {within: 2%, confidence: 95%, min: 10s}
        workloads:
          - {name: randread-4k, rw: randread, bs: 4k, iodepth: 32}
          - {name: seqwrite, rw: write, bs: 1M, stop: false}
        """), "p.yaml")
    first, second = (p.resolved(x) for x in p.workloads)
    assert (first.runtime, first.stop_rule) == ("60s", _rule(within=0.02, confidence=0.95, min_s=10.0,
                                                                max_s=60.0, in_flight=32))
    assert (second.runtime, second.stop, second.stop_rule) == ("60s", False, None)


MAXIMA = """\
    name: p
    defaults:
      runtime: 120s
      stop: {max: 60s, within: 3%}
    workloads:
      - {name: own-max, rw: randread, runtime: 10s, stop: {max: 20s}}
      - {name: own-runtime, rw: randread, runtime: 10s}
      - {name: own-runtime-own-stop, rw: randread, runtime: 10s, stop: {min: 5s}}
      - {name: defaults-max, rw: randread}
      - {name: stop-off, rw: randread, stop: false}
    """


def test_a_workloads_own_runtime_beats_defaults_stop_max() -> None:
    """The maximum is the first of: the workload's own stop.max, its own runtime, defaults.stop.max,
    defaults.runtime, the built-in 30 s (docs/adaptive.md)."""
    p = parse_profile(textwrap.dedent(MAXIMA), "p.yaml")
    got = {x.name: p.resolved(x) for x in p.workloads}
    assert {name: (r.runtime, r.stop_rule.max_s if r.stop_rule else None) for name, r in got.items()} == {
        "own-max": ("20s", 20.0),  # its own stop.max replaces its own runtime
        "own-runtime": ("10s", 10.0),  # not defaults.stop.max's 60 s
        "own-runtime-own-stop": ("10s", 10.0),
        "defaults-max": ("60s", 60.0),  # defaults.stop.max replaces defaults.runtime
        "stop-off": ("120s", None),  # no stop: defaults.stop.max does not apply
    }
    # the rest of defaults.stop still applies, key by key
    assert got["own-runtime"].stop_rule == _rule(within=0.03, confidence=0.95, min_s=10.0, max_s=10.0, in_flight=1)
    assert got["own-runtime-own-stop"].stop_rule == _rule(within=0.03, confidence=0.95, min_s=5.0, max_s=10.0,
                                                             in_flight=1)


def test_the_builtin_runtime_is_the_last_maximum() -> None:
    p = parse_profile("name: p\ndefaults: {stop: {within: 5%}}\nworkloads:\n  - {name: a, rw: read}\n")
    assert p.resolved(p.workloads[0]).stop_rule == _rule(within=0.05, confidence=0.95, min_s=10.0, max_s=30.0,
                                                            in_flight=1)


def test_a_workloads_stop_true_takes_the_defaults_stop() -> None:
    p = parse_profile("name: p\ndefaults: {stop: {within: 5%, min: 20s}}\n"
                      "workloads:\n  - {name: a, rw: read, runtime: 40s, stop: true}\n"
                      "  - {name: b, rw: read, runtime: 40s, stop: {confidence: 90%}}\n")
    a, b = (p.resolved(x).stop_rule for x in p.workloads)
    assert a == _rule(within=0.05, confidence=0.95, min_s=20.0, max_s=40.0, in_flight=1)
    assert b == _rule(within=0.05, confidence=0.90, min_s=20.0, max_s=40.0, in_flight=1)


# --- nfs: shared ------------------------------------------------------------------------------
def test_nfs_shared_is_the_runs_shared_volume() -> None:
    t = NfsTarget.model_validate({"nfs": "shared", "options": "rw,hard,rsize=262144,wsize=262144,vers=3,tcp"})
    assert (t.nfs, t.on_shared, t.options) == ("shared", True, "rw,hard,rsize=262144,wsize=262144,vers=3,tcp")


def test_an_nfs_export_is_not_the_shared_volume() -> None:
    t = NfsTarget.model_validate({"nfs": "10.0.0.4:/export"})
    assert (t.nfs, t.on_shared) == ("10.0.0.4:/export", False)
    assert t.options == "rw,nconnect=8,hard,rsize=262144,wsize=262144,vers=3,tcp"  # the documented default


@pytest.mark.parametrize("given", ["Shared", "shared:", "shared/x", "10.0.0.4", "10.0.0.4:export", ""])
def test_an_nfs_export_is_address_path_or_shared(given: str) -> None:
    with pytest.raises(ValidationError) as caught:
        NfsTarget.model_validate({"nfs": given})
    assert caught.value.errors()[0]["loc"] == ("nfs",)


def test_a_merged_stop_error_names_the_set_on_its_other_side(tmp_path: Path) -> None:
    """stop.min in the file against a runtime given on the command line: the line names that --set too
    (found by the --set fuzz test on the bundled anf-nfs-scaleout with defaults.runtime=0)."""
    path = tmp_path / "p.yaml"
    path.write_text("name: p\ndefaults: {rw: randread, runtime: 20s}\nworkloads:\n  - name: a\n"
                    "    stop: {min: 15s}\n")
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path), ["defaults.runtime=10s", "defaults.bs=8k"])
    assert str(caught.value) == (f"{path}:5: workloads[0].stop.min: stop.min (15s) is longer than the runtime "
                                 "(10s), the longest the job runs "
                                 "(with --set defaults.runtime=10s --set defaults.bs=8k)")
