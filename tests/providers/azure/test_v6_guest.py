"""A v6-shaped guest whose image lacks azure-vm-utils: ``lun:`` by the namespace's nsid, and the raw temp disk.

Debian 12 and Ubuntu 20.04 images do not ship azure-vm-utils, so a v6 VM booted from them has no
``/dev/disk/azure/data/by-lun``. The lab's guest makes those links with its stand-in for azure-vm-utils'
rules (``tests/guestlab/files/80-lab-azure-disk.rules``); this test takes that file out in the guest and
lets udev drop the links, leaving what such an image has: the kernel's namespaces and the model udev
reports (set by the lab's ``61-lab-azure-nvme-model.rules``, as QEMU cannot set it). The guest is a host
of unknown origin, so it gets every provider's device map, Azure's included. ``lun: 1`` must then be the
namespace whose nsid is 3 on the remote controller, and ``{temp: true, raw: true}`` the temp disk itself,
left unformatted. No cap is asserted (no calibration).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import diskbench
from tests.guestlab.guest import GuestLab
from tests.guestlab.spec import DiskSpec, azure_v6

pytestmark = pytest.mark.guest

DEFAULTS = {"ioengine": "libaio", "direct": True, "bs": "4k", "iodepth": 4, "numjobs": 1, "size": "8M",
            "runtime": "2s", "ramp_time": "0s", "time_based": True}


def test_lun_by_nsid_and_the_raw_temp_disk_without_azure_vm_utils(guest_lab: GuestLab, tmp_path: Path) -> None:
    guest = guest_lab.start(azure_v6("v6bare", data=[DiskSpec("data0"), DiskSpec("data1")], temp_nvme=1))
    guest.check("rm /lib/udev/rules.d/80-lab-azure-disk.rules && udevadm control --reload && "
                "udevadm trigger --action=change --subsystem-match=block && udevadm settle --timeout=30")
    assert guest.check("ls -A /dev/disk/azure/data/by-lun /dev/disk/azure/local 2>/dev/null | grep -c . || true"
                       ).strip() == "0"  # no azure-vm-utils names left
    profile = tmp_path / "v6bare.yaml"
    profile.write_text(yaml.safe_dump({
        "name": "v6bare", "defaults": DEFAULTS,
        "hosts": [guest.profile_host(targets={"data": {"lun": 1, "raw": True},
                                              "scratchpad": {"temp": True, "raw": True}})],
        "workloads": [{"name": "lun1-write", "rw": "randwrite", "targets": ["data"]},
                      {"name": "temp-write", "rw": "randwrite", "targets": ["scratchpad"]}]}, sort_keys=False))
    out = diskbench("run", "--profile", str(profile), "--format", "json", db=tmp_path / "db.sqlite", timeout=600)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    targets = doc["run"]["targets"]
    (lun1,) = [f"/dev/{d['name']}" for d in targets["v6bare/data"]["devices"]]
    (temp,) = [f"/dev/{d['name']}" for d in targets["v6bare/scratchpad"]["devices"]]
    facts = guest.check(
        f"for d in {lun1} {temp}; do n=${{d#/dev/}}; echo $n $(cat /sys/class/block/$n/nsid) "
        f"$(readlink -f /sys/class/block/$n | grep -o '0000:00:[0-9a-f]*\\.0' | tail -1); done; "
        f"blkid -p -s TYPE -o value {temp} || echo none; "
        "{ cat /proc/mdstat 2>/dev/null || true; } | grep -c '^md' || true").splitlines()
    print(out.stderr, "\n".join(facts), sep="\n")
    assert facts[0] == f"{lun1.removeprefix('/dev/')} 3 0000:00:07.0"  # namespace 3 of the remote controller
    assert facts[1] == f"{temp.removeprefix('/dev/')} 1 0000:00:1a.0"  # the temp disk's own controller
    assert facts[2:] == ["none", "0"]  # raw: nothing formatted, no array (no /proc/mdstat: md never loaded)
    assert f"LUN 1 is {lun1}, namespace 3 of the NVMe 'MSFT NVMe Accelerator v1.0' controller" in out.stderr
    assert {(r["workload"], r["direction"]) for r in doc["results"]} == {("lun1-write", "write"),
                                                                        ("temp-write", "write")}
    assert all(r["ios"] > 0 for r in doc["results"])
    assert "fstype" not in targets["v6bare/scratchpad"] or not targets["v6bare/scratchpad"]["fstype"]
