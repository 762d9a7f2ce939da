"""Reading a profile, in-process: each error as its one line (the file, the line and the key path, or the
``--set`` at fault), ``--set`` and the library's overrides applied and recorded, and the bundled names.
docs/profiles.md promises the form (`my.yaml:9: workloads[2].bs: '7q' is not a block size ...`); every
expected line is written out here."""

from __future__ import annotations

from pathlib import Path

import pytest

from diskbench.errors import ProfileError
from diskbench.profile import load_profile, parse_profile
from diskbench.profile.load import profile_json_schema, resolve_profile_path

QUOTE = "quote strings, e.g. --set 'name=\"my name\"'"


def problem(text: str, filename: str | None = "p.yaml") -> str:
    with pytest.raises(ProfileError) as caught:
        parse_profile(text, filename) if filename is not None else parse_profile(text)
    return str(caught.value)


def load_error(path: Path | str, overrides: list[str] | dict[str, object] | None = None) -> ProfileError:
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path), overrides or [])
    return caught.value


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "p.yaml"
    p.write_text("name: t\ndefaults:\n  runtime: 1s\nworkloads:\n  - name: a\n    rw: read\n")
    return p


# --- values that are not plain text or not finite -----------------------------------------------
ESCAPED = 'name: t\nworkloads:\n  - name: a\n    rw: read\n    extra: {k: "a\\eb"}\n'


def test_an_unsafe_value_names_its_line_and_key() -> None:
    assert problem(ESCAPED) == "p.yaml:5: workloads[0].extra.k: contains an escape (ESC); values must be plain text"
    # text without a file name is "<profile>"
    assert problem(ESCAPED, None) == ("<profile>:5: workloads[0].extra.k: contains an escape (ESC); values must be "
                                      "plain text")


def test_an_unsafe_value_in_the_file_keeps_its_line_beside_a_set(path: Path) -> None:
    path.write_text("name: t\ndefaults:\n  runtime: 1s\nworkloads:\n  - name: a\n    rw: read\n"
                    "    extra: {k: .inf}\n")
    assert str(load_error(path, ["defaults.runtime=5s"])) == (
        f"{path}:7: workloads[0].extra.k: inf is not a finite number")


def test_an_unsafe_value_a_set_gives_names_the_set(path: Path) -> None:
    assert str(load_error(path, ["workloads[0].rw=.nan"])) == (
        f"{path}: --set workloads[0].rw=.nan: workloads[0].rw: nan is not a finite number")
    # a key inside the one the --set gave
    assert str(load_error(path, ["workloads[0].extra={k: .nan}"])) == (
        f"{path}: --set workloads[0].extra={{k: .nan}}: workloads[0].extra.k: nan is not a finite number")
    assert str(load_error(path, ["workloads[0]={name: a, rw: read, bs: 7q}"])) == (
        f"{path}: --set workloads[0]={{name: a, rw: read, bs: 7q}}: workloads[0].bs: '7q' is not a block size "
        "(use e.g. 4k, 8k, 64k, 1M)")


# --- --set ------------------------------------------------------------------------------------------
def test_a_set_is_applied_and_recorded_with_the_profile_as_run(path: Path) -> None:
    loaded = load_profile(str(path), ["description=x=y", "workloads[0].bs=8k"])  # the first "=" splits
    assert loaded.profile.description == "x=y" and loaded.profile.workloads[0].bs == "8k"
    assert loaded.path == str(path) and loaded.overrides == ["description=x=y", "workloads[0].bs=8k"]
    # the file's key order, the set keys where they are, a new key last
    assert loaded.text == (f"# {path} with --set description=x=y --set workloads[0].bs=8k\n"
                           "name: t\ndefaults:\n  runtime: 1s\nworkloads:\n- name: a\n  rw: read\n  bs: 8k\n"
                           "description: x=y\n")


def test_the_library_gives_overrides_as_a_mapping(path: Path) -> None:
    loaded = load_profile(str(path), {"defaults.runtime": "5s", "workloads[0].iodepth": 4})
    assert loaded.profile.defaults.runtime == "5s" and loaded.profile.workloads[0].iodepth == 4
    assert loaded.overrides == ["defaults.runtime=5s", "workloads[0].iodepth=4"]
    assert loaded.text.startswith(f"# {path} with --set defaults.runtime=5s --set workloads[0].iodepth=4\nname: t\n")


def test_without_overrides_the_file_is_the_text(path: Path) -> None:
    loaded = load_profile(str(path))
    assert (loaded.path, loaded.text, loaded.overrides) == (str(path), path.read_text(), [])
    path.write_text("name: t\nworkloads:\n  - {name: a, rw: read, bs: 7q}\n")
    assert str(load_error(path)) == f"{path}:3: workloads[0].bs: '7q' is not a block size (use e.g. 4k, 8k, 64k, 1M)"


def test_a_file_that_is_no_profile_is_named_with_a_set_too(path: Path) -> None:
    path.write_text("- name: t\n")
    assert str(load_error(path, ["name=u"])) == f"{path}:1: a profile must be a YAML mapping with name and workloads"
    path.write_text("name: [t\n")
    assert str(load_error(path, ["name=u"])) == (
        f"{path}:2: invalid YAML: expected ',' or ']', but got '<stream end>'")


@pytest.mark.parametrize(("spec", "message"), [
    ("defaults.runtime", "--set 'defaults.runtime': use KEY.PATH=VALUE, e.g. defaults.runtime=5s"),
    ("=5", "--set '=5': use KEY.PATH=VALUE, e.g. defaults.runtime=5s"),
    ("name=a\nb", "--set 'name=a\\nb': contains a newline; values must be plain text"),
])
def test_a_set_that_is_no_key_path_and_value(path: Path, spec: str, message: str) -> None:
    assert str(load_error(path, [spec])) == message


@pytest.mark.parametrize(("spec", "key"), [
    ("workloads[9].bs=4k=x", "workloads[9].bs"),  # the value may hold "="
    ("workloads[9].description=a b", "workloads[9].description"),  # and spaces
    ("name.x=1", "name.x"),  # a key under a value that is no mapping
    ("workloads[3]=1", "workloads[3]"),  # past the end of a list
])
def test_a_set_of_a_key_the_file_lacks(path: Path, spec: str, key: str) -> None:
    assert str(load_error(path, [spec])) == f"--set {spec!r}: {path} has no {key!r}"


def test_a_set_value_that_is_not_yaml_says_how_to_quote(path: Path) -> None:
    bad = load_error(path, ["defaults.runtime=["])
    assert str(bad) == (f"--set 'defaults.runtime=[': not a YAML value: expected the node content, but found "
                        f"'<stream end>' ({QUOTE})")
    assert bad.hint == QUOTE
    deep = "[" * 65 + "]" * 65
    assert str(load_error(path, [f"defaults.runtime={deep}"])) == (
        f"--set 'defaults.runtime={deep}': nested more than 64 levels deep; a value is a few levels of mappings and "
        f"lists ({QUOTE})")
    tagged = load_error(path, ["defaults.runtime=!!python/object:os.system x"])
    assert str(tagged) == ("--set 'defaults.runtime=!!python/object:os.system x': not a YAML value: could not "
                           "determine a constructor for the tag 'tag:yaml.org,2002:python/object:os.system' "
                           f"({QUOTE})")


# --- problems of the whole profile and of a merge ------------------------------------------------------
TWO = "name: t\nworkloads:\n  - name: a\n    rw: read\n  - name: b\n    rw: read\n"


def test_a_problem_of_the_whole_profile_is_at_its_first_line_or_its_sets(path: Path) -> None:
    assert problem("name: t\nworkloads:\n  - {name: a, rw: read}\n  - {name: a, rw: read}\n") == (
        "p.yaml:1: workload name 'a' is used twice")
    path.write_text(TWO)
    assert str(load_error(path, ["workloads[1].name=a"])) == (
        f"{path}: --set workloads[1].name=a: workload name 'a' is used twice")
    assert str(load_error(path, ["workloads[1].name=a", "workloads[0].bs=8k"])) == (
        f"{path}: --set workloads[1].name=a --set workloads[0].bs=8k: workload name 'a' is used twice")


def test_a_merge_problem_names_the_sets_its_workload_takes(path: Path) -> None:
    """docs/profiles.md: stop.min in the file against a runtime set on the command line."""
    path.write_text("name: t\ndefaults:\n  stop:\n    min: 20s\nworkloads:\n  - name: a\n    rw: randread\n"
                    "  - name: b\n    rw: read\n    runtime: 40s\n")
    assert str(load_error(path, ["workloads[0].runtime=15s", "workloads[1].bs=8k"])) == (
        f"{path}:4: defaults.stop.min: stop.min (20s) is longer than the runtime (15s), the longest the job runs "
        "(workload 'a', line 6) (with --set workloads[0].runtime=15s)")


def test_a_step_name_clash_names_the_sets_of_that_workload(path: Path) -> None:
    path.write_text("name: p\nworkloads:\n  - {name: rr, rw: randread, iodepth: auto, knee: {max_iodepth: 64}}\n"
                    "  - {name: rr-iodepth2, rw: randread}\n")
    assert str(load_error(path, ["workloads[1].bs=8k", "workloads[0].bs=16k"])) == (
        f"{path}:4: workloads[1].name: 'rr-iodepth2' is the name of a step of the knee search of workload 'rr' "
        "(iodepth: auto names its steps rr-iodepthQ, Q from 1 to 64); rename one (with --set workloads[1].bs=8k)")


# --- pydantic's problems as one line each ----------------------------------------------------------------
def test_several_problems_are_one_message() -> None:
    assert problem("name: t\nworkloads:\n  - name: a\n    rw: randred\n  - name: b\n    rw: read\n    bs: 7q\n") == (
        "p.yaml: 2 problems:\n"
        "  p.yaml:4: workloads[0].rw: 'randred' is not allowed: Input should be 'read', 'write', 'randread', "
        "'randwrite', 'rw', 'readwrite', 'randrw', 'trim', 'randtrim' or 'trimwrite' (did you mean randread?)\n"
        "  p.yaml:7: workloads[1].bs: '7q' is not a block size (use e.g. 4k, 8k, 64k, 1M)")


def test_an_unknown_key_gets_the_closest_known_one_or_none() -> None:
    assert problem("name: t\nworkloads:\n  - {name: a, rw: read, iodpeth: 4}\n") == (
        "p.yaml:3: workloads[0]: unknown key 'iodpeth' (did you mean iodepth?)")
    # "size" is the closest key, but not close enough (difflib's ratio 0.62, under 0.7)
    assert problem("name: t\nworkloads:\n  - {name: a, rw: read, blocksize: 4k}\n") == (
        "p.yaml:3: workloads[0]: unknown key 'blocksize'")


def test_suggestions_come_from_the_keys_of_the_place() -> None:
    assert problem("name: t\nworkloads:\n  - {name: a, rw: read, ramp_tme: 2s}\n") == (
        "p.yaml:3: workloads[0]: unknown key 'ramp_tme' (did you mean ramp_time?)")
    assert problem("name: t\ntarget: {dir: /d, warmpu: true}\nworkloads:\n  - {name: a, rw: read}\n") == (
        "p.yaml:2: target: unknown key 'warmpu' (did you mean warmup?)")


def test_a_profile_that_is_not_a_profile() -> None:
    assert problem("name: t\0") == "p.yaml: a binary file (it holds NUL bytes), not a profile"
    assert problem("name: " + "[" * 65 + "]" * 65) == (
        "p.yaml:1: nested more than 64 levels deep; a profile is a few levels of mappings and lists")
    assert problem("- a\n") == "p.yaml:1: a profile must be a YAML mapping with name and workloads"


# --- finding the profile ---------------------------------------------------------------------------
def test_a_path_that_is_no_profile_file(tmp_path: Path) -> None:
    for name in ("x.yaml", "x.yml"):
        assert str(load_error(tmp_path / name)) == f"{tmp_path / name}: no such profile file"
    folder = tmp_path / "d.yaml"
    folder.mkdir()
    assert str(load_error(folder)) == f"{folder}: not a regular file; a profile is a YAML file"
    assert str(load_error(tmp_path)) == f"{tmp_path}: not a regular file; a profile is a YAML file"  # no suffix


def test_a_file_ending_in_yml_is_read(tmp_path: Path) -> None:
    p = tmp_path / "p.yml"
    p.write_text(TWO)
    assert resolve_profile_path(str(p)) == p and load_profile(str(p)).profile.name == "t"


def test_a_profile_name_is_one_line_and_an_unknown_one_lists_the_bundled_ones() -> None:
    with pytest.raises(ProfileError) as caught:
        resolve_profile_path("local\n")
    assert str(caught.value) == "profile name 'local\\n' contains a newline"
    with pytest.raises(ProfileError) as caught:
        resolve_profile_path("nope")
    hint = caught.value.hint or ""
    assert str(caught.value).startswith("no profile named 'nope' (bundled profiles: ")
    assert hint.startswith("bundled profiles: anf-nfs-scaleout, ") and ", local, " in hint
    assert hint.endswith(", premium-cache; or pass a path to a .yaml file")
    assert resolve_profile_path("local").name == "local.yaml"


def test_the_profile_schema_names_itself() -> None:
    schema = profile_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "diskbench profile"
