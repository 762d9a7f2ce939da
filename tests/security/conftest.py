"""Fixtures of the trust tests: loop devices of their own, removed by their own id."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[str]:
    """A 96 MiB loop device on a file of this test's; whatever is mounted from it is unmounted and
    it is detached at the end, also when the test fails."""
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices)")
    backing = tmp_path / "loop.img"
    with open(backing, "wb") as fh:
        fh.truncate(96 << 20)
    dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(backing)],
                         capture_output=True, text=True, check=True).stdout.strip()
    try:
        yield dev
    finally:
        for point in subprocess.run(["findmnt", "-n", "-o", "TARGET", "-S", dev], capture_output=True,
                                    text=True, check=False).stdout.split():
            subprocess.run(["umount", "-l", point], check=False)
        subprocess.run(["losetup", "-d", dev], check=False)


def writes_of(dev: str) -> int:
    """Write requests the kernel completed on ``dev`` (/sys/block/X/stat, field 5)."""
    return int(Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()[4])


def fs_type(dev: str) -> str:
    return subprocess.run(["blkid", "-p", "-s", "TYPE", "-o", "value", dev], capture_output=True, text=True,
                          check=False).stdout.strip()
