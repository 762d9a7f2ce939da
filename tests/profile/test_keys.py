"""profile/keys.py: which keys a place in a profile takes, seen through the loader's messages.

Every expected line is written out here, not computed by diskbench."""

from __future__ import annotations

from pathlib import Path

import pytest

from diskbench.errors import ProfileError
from diskbench.profile import load_profile, parse_profile


def test_a_key_read_under_its_old_name_is_a_key_of_its_place() -> None:
    # a host reads install_engine also as install_fio (its old name, machines.py's AliasChoices), so
    # the old name is a key of a host: a typo of it is matched against it. By hand, difflib's ratio
    # 2M/T: 'instal_fio' against 'install_fio' 2*10/21 = 0.95; against 'install_engine' only
    # 'instal', '_' and 'i' match, 2*8/24 = 0.67, under the 0.7 cutoff
    with pytest.raises(ProfileError) as caught:
        parse_profile("name: t\nhosts:\n  - {name: h, address: x, instal_fio: false}\n"
                      "workloads:\n  - {name: a, rw: read}\n", "p.yaml")
    assert str(caught.value) == "p.yaml:3: hosts[0]: unknown key 'instal_fio' (did you mean install_fio?)"


@pytest.mark.parametrize(("spec", "key"), [
    # an index into a mapping (defaults is one, not a list): the schema has nothing there
    ("defaults[0].runtime=5s", "defaults[0].runtime"),
    # the same under a union (stop: a mapping, or true/false)
    ("workloads[0].stop[0].within=5%", "workloads[0].stop[0].within"),
])
def test_a_set_that_indexes_a_mapping_is_refused_in_one_line(tmp_path: Path, spec: str, key: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: t\nworkloads:\n  - name: a\n    rw: read\n")
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path), [spec])
    assert str(caught.value) == f"--set {spec!r}: {path} has no {key!r}"
