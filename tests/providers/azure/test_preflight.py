"""Offline pre-flight: machines against their VM sizes, every problem listed at once."""

from __future__ import annotations

from pathlib import Path

from diskbench.profile import Profile, load_profile, parse_profile
from diskbench.providers.azure.preflight import check_machines
from diskbench.providers.azure.sizes import lookup

from ...conftest import diskbench


def check_profile(profile: Profile) -> list[object]:
    return list(check_machines(profile.machines))

BROKEN = """\
name: broken
workloads:
  - {name: a, rw: randwrite}
machines:
  - {name: no-premium, region: westeurope, size: Standard_E8_v4,
     data_disks: [{type: Premium_LRS, size_gb: 128}], target: {lun: 0}}
  - {name: eph-rw, region: westeurope, size: Standard_E8ds_v4,
     os_disk: {ephemeral: CacheDisk, caching: ReadWrite, size_gb: 300}, target: temp}
  - {name: no-temp, region: westeurope, size: Standard_E8s_v4, target: temp}
  - {name: too-many, region: westeurope, size: Standard_E8ds_v4,
     data_disks: [{count: 17, type: Premium_LRS, size_gb: 64}], target: {luns: [0, 1]}}
  - {name: no-nvme, region: westeurope, size: Standard_E8ds_v4, target: {nvme: all}}
  - {name: typo, region: westeurope, size: Standard_E8ds_v9, target: temp}
"""


def test_seed_profiles_pass() -> None:
    assert check_profile(load_profile("e8-family").profile) == []


def test_size_data() -> None:
    e8ds = lookup("standard_e8ds_v4")
    assert e8ds is not None and (e8ds.temp_disk_gb, e8ds.cached_iops, e8ds.uncached_iops) == (300, 77000, 12800)
    l8 = lookup("Standard_L8s_v2")
    assert l8 is not None and l8.nvme_disks == 1 and l8.uncached_mbps == 160
    assert lookup("Standard_E8_v4").premium_io is False  # type: ignore[union-attr]


def test_every_problem_is_listed_with_its_fix(tmp_path: Path) -> None:
    problems = [str(p) for p in check_profile(parse_profile(BROKEN))]
    expected = [
        "no-premium: Standard_E8_v4 does not support Premium storage (PremiumIO)",
        "eph-rw: an ephemeral OS disk of 300 GiB does not fit the CacheDisk (200 GiB) of Standard_E8ds_v4",
        "eph-rw: an ephemeral OS disk needs caching ReadOnly (set os_disk.caching: ReadOnly)",
        "no-temp: Standard_E8s_v4 has no temp disk to measure",
        "too-many: 17 data disks exceed the 16 that Standard_E8ds_v4 takes",
        "no-nvme: Standard_E8ds_v4 has no local NVMe disks",
        "typo: Standard_E8ds_v9 is not in diskbench's size data",
    ]
    for want in expected:
        assert any(p.startswith(want) for p in problems), (want, problems)
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN)
    db = tmp_path / "db.sqlite"
    for command in ("plan", "run"):
        out = diskbench(command, "--profile", str(path), db=db)
        assert out.returncode == 2
        assert out.stderr.count("pre-flight: ") == len(problems)
        last = out.stderr.strip().splitlines()[-1]
        assert last.startswith(f"error: {path}: profile 'broken': 7 pre-flight problem(s)")
    assert not db.exists() or "broken" not in diskbench("runs", db=db).stdout


def test_sizes_command(tmp_path: Path) -> None:
    out = diskbench("sizes", "--family", "E", db=tmp_path / "db.sqlite")
    assert out.returncode == 0 and "Standard_E8ds_v4" in out.stdout and "Standard_L8s_v2" not in out.stdout
    assert "77,000" in out.stdout and "CacheDisk, ResourceDisk" in out.stdout
    assert diskbench("sizes", "--family", "Q", db=tmp_path / "db.sqlite").returncode == 1
