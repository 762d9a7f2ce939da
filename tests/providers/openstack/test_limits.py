"""OpenStack limits: the flavor's quota:disk_* on the root disk, Cinder QoS on volumes, none on NVMe.

The QoS lookup goes through the real openstacksdk to the fake Cinder (qos-specs, their associations,
the default type), including the 403 an ordinary user gets under Cinder's default policy.
"""

from __future__ import annotations

from typing import Any

import pytest

from diskbench.profile.targets import parse_target
from diskbench.providers.openstack.limits import iotune, target_limits, volume_qos
from diskbench.providers.openstack.preflight import flavor_info
from diskbench.providers.openstack.schema import Machine
from tests.fake_openstack import FakeOpenStack

CLASSIC, HIGH_SPEED = "5c1e3a52-0f5e-4a4e-8a62-6e8f1f3c2b10", "7d2f4b63-1a6f-4b5f-9b73-7f9a2a4d3c21"


class _Flavor:
    id, name, vcpus, ram, disk, ephemeral = "b2-lab", "b2-lab", 2, 2048, 20, 0
    extra_specs = {"quota:disk_total_iops_sec": "150", "quota:disk_read_bytes_sec": "52428800",
                   "quota:disk_total_iops_sec_max": "600", "quota:disk_total_iops_sec_max_length": "30",
                   "hw:cpu_policy": "dedicated", "quota:vif_inbound_average": "10240"}


def _machine(**changes: Any) -> Machine:
    doc = {"name": "db01", "provider": "openstack", "flavor": "b2-lab", "image": "Debian 12", "network": "Ext-Net",
           "volumes": [{"size_gb": 100, "type": "high-speed", "count": 2}, {"size_gb": 50}],
           "target": {"scratch": True}, **changes}
    return Machine.model_validate(doc)


def _limits(target: dict[str, Any], qos: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    found = target_limits(_machine(), parse_target(target), flavor_info(_Flavor()), qos or {}, "classic")
    return {(lim.kind, lim.direction): lim for lim in found}


def test_the_flavors_quota_bounds_the_root_disk_only() -> None:
    info = flavor_info(_Flavor())
    assert info.iotune == {"total_iops_sec": 150.0, "read_bytes_sec": 52428800.0, "total_iops_sec_max": 600.0,
                           "total_iops_sec_max_length": 30.0}  # network quotas and other specs are not disks'
    for target in ({"scratch": True}, {"dir": "/"}):
        found = _limits(target)
        assert found[("disk_iops", "any")].value == 150
        assert found[("disk_iops", "any")].scope == "flavor b2-lab per disk"
        assert found[("disk_mbps", "read")].value == pytest.approx(52.4288)  # bytes/s -> MB/s
        burst = found[("disk_burst_iops", "any")]
        assert (burst.value, burst.burst, burst.minutes) == (600, True, 0.5)
    assert _limits({"nvme": "all"}) == {}  # passed through: not throttled by the flavor
    assert _limits({"dir": "/data"}) == {}  # a directory on a disk diskbench cannot name


def test_volume_qos_scales_per_gb_and_sums_a_stripe() -> None:
    qos = {"high-speed": {"total_iops_sec_per_gb": 30.0, "total_iops_sec_per_gb_min": 4000.0,
                          "total_bytes_sec": 200e6}, "classic": {"total_iops_sec": 250.0}}
    one = _limits({"lun": 0}, qos)
    assert one[("disk_iops", "any")].value == 4000  # 30 x 100 GB is under the floor
    assert one[("disk_iops", "any")].source == "Cinder QoS of volume type high-speed"
    both = _limits({"luns": [0, 1], "raid": 0}, qos)
    assert both[("disk_iops", "any")].value == 8000 and both[("disk_mbps", "any")].value == 400
    assert both[("disk_iops", "any")].scope == "2 x high-speed 100 GB"
    assert _limits({"lun": 2}, qos)[("disk_iops", "any")].value == 250  # no type: the cloud's default
    assert _limits({"luns": [1, 2], "raid": 0}, qos) == {}  # unlike volumes striped: not attributed
    assert _limits({"lun": 0}) == {}  # no QoS known


def test_iotune_ignores_what_is_not_a_disk_throttle() -> None:
    assert iotune({"consumer": "front-end", "total_iops_sec": "500", "read_iops_sec": "x", "size_iops_sec": "4096",
                   "write_bytes_sec": "0"}) == {"total_iops_sec": 500.0}


def test_volume_qos_read_through_the_sdk(fake: FakeOpenStack, conn: Any) -> None:
    fake.qos_specs = [{"id": "q1", "name": "hs", "consumer": "front-end", "types": [HIGH_SPEED],
                       "specs": {"total_iops_sec": "3000", "total_bytes_sec": "209715200"}},
                      {"id": "q2", "name": "unused", "consumer": "both", "types": [],
                       "specs": {"total_iops_sec": "1"}}]
    qos, default, note = volume_qos(conn, {"high-speed", ""})
    assert qos["high-speed"] == {"total_iops_sec": 3000.0, "total_bytes_sec": 209715200.0}
    assert qos[HIGH_SPEED] == qos["high-speed"]  # a profile may name the type by id
    assert "classic" not in qos and default == "classic" and note == ""


def test_volume_qos_forbidden_is_a_note(fake: FakeOpenStack, conn: Any) -> None:
    fake.qos_forbidden = True
    qos, _, note = volume_qos(conn, {"high-speed"})
    assert qos == {} and "admins only" in note
