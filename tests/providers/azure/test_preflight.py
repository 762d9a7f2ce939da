"""Pre-flight refuses what Azure refuses, offline, each with its reason and page; the fake Resource
Manager (rules of its own, tests/fake_arm_rules.py) refuses the same machines when pre-flight is off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from diskbench.errors import DiskbenchError
from diskbench.executors.keys import KeyPair
from diskbench.profile import Profile, load_profile, parse_profile
from diskbench.providers.azure.errors import arm as arm_errors
from diskbench.providers.azure.preflight import check_machines
from diskbench.providers.azure.schema import Machine
from diskbench.providers.azure.session import AzureSession, connect
from diskbench.providers.azure.sizes import lookup
from diskbench.providers.azure.vmspec import vm_body

from ...conftest import diskbench
from ...fake_arm import SUB, FakeArm
from .impossible_machines import CASES, HELD_OUT, Impossible, profile
from .size_pages import sku

PROFILES = sorted(p.stem for p in (Path(__file__).resolve().parents[3] / "profiles").glob("*.yaml"))
ALL = {**CASES, **HELD_OUT}


def check_profile(profile: Profile) -> list[object]:
    return list(check_machines([m for m in profile.machines if isinstance(m, Machine)]))


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

FINE = """\
name: fine
workloads:
  - {name: a, rw: randread}
machines:
  - {name: v6-default-image, region: westeurope, size: Standard_D8s_v6, target: {dir: /var/tmp}}
  - {name: arm-arm-image, region: westeurope, size: Standard_D4ps_v5, image: 'Canonical:ubuntu-24_04-lts:server-arm64',
     target: {dir: /var/tmp}}
  - {name: ultra-zonal, region: westeurope, size: Standard_E8ds_v5, zone: '1',
     data_disks: [{type: UltraSSD_LRS, size_gb: 256, iops: 5000, mbps: 200}], target: {lun: 0}}
  - {name: v2-zonal, region: westeurope, size: Standard_D8s_v5, zone: '2',
     data_disks: [{type: PremiumV2_LRS, size_gb: 256}], target: {lun: 0}}
  - {name: big-uncached, region: westeurope, size: Standard_E16s_v5,
     data_disks: [{type: Premium_LRS, size_gb: 8192}], target: {lun: 0}}
  - {name: eph-temp-fits, region: westeurope, size: Standard_D2ds_v5,
     os_disk: {ephemeral: ResourceDisk, caching: ReadOnly}, target: {dir: /var/tmp}}
  - {name: eph-nvme, region: westeurope, size: Standard_D2ds_v6,
     os_disk: {ephemeral: NvmeDisk, caching: ReadOnly}, target: temp}
  - {name: lsv4-temp, region: westeurope, size: Standard_L8s_v4, target: temp}
  - {name: gen1-on-v5, region: westeurope, size: Standard_D4s_v5,
     image: 'Canonical:0001-com-ubuntu-server-jammy:22_04-lts', target: {dir: /var/tmp}}
  - {name: unknown-image, region: westeurope, size: Standard_D4s_v6, image: 'Someone:custom:gen1',
     target: {dir: /var/tmp}}
"""


def test_seed_profiles_pass() -> None:
    assert check_profile(load_profile("e8-family").profile) == []


@pytest.mark.parametrize("name", PROFILES)
def test_every_bundled_profile_fits_its_sizes(name: str) -> None:
    assert check_profile(load_profile(name).profile) == []


def test_legal_machines_of_every_kind_pass() -> None:
    assert [str(p) for p in check_profile(parse_profile(FINE))] == []


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
        "eph-rw: an ephemeral OS disk needs caching ReadOnly (set os_disk.caching: ReadOnly;",
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


@pytest.mark.parametrize("table", [CASES, HELD_OUT], ids=["cases", "held-out"])
def test_impossible_machines_are_refused_offline_with_reason_and_page(table: dict[str, Impossible]) -> None:
    machines = parse_profile(profile(table)).machines
    problems = {name: [str(p) for p in check_machines([m for m in machines if m.name == name])] for name in table}
    for name, case in table.items():
        found = [p for p in problems[name] if case.reason in p]
        assert found, (name, case.reason, problems[name])
        assert any(case.page in p for p in found), (name, case.page, found)


def test_plan_of_an_impossible_machine_fails_in_one_line_per_problem(tmp_path: Path) -> None:
    path = tmp_path / "impossible.yaml"
    path.write_text(profile(CASES))
    out = diskbench("plan", "--profile", str(path), db=tmp_path / "db.sqlite")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("pre-flight: ")]
    assert {line.split(":")[1].strip() for line in lines} == set(CASES)
    bypassed = diskbench("plan", "--profile", str(path), db=tmp_path / "db.sqlite",
                         env={"DISKBENCH_AZURE_PREFLIGHT": "off"})
    assert bypassed.returncode == 0, bypassed.stderr


# --- the other witness: the fake Resource Manager's own rules -------------------------------------
@pytest.fixture(scope="module")
def fake() -> Iterator[FakeArm]:
    sizes = {lookup_name(case) for case in ALL.values()}
    arm = FakeArm(skus=[sku(name) for name in sorted(sizes)], usages=[]).start()
    try:
        yield arm
    finally:
        arm.stop()


def lookup_name(case: Impossible) -> str:
    return case.machine.split("size: ")[1].split(",")[0].strip()


@pytest.mark.parametrize("name", sorted(ALL))
def test_the_fake_resource_manager_refuses_each_in_one_line(fake: FakeArm, name: str) -> None:
    """With pre-flight out of the way, Azure's own refusal comes back as one line naming the machine."""
    machine = next(m for m in parse_profile(profile({name: ALL[name]})).machines if isinstance(m, Machine))
    fake.groups["rg"] = {"id": f"/subscriptions/{SUB}/resourceGroups/rg", "name": "rg", "location": "westeurope",
                         "tags": {}, "properties": {"provisioningState": "Succeeded"}}
    session: AzureSession = connect(SUB, base_url=fake.url, token="t", polling_interval=0)
    body = vm_body(machine, tags={}, nic_id=f"/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.Network/"
                   "networkInterfaces/nic", login=_keys()[0], host_key=_keys()[1])
    with pytest.raises(DiskbenchError) as info, arm_errors(f"{name}: creating {machine.size}"):
        session.compute.virtual_machines.begin_create_or_update("rg", name, body).result()
    text = str(info.value)
    assert text.startswith(f"{name}: creating {machine.size}: Azure said {ALL[name].code}: "), text
    assert "\n" not in text and "Traceback" not in text


_KEYS: list[KeyPair] = []


def _keys() -> list[KeyPair]:
    if not _KEYS:
        _KEYS.extend([KeyPair.generate("login"), KeyPair.generate("host")])
    return _KEYS


def test_run_with_preflight_off_fails_on_azure_refusal_without_traceback(fake: FakeArm, tmp_path: Path) -> None:
    name = "e16s-v5-8tib-cached"  # a held-out machine: the whole `run`, as a user meets Azure's refusal
    path = tmp_path / "one.yaml"
    path.write_text(profile({name: ALL[name]}))
    env = {"DISKBENCH_ARM_URL": fake.url, "DISKBENCH_ARM_TOKEN": "t", "AZURE_SUBSCRIPTION_ID": SUB,
           "DISKBENCH_AZURE_PREFLIGHT": "off"}
    out = diskbench("run", "--profile", str(path), "--ssh-source", "127.0.0.1", db=tmp_path / "db.sqlite", env=env)
    assert out.returncode not in (0, 70) and "Traceback" not in out.stderr, out.stderr
    failed = [line for line in out.stderr.splitlines() if line.startswith(f"FAILED: {name}: creating ")]
    assert failed and f"Azure said {ALL[name].code}: " in failed[0], out.stderr
    assert not [g for g in fake.groups if g.startswith("diskbench-")]  # the run's group is gone again
    offline = diskbench("plan", "--profile", str(path), db=tmp_path / "db.sqlite")
    assert offline.returncode == 2 and ALL[name].reason in offline.stderr


def test_nvme_sizes_need_an_nvme_image_and_a_linux_host_for_their_raw_temp_disk() -> None:
    """The NVMe image check (images.json) and the rule vmspec asks the controller by are one: a v6 size with a
    SCSI-only image is refused, with the NVMe-tagged default it passes; a Windows machine cannot use a v6
    temp disk, which comes raw and which diskbench formats on Linux only."""
    from diskbench.providers.azure.preflight import nvme_only

    d2ds_v6, d2ds_v5 = lookup("Standard_D2ds_v6"), lookup("Standard_D2ds_v5")
    assert d2ds_v6 is not None and d2ds_v5 is not None and nvme_only(d2ds_v6) and not nvme_only(d2ds_v5)
    profile = parse_profile("""\
name: v6
workloads:
  - {name: a, rw: randread}
machines:
  - {name: scsi-image, region: westeurope, size: Standard_D2ds_v6, image: 'Debian:debian-12:12', target: temp}
  - {name: linux-temp, region: westeurope, size: Standard_D2ds_v6, target: temp}
  - {name: windows-temp, region: westeurope, size: Standard_D2ds_v6, os: windows, target: temp}
  - {name: windows-v5-temp, region: westeurope, size: Standard_D2ds_v5, os: windows, target: temp}
""")
    problems = [str(p) for p in check_profile(profile)]
    assert any(p.startswith("scsi-image: Standard_D2ds_v6 attaches disks over NVMe only; image Debian:debian-12:12")
               for p in problems), problems
    assert any(p.startswith("windows-temp: Standard_D2ds_v6's temp disks are raw NVMe devices") and
               "enable-nvme-temp-faqs" in p for p in problems), problems
    assert not [p for p in problems if p.startswith(("linux-temp", "windows-v5-temp"))], problems


def test_a_raw_temp_target_needs_a_size_whose_temp_disk_comes_raw(tmp_path: Path) -> None:
    """temp: {raw: true} hands the temp disk to the engine: fine where it comes raw (v6's NVMe temp disks),
    refused offline where the agent formats and mounts it (a SCSI temp disk), in one line naming the key."""
    path = tmp_path / "raw.yaml"
    path.write_text("""\
name: raw-temp
workloads:
  - {name: a, rw: randread}
machines:
  - {name: v6, region: westeurope, size: Standard_D4ds_v6, target: {temp: true, raw: true}}
  - {name: v6-formatted, region: westeurope, size: Standard_D4ds_v6, target: {temp: true, raw: false}}
  - {name: v4, region: westeurope, size: Standard_D8ds_v4, target: {temp: true, raw: true}}
  - {name: v5-windows, region: westeurope, size: Standard_D2ds_v5, os: windows, target: {temp: true, raw: true}}
""")
    problems = [str(p) for p in check_profile(load_profile(str(path)).profile)]
    assert [p.split(":")[0] for p in problems] == ["v4", "v5-windows"], problems
    assert problems[0].startswith("v4: temp: raw: true takes a temp disk that comes raw; Standard_D8ds_v4's is a "
                                  "SCSI disk the Azure agent formats and mounts at /mnt")
    assert "as D:" in problems[1] and "enable-nvme-temp-faqs" in problems[1]
    out = diskbench("plan", "--profile", str(path), db=tmp_path / "db.sqlite")
    assert out.returncode == 2 and "temp: raw: true takes a temp disk that comes raw" in out.stderr
    assert "\n" not in next(ln for ln in out.stderr.splitlines() if "raw: true" in ln)
