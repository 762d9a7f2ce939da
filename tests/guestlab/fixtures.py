"""pytest fixtures of the guest lab: the session's image and a GuestLab per test.

``guest_image`` builds the image once per session (or finds it in the cache; ``.ci/run`` builds it
before the suite so its 80 s show up there). ``guest_lab`` gives each test its own lab, closed at
teardown also when the test fails. Tests that share one expensive guest between several test
functions open a lab themselves with ``open_lab`` in a module-scoped fixture.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from .guest import GuestLab
from .image import GuestImage, ImageError, build_image

HOST_TOOLS = ("qemu-system-x86_64", "qemu-img", "ssh-keygen", "debootstrap")


def lab_unavailable() -> str | None:
    """Why guests cannot run here (then guest tests skip with this reason), or None."""
    if os.geteuid() != 0:
        return "the guest lab needs root (image build, fallocate'd backing files)"
    missing = [t for t in HOST_TOOLS if shutil.which(t) is None]
    if missing:
        return f"missing {', '.join(missing)}: apt-get install -y qemu-system-x86 qemu-utils debootstrap openssh-client"
    return None


@pytest.fixture(scope="session")
def guest_image() -> GuestImage:
    """The cached guest image of the current recipe (built now if the recipe changed)."""
    why = lab_unavailable()
    if why:
        pytest.skip(why)
    try:
        return build_image()
    except ImageError as exc:
        pytest.fail(f"guest image: {exc}")


@contextlib.contextmanager
def open_lab(image: GuestImage, workdir: Path, disks_in: Path | None = None) -> Iterator[GuestLab]:
    """A GuestLab that is closed (guests stopped, files deleted) however the block ends."""
    lab = GuestLab(image, workdir, disks_in=disks_in)
    try:
        yield lab
    finally:
        lab.close()


@pytest.fixture
def guest_lab(guest_image: GuestImage, tmp_path: Path) -> Iterator[GuestLab]:
    """This test's own lab: ``guest_lab.start(spec)`` boots guests; all are stopped at teardown."""
    with open_lab(guest_image, tmp_path) as lab:
        yield lab
