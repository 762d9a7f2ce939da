"""Profile validation: bundled profiles load; malformed ones give one line naming file, line, key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diskbench.errors import ProfileError
from diskbench.profile import Profile, bundled_profiles, load_profile, parse_profile, profile_json_schema

from ..conftest import diskbench

GOOD = """\
name: t
defaults:
  bs: 4k
workloads:
  - name: a
    rw: randread
"""

# (profile text, the exact "line: key path: message" the user must see)
MALFORMED = [
    ("name: t\nworkloads:\n  - name: a\n    rw: randread\n  - name: b\n    rw: read\n  - name: c\n"
     "    rw: read\n    bs: 7q\n", "9: workloads[2].bs: '7q' is not a block size"),
    ("name: t\nworkloads:\n  - name: a\n    rw: randread\n    colour: red\n",
     "5: workloads[0]: unknown key 'colour'"),
    ("name: t\nbogus: 1\nworkloads:\n  - {name: a, rw: read}\n", "2: (top level): unknown key 'bogus'"),
    ("name: t\nworkloads:\n  - name: a\n    rw: sideways\n", "4: workloads[0].rw: 'sideways' is not allowed"),
    ("name: t\nworkloads:\n  - name: a\n    rw: read\n    iodepth: 0\n",
     "5: workloads[0].iodepth: Input should be greater than or equal to 1"),
    ("name: t\nworkloads:\n  - name: a\n    rw: read\n    iodepth: deep\n",
     "5: workloads[0].iodepth: Input should be a valid integer"),
    ("name: t\nworkloads:\n  - name: a\n    rw: read\n    numjobs: -2\n",
     "5: workloads[0].numjobs: Input should be greater than or equal to 1"),
    ("name: t\nworkloads:\n  - name: a\n    rw: randrw\n    rwmixread: 150\n",
     "5: workloads[0].rwmixread: Input should be less than or equal to 100"),
    ("name: t\nworkloads:\n  - name: a\n    rw: read\n    runtime: forever\n",
     "5: workloads[0].runtime: 'forever' is not a duration"),
    ("name: t\nworkloads:\n  - name: a\n    rw: read\n    size: lots\n",
     "5: workloads[0].size: 'lots' is not a size"),
    ("name: t\nworkloads:\n  - rw: read\n", "3: workloads[0]: required key 'name' is missing"),
    ("name: t\n", "1: (top level): required key 'workloads' is missing"),
    ("name: t\nworkloads: []\n", "2: workloads: List should have at least 1 item"),
    ("name: t\nworkloads:\n  - {name: a, rw: read}\n  - {name: a, rw: write}\n",
     "workload name 'a' is used twice"),
    ("name: t\nworkloads:\n  - name: a\n    rw: read\n  bad indent\n", "invalid YAML"),
    ("- just\n- a list\n", "1: a profile must be a YAML mapping"),
    ("name: t\nname: u\nworkloads:\n  - {name: a, rw: read}\n", "2: key 'name' appears twice"),
    ("name: t\nworkloads:\n  - name: a\n    rw: read\n    extra:\n      bad key: 1\n",
     "5: workloads[0].extra: 'bad key' is not an engine option name"),
    ("name: t\ntarget: floppy\nworkloads:\n  - {name: a, rw: read}\n", "2: target: 'floppy' is not a target"),
    ("name: t\nworkloads:\n  - name: a\n    rw: read\n    direct: maybe\n",
     "5: workloads[0].direct: Input should be a valid boolean"),
    ("name: t\nworkloads:\n  - name: a\n    rw: read\n    ioengine: 'lib aio'\n",
     "5: workloads[0].ioengine: 'lib aio' is not an fio ioengine name"),
    ("name: t\nworkloads:\n  - name: 'a b'\n    rw: read\n",
     "3: workloads[0].name: 'a b' is not a workload name"),
    ("name: t\nmachines:\n  - name: m\n    region: westeurope\n    size: Standard_E8ds_v4\n    target: temp\n"
     "    workloads: [nope]\nworkloads:\n  - {name: a, rw: read}\n",
     "'m' names unknown workload 'nope'"),
    ("name: t\nmachines:\n  - name: m\n    region: westeurope\n    size: Standard_E8ds_v4\n    target: temp\n"
     "    os_disk: {caching: Sometimes}\nworkloads:\n  - {name: a, rw: read}\n",
     "7: machines[0].os_disk.caching: 'Sometimes' is not allowed"),
    ("name: t\ndefaults:\n  bs: 0\nworkloads:\n  - {name: a, rw: read}\n",
     "3: defaults.bs: 0 is not a block size"),
    # targets are one model per kind: an option the kind does not take is an error, not ignored
    ("name: t\ntarget: {dir: /data, fs: ext4}\nworkloads:\n  - {name: a, rw: read}\n",
     "2: target: unknown key 'fs'"),
    ("name: t\ntarget: {dir: /data, device: /dev/sdb}\nworkloads:\n  - {name: a, rw: read}\n",
     "2: target: a target needs exactly one of scratch, dir, temp, device, stripe, nvme, lun, luns"),
    ("name: t\nhosts:\n  - name: h\n    address: 198.18.0.1\n    targets:\n      d: {lun: x}\n"
     "workloads:\n  - {name: a, rw: read}\n", "6: hosts[0].targets.d.lun: Input should be a valid integer"),
    ("name: t\nmachines:\n  - {name: m, provider: nowhere, target: temp}\nworkloads:\n  - {name: a, rw: read}\n",
     "3: machines[0]: provider must be one of"),
    ("name: t\nworkloads:\n  - name: a\n    sections:\n      - {name: r, rw: read}\n      - {name: r, rw: write}\n",
     "4: workloads[0].sections: section names must be unique"),
]


@pytest.mark.parametrize(("text", "expected"), MALFORMED)
def test_malformed_profile_gives_one_line(text: str, expected: str) -> None:
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "bad.yaml")
    message = str(info.value)
    assert message.startswith("bad.yaml")
    assert expected in message
    assert "\n" not in message


def test_at_least_fifteen_malformed_cases() -> None:
    assert len(MALFORMED) >= 15


def test_cli_reports_bad_profile_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(MALFORMED[0][0])
    for command in ("plan", "run", "render"):
        extra = ["--out", str(tmp_path / "o")] if command == "render" else []
        out = diskbench(command, "--profile", str(path), *extra, db=tmp_path / "db.sqlite")
        assert out.returncode == 2, out.stderr
        assert out.stderr.strip().count("\n") == 0
        assert out.stderr.startswith(f"error: {path}:9: workloads[2].bs: '7q' is not a block size")
        assert "Traceback" not in out.stderr


def test_defaults_and_builtin_defaults_fill_workloads() -> None:
    profile = parse_profile(GOOD)
    w = profile.resolved(profile.workloads[0])
    assert (w.bs, w.iodepth, w.numjobs, w.direct, w.ioengine) == ("4k", 1, 1, True, "libaio")


def test_missing_rw_is_an_error_naming_the_workloads_line() -> None:
    with pytest.raises(ProfileError) as caught:
        parse_profile("name: t\nworkloads:\n  - {name: x, rw: read}\n  - name: a\n", "p.yaml")
    assert str(caught.value) == "p.yaml:4: workloads[1]: no rw (set it or defaults.rw)"
    # a profile built in code has no file: the workload's name and place
    profile = Profile.model_validate({"name": "t", "workloads": [{"name": "a"}]})
    with pytest.raises(ProfileError, match=r"^workload 'a': workloads\[0\]: no rw \(set it or defaults.rw\)$"):
        profile.resolved(profile.workloads[0])


@pytest.mark.parametrize("name", sorted(bundled_profiles()))
def test_bundled_profiles_are_valid(name: str) -> None:
    loaded = load_profile(name)
    assert loaded.profile.name == name
    assert loaded.profile.description
    for w in loaded.profile.workloads:
        resolved = loaded.profile.resolved(w)
        assert resolved.rw or (resolved.sections and all(s.rw for s in resolved.sections))


def test_local_profile_has_the_seed_workloads() -> None:
    p = load_profile("local").profile
    by_name = {w.name: p.resolved(w) for w in p.workloads}
    assert (by_name["sync"].rw, by_name["sync"].bs, by_name["sync"].iodepth) == ("randwrite", "8k", 1)
    assert (by_name["async"].iodepth, by_name["async"].numjobs) == (256, 4)
    assert (by_name["randread-4k"].bs, by_name["randread-4k"].iodepth) == ("4k", 256)
    assert by_name["seqread-64k"].rw == "read"
    assert p.target.kind == "scratch"


def test_unknown_profile_name() -> None:
    with pytest.raises(ProfileError, match="no profile named 'nope'.*bundled profiles: "):
        load_profile("nope")


def test_schema_is_json_schema_and_printed_by_cli(tmp_path: Path) -> None:
    schema = profile_json_schema()
    assert schema["title"] == "diskbench profile"
    assert "workloads" in schema["required"]
    out = diskbench("profile-schema", db=tmp_path / "db.sqlite")
    assert out.returncode == 0
    assert json.loads(out.stdout)["properties"]["workloads"]["type"] == "array"


def test_set_overrides(tmp_path: Path) -> None:
    loaded = load_profile("l-series-nvme", ["machines[0].size=Standard_L32s_v2", "defaults.runtime=5s"])
    assert loaded.profile.machines[0].size == "Standard_L32s_v2"
    assert loaded.profile.defaults.runtime == "5s"
    assert loaded.text.startswith("# ") and "Standard_L32s_v2" in loaded.text  # what the run records
    out = diskbench("plan", "--profile", "l-series-nvme", "--set", "machines[0].size=Standard_L32s_v2",
                    db=tmp_path / "db.sqlite")
    assert out.returncode == 0 and "Standard_L32s_v2" in out.stdout
    bad = diskbench("plan", "--profile", "local", "--set", "workloads[9].bs=4k", db=tmp_path / "db.sqlite")
    assert bad.returncode == 2 and "has no 'workloads[9].bs'" in bad.stderr
    worse = diskbench("plan", "--profile", "local", "--set", "workloads[0].bs=7q", db=tmp_path / "db.sqlite")
    assert worse.returncode == 2 and "'7q' is not a block size" in worse.stderr


def test_set_errors_keep_the_files_lines_and_name_the_override(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: t\n\n\ndefaults:\n  runtime: 1s\nworkloads:\n  - {name: a, rw: read, bs: 7q}\n")
    with pytest.raises(ProfileError, match=r"p.yaml:7: workloads\[0\].bs: '7q' is not a block size"):
        load_profile(str(path), ["defaults.runtime=2s"])  # the file's own line, though the text was re-dumped
    path.write_text("name: t\nworkloads:\n  - {name: a, rw: read}\n")
    with pytest.raises(ProfileError, match=r"p.yaml: --set workloads\[0\].iodepth=0: workloads\[0\].iodepth"):
        load_profile(str(path), ["workloads[0].iodepth=0"])


def test_every_problem_at_once_with_its_line_and_a_suggestion(tmp_path: Path) -> None:
    text = ("name: t\nworkloads:\n  - name: a\n    rw: randred\n    iodpeth: 4\n"
            "  - name: b\n    rw: read\n    bs: 7q\n    numjob: 2\n")
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "bad.yaml")
    lines = str(info.value).splitlines()
    assert lines[0] == "bad.yaml: 4 problems:"
    assert [ln.strip().split(": ")[0] for ln in lines[1:]] == ["bad.yaml:4", "bad.yaml:5", "bad.yaml:8", "bad.yaml:9"]
    assert "(did you mean randread?)" in lines[1] and "unknown key 'iodpeth' (did you mean iodepth?)" in lines[2]
    assert "'7q' is not a block size" in lines[3] and "(did you mean numjobs?)" in lines[4]
    assert "more)" not in str(info.value)
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    out = diskbench("plan", "--profile", str(path), db=tmp_path / "db.sqlite")
    assert out.returncode == 2 and out.stderr.count("did you mean") == 3 and "Traceback" not in out.stderr
