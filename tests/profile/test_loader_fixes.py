"""Three loader bugs mutation testing found, each pinned by its exact line.

- An engine's options that are no mapping (``engine_options: 5`` beside ``fio: {x: 1}``) were an
  internal error (exit 70): now the profile's one line with its file, line and key.
- "did you mean" suggested from every key of the whole format, the rejected key too
  (``target: {dir: /data, fs: ext4}`` said "did you mean fs?"): now from the keys of the model that
  refused the key, never that key itself.
- ``--set defaults.runtime=5s`` on a profile without ``defaults:`` said the file "has no" it: now
  the parents the schema has are made; an unknown key is still refused, with its suggestion.

Every expected line is written out here, not computed by diskbench."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from diskbench.errors import ProfileError
from diskbench.profile import load_profile, parse_profile
from diskbench.profile.assembly import validation_context
from diskbench.profile.keys import did_you_mean
from diskbench.profile.workload import WorkloadOptions

from ..conftest import diskbench


def problem(text: str) -> str:
    with pytest.raises(ProfileError) as caught:
        parse_profile(text, "p.yaml")
    return str(caught.value)


def workload(*lines: str) -> str:
    return "name: t\nworkloads:\n  - name: a\n    rw: read\n" + "".join(f"    {line}\n" for line in lines)


ENGINE_OPTIONS = ("engine_options must be a mapping of engine: {option: value}, e.g. {diskspd: {affinity: '0'}}, "
                  "not ")


# --- 1. an engine's options that are no mapping ----------------------------------------------------------
@pytest.mark.parametrize(("lines", "message"), [
    # the crash: the engine block merged into engine_options, which was 5 (TypeError, exit 70)
    (("engine_options: 5", "fio: {x: 1}"), f"p.yaml:5: workloads[0].engine_options: {ENGINE_OPTIONS}5"),
    (("engine_options: [1]", "fio: {x: 1}"), f"p.yaml:5: workloads[0].engine_options: {ENGINE_OPTIONS}[1]"),
    (("engine_options: abc", "fio: {x: 1}"), f"p.yaml:5: workloads[0].engine_options: {ENGINE_OPTIONS}'abc'"),
    # without a block to merge, pydantic said "Input should be a valid dictionary"
    (("engine_options: abc",), f"p.yaml:5: workloads[0].engine_options: {ENGINE_OPTIONS}'abc'"),
    # the block named after an engine: its own key and line (pydantic named engine_options.fio, line 3)
    (("fio: 5",), "p.yaml:5: workloads[0].fio: the fio block must be a mapping of option: value (the fio engine's "
                  "own options), not 5"),
    (("fio:",), "p.yaml:5: workloads[0].fio: the fio block must be a mapping of option: value (the fio engine's "
                "own options), not None"),
    (("diskspd: [a]",), "p.yaml:5: workloads[0].diskspd: the diskspd block must be a mapping of option: value "
                        "(the diskspd engine's own options), not ['a']"),
    # a block inside engine_options, beside a block of the same engine: the one that is wrong
    (("engine_options: {fio: 5}", "fio: {x: 1}"),
     "p.yaml:5: workloads[0].engine_options.fio: the fio block must be a mapping of option: value (the fio "
     "engine's own options), not 5"),
])
def test_engine_options_that_are_no_mapping_are_one_line(lines: tuple[str, ...], message: str) -> None:
    assert problem(workload(*lines)) == message


def test_engine_options_in_defaults_and_sections() -> None:
    text = ("name: t\ndefaults:\n  engine_options: 5\n  fio: {x: 1}\nworkloads:\n  - name: a\n    rw: read\n"
            "    sections:\n      - {name: s, fio: [1]}\n")
    assert problem(text) == (
        "p.yaml: 2 problems:\n"
        f"  p.yaml:3: defaults.engine_options: {ENGINE_OPTIONS}5\n"
        "  p.yaml:9: workloads[0].sections[0].fio: the fio block must be a mapping of option: value (the fio "
        "engine's own options), not [1]")


def test_engine_options_that_are_no_mapping_are_a_validation_error_in_code() -> None:
    """Built in code (no loader), still pydantic's ValidationError, not a TypeError."""
    with pytest.raises(ValidationError, match="engine_options must be a mapping of engine"):
        WorkloadOptions.model_validate({"engine_options": 5, "fio": {"x": 1}}, context=validation_context())
    # good blocks still merge
    got = WorkloadOptions.model_validate({"engine_options": {"diskspd": {"a": 1}}, "fio": {"x": 1}},
                                         context=validation_context())
    assert got.engine_options == {"diskspd": {"a": 1}, "fio": {"x": 1}}


def test_the_cli_says_it_in_one_line_not_an_internal_error(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(workload("engine_options: 5", "fio: {x: 1}"))
    out = diskbench("plan", "--profile", str(path), db=tmp_path / "db.sqlite")
    assert out.returncode == 2
    assert out.stderr == f"error: {path}:5: workloads[0].engine_options: {ENGINE_OPTIONS}5\n"


# --- 2. suggestions from the keys of the place ---------------------------------------------------------------
@pytest.mark.parametrize(("text", "message"), [
    # docs/profiles.md's example: a directory has no fs, and "fs" is not suggested for itself
    ("name: t\ntarget: {dir: /data, fs: ext4}\nworkloads:\n  - {name: a, rw: read}\n",
     "p.yaml:2: target: unknown key 'fs'"),
    # "cloud" (an OpenStack machine's key) is no key of a workload
    (workload("colour: red"), "p.yaml:5: workloads[0]: unknown key 'colour'"),
    (workload("ramp_tme: 2s"), "p.yaml:5: workloads[0]: unknown key 'ramp_tme' (did you mean ramp_time?)"),
    # the union's member that refused it: a dir target has no mount, a device target has
    ("name: t\ntarget: {dir: /d, mont: /m}\nworkloads:\n  - {name: a, rw: read}\n",
     "p.yaml:2: target: unknown key 'mont'"),
    ("name: t\ntarget: {device: /dev/sdb, mont: /m}\nworkloads:\n  - {name: a, rw: read}\n",
     "p.yaml:2: target: unknown key 'mont' (did you mean mount?)"),
    ("name: t\nhosts:\n  - {name: h, address: x, targets: {d: {nfs: 'a:/b', optoins: hard}}}\n"
     "workloads:\n  - {name: a, rw: read}\n", "p.yaml:3: hosts[0].targets.d: unknown key 'optoins' (did you mean "
                                               "options?)"),
    # a section is not a workload: no protocol, no sections (the rejected key is never suggested)
    (workload("protocl: steady_state"), "p.yaml:5: workloads[0]: unknown key 'protocl' (did you mean protocol?)"),
    (workload("sections: [{name: s, protocl: steady_state}]"),
     "p.yaml:5: workloads[0].sections[0]: unknown key 'protocl'"),
    (workload("sections: [{name: s, sections: []}]"), "p.yaml:5: workloads[0].sections[0]: unknown key 'sections'"),
    # an installed engine's block is a key of a workload
    (workload("diskpsd: {a: 1}"), "p.yaml:5: workloads[0]: unknown key 'diskpsd' (did you mean diskspd?)"),
    ("name: t\ndefaults: {runtim: 5s}\nworkloads:\n  - {name: a, rw: read}\n",
     "p.yaml:2: defaults: unknown key 'runtim' (did you mean runtime?)"),
    ("name: t\nworkload: []\nworkloads:\n  - {name: a, rw: read}\n",
     "p.yaml:2: (top level): unknown key 'workload' (did you mean workloads?)"),
    # a provider's machine, picked by provider: (azure by default)
    ("name: t\nmachines:\n  - {name: m, region: r, size: s, target: temp, os_disk: {typ: x}}\n"
     "workloads:\n  - {name: a, rw: read}\n", "p.yaml:3: machines[0].os_disk: unknown key 'typ' (did you mean "
                                              "type?)"),
    ("name: t\nhosts:\n  - {name: h, adress: x}\nworkloads:\n  - {name: a, rw: read}\n",
     "p.yaml: 2 problems:\n  p.yaml:3: hosts[0]: required key 'address' is missing\n"
     "  p.yaml:3: hosts[0]: unknown key 'adress' (did you mean address?)"),
])
def test_an_unknown_key_is_matched_against_the_keys_of_its_place(text: str, message: str) -> None:
    assert problem(text) == message


def test_the_rejected_word_is_never_its_own_suggestion() -> None:
    assert did_you_mean("fs", {"fs"}) == ""
    assert did_you_mean("fs", {"fs", "fsx"}) == " (did you mean fsx?)"
    assert did_you_mean("colour", {"cloud", "name"}) == " (did you mean cloud?)"
    assert did_you_mean("colour", set()) == ""


# --- 3. --set makes a parent mapping the schema has ------------------------------------------------------
@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """A profile with no defaults: block."""
    path = tmp_path / "p.yaml"
    path.write_text("name: t\nworkloads:\n  - name: a\n    rw: read\n")
    return path


def set_error(path: Path, *specs: str) -> str:
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path), list(specs))
    return str(caught.value)


def test_a_set_makes_the_defaults_block_the_file_leaves_out(bare: Path) -> None:
    loaded = load_profile(str(bare), ["defaults.runtime=5s"])
    assert loaded.profile.defaults.runtime == "5s"
    assert loaded.profile.resolved(loaded.profile.workloads[0]).runtime == "5s"
    assert loaded.text == (f"# {bare} with --set defaults.runtime=5s\n"
                           "name: t\nworkloads:\n- name: a\n  rw: read\ndefaults:\n  runtime: 5s\n")
    # the library's mapping of overrides too
    assert load_profile(str(bare), {"defaults.runtime": "7s"}).profile.defaults.runtime == "7s"


def test_a_set_fills_an_empty_block(bare: Path) -> None:
    bare.write_text("name: t\ndefaults:\nworkloads:\n  - name: a\n    rw: read\n")
    assert load_profile(str(bare), ["defaults.runtime=5s"]).profile.defaults.runtime == "5s"


def test_a_set_makes_every_mapping_on_the_way(bare: Path) -> None:
    loaded = load_profile(str(bare), ["defaults.stop.within=5%", "workloads[0].extra.norandommap=1",
                                      "workloads[0].diskspd.affinity=0", "target.dir=/data"])
    profile = loaded.profile
    assert profile.defaults.stop is not None and not isinstance(profile.defaults.stop, bool)
    assert profile.defaults.stop.within == "5%"
    assert profile.workloads[0].extra == {"norandommap": 1}
    assert profile.workloads[0].engine_options == {"diskspd": {"affinity": 0}}
    assert profile.target.label == "dir:/data"


def test_a_set_of_an_unknown_key_is_still_refused_with_a_suggestion(bare: Path) -> None:
    # the parent is made: the key under it is pydantic's to refuse, with the loader's suggestion
    assert set_error(bare, "defaults.runtme=5s") == (
        f"{bare}: --set defaults.runtme=5s: defaults: unknown key 'runtme' (did you mean runtime?)")
    # a parent the schema does not have is not made
    assert set_error(bare, "defautls.runtime=5s") == (
        f"--set 'defautls.runtime=5s': {bare} has no 'defautls.runtime' (did you mean defaults?)")
    assert set_error(bare, "workloads[0].colour.x=1") == (
        f"--set 'workloads[0].colour.x=1': {bare} has no 'workloads[0].colour.x'")


@pytest.mark.parametrize(("spec", "key"), [
    ("hosts[0].address=x", "hosts[0].address"),  # a list is not made: which entry would it be?
    ("workloads[0].sections[0].bs=4k", "workloads[0].sections[0].bs"),
    ("repeats.x=1", "repeats.x"),  # a key of the schema, but no mapping (and not suggested for itself)
    ("defaults.bs.x=1", "defaults.bs.x"),
])
def test_a_set_makes_no_list_and_nothing_under_a_value(bare: Path, spec: str, key: str) -> None:
    assert set_error(bare, spec) == f"--set {spec!r}: {bare} has no {key!r}"


def test_the_cli_plans_with_a_set_of_a_missing_block(bare: Path, tmp_path: Path) -> None:
    out = diskbench("plan", "--profile", str(bare), "--set", "defaults.runtime=5s", db=tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    assert "has no" not in out.stderr


def test_the_examples_docs_profiles_md_shows() -> None:
    with pytest.raises(ProfileError) as caught:
        parse_profile("name: my-disk\ndescription: d\n\ntarget: {dir: /data, fs: ext4}\nworkloads:\n"
                      "  - {name: a, rw: read}\n", "my.yaml")
    assert str(caught.value) == "my.yaml:4: target: unknown key 'fs'"
    with pytest.raises(ProfileError) as caught:
        parse_profile("name: my-disk\nworkloads:\n  - name: a\n    rw: read\n    iodpeth: 4\n", "my.yaml")
    assert str(caught.value) == "my.yaml:5: workloads[0]: unknown key 'iodpeth' (did you mean iodepth?)"
