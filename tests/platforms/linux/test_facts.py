"""Linux host facts and a target's filesystem, read from this machine."""

from __future__ import annotations

from diskbench.executors.local import LocalExecutor
from diskbench.platforms.linux.facts import host_facts, target_facts


def test_local_host_facts() -> None:
    facts = host_facts(LocalExecutor())
    assert facts["hostname"] and facts["kernel"] and facts["cpus"] >= 1 and facts["memory_bytes"] > 0


def test_target_facts_of_this_directory(tmp_path: object) -> None:
    facts = target_facts(LocalExecutor(), str(tmp_path))
    assert facts["fstype"] and facts["mountpoint"]


def test_target_facts_of_a_raw_device_name_its_disks_not_the_dev_file_system() -> None:
    """A raw target's path is its /dev node: the disks beneath it (an array's members too) are the facts,
    not devtmpfs, which findmnt would name for /dev/nvme0n2."""
    from ...fake import FakeExecutor

    lsblk = '{"blockdevices": [{"name": "md127", "type": "raid0", "children": [' \
            '{"name": "nvme1n1", "type": "disk", "model": "Microsoft NVMe Direct Disk v2", "rota": false}, ' \
            '{"name": "nvme2n1", "type": "disk", "model": "Microsoft NVMe Direct Disk v2", "rota": false}]}]}'
    ex = FakeExecutor({"lsblk -J -s -o NAME,TYPE,MODEL,ROTA,SCHED,SIZE,TRAN /dev/md127": (0, lsblk),
                       "findmnt ": (0, '{"filesystems": [{"target": "/dev", "fstype": "devtmpfs"}]}')})
    facts = target_facts(ex, "/dev/md127")
    assert [d["name"] for d in facts["devices"]] == ["nvme1n1", "nvme2n1"] and "fstype" not in facts
    assert not [c for c in ex.calls if c.startswith("findmnt")]
