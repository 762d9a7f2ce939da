"""A profile's Azure targets in the limit tables' terms: LUNs as declared, the OS disk, the temp disk."""

from __future__ import annotations

import pytest

from diskbench.profile import load_profile
from diskbench.profile.targets import parse_target
from diskbench.providers.azure.limits.bounds import SCALE_ENV, limits_for, machine_spec, target_spec
from diskbench.providers.azure.schema import Machine


def _machine(profile: str, name: str) -> Machine:
    m = next(m for m in load_profile(profile).profile.machine_entries if m.name == name)
    assert isinstance(m, Machine)
    return m


def test_luns_are_numbered_as_declared_and_caching_kept() -> None:
    spec = machine_spec(_machine("d8ds-premium", "d8ds-v4-premium"))
    assert [(d.lun, d.caching) for d in spec.data_disks] == [(0, "None"), (1, "None"), (2, "None"), (3, "ReadOnly")]
    assert spec.os_disk is not None and (spec.os_disk.size_gb, spec.os_disk.caching) == (30, "ReadWrite")


def test_the_striped_target_meets_the_vm_and_the_disks() -> None:
    m = _machine("d8ds-premium", "d8ds-v4-premium")
    labels = [lim.label() for lim in limits_for(m, m.named_targets()["nocache-writes"])]
    assert "Standard_D8ds_v4 uncached 12,800 IOPS" in labels and "3 x P30 15,000 IOPS" in labels
    cached = limits_for(m, m.named_targets()["cache-reads"])
    assert any(lim.cache_miss_only and lim.direction == "read" for lim in cached)


@pytest.mark.parametrize(("target", "kind"), [({"dir": "/"}, "os"), ("scratch", "os"), ({"dir": "/mnt/"}, "temp"),
                                              ("temp", "temp"), ({"nvme": "all"}, "nvme"), ({"lun": 2}, "lun"),
                                              ({"dir": "/data"}, None), ({"device": "/dev/sdc"}, None)])
def test_which_disk_a_target_is(target: object, kind: str | None) -> None:
    spec = target_spec(parse_target(target))
    assert (spec.kind if spec else None) == kind


def test_an_unknown_directory_gets_no_limits_rather_than_wrong_ones() -> None:
    m = _machine("e8-family", "e8ds-v4-os-nocache")
    assert limits_for(m, parse_target({"dir": "/srv"})) == []
    p4 = {lim.label() for lim in limits_for(m, parse_target({"dir": "/"}))}
    assert {"P4 120 IOPS", "P4 burst 3,500 IOPS"} <= p4


def test_a_lab_scale_shows_in_every_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SCALE_ENV, "0.1")
    m = _machine("d8ds-premium", "d8ds-v4-premium")
    labels = [lim.label() for lim in limits_for(m, m.named_targets()["nocache-writes"])]
    assert "Standard_D8ds_v4 uncached x0.1 1,280 IOPS" in labels
