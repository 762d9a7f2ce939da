"""What a run asks OpenStack for, what it got, and the names and labels that find it again.

The run id goes into every name (``diskbench-<run>``, ``diskbench-<run>-<machine>``), the server's
tags and metadata and the volumes' metadata: after a crash, those are the only memory there is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from diskbench.errors import DiskbenchError

from ..lifecycle import DEFAULT_LIFETIME, MARKER, labels, when

__all__ = ["DEFAULT_LIFETIME", "MARKER", "labels", "when"]  # the labels every provider writes, used from here
SSH_PORT_KEY = "diskbench-ssh-port"  # a server whose SSH is forwarded elsewhere (a NAT, a lab) says so here

# Login users of the common cloud images, by Glance's os_distro (the image's os_admin_user wins).
USERS = {"ubuntu": "ubuntu", "debian": "debian", "centos": "centos", "fedora": "fedora", "rocky": "rocky",
         "almalinux": "almalinux", "rhel": "cloud-user", "opensuse": "opensuse", "sles": "sles",
         "arch": "arch", "freebsd": "freebsd"}


@dataclass(frozen=True)
class VolumeSpec:
    """``count`` Cinder volumes of ``size_gb`` each, of volume type ``type`` (the cloud's default if None)."""

    size_gb: int
    type: str | None = None
    count: int = 1


@dataclass(frozen=True)
class Spec:
    """One machine of a run on OpenStack."""

    name: str
    flavor: str
    image: str
    network: str
    cloud: str | None = None  # a clouds.yaml entry; None: OS_CLOUD or the OS_* variables
    key_name: str | None = None  # the user's existing keypair instead of a per-run one
    security_group: str | None = None  # an existing group instead of a per-run one admitting SSH
    availability_zone: str | None = None
    volumes: tuple[VolumeSpec, ...] = ()
    user: str | None = None  # login user; default: the image's os_admin_user, else by its os_distro


@dataclass(frozen=True)
class Problem:
    """One reason not to create anything, with what to do about it."""

    subject: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        return f"{self.subject}: {self.message}" + (f" ({self.hint})" if self.hint else "")


@dataclass(frozen=True)
class FlavorInfo:
    """A flavor's size and the local NVMe its extra specs promise (None: they do not say)."""

    id: str
    name: str
    vcpus: int
    ram_mb: int
    disk_gb: int
    ephemeral_gb: int
    local_nvme: int | None = None
    nvme_source: str = ""  # the extra spec that told, e.g. "pci_passthrough:alias=nvme-1800g:4"
    notes: tuple[str, ...] = ()
    iotune: dict[str, float] = field(default_factory=dict)  # quota:disk_* extra specs: each local disk's throttle


@dataclass(frozen=True)
class HostKey:
    """An SSH host key as the console printed it; ``fingerprint`` as ``ssh-keygen -lf`` shows it."""

    type: str
    base64: str
    fingerprint: str

    @property
    def line(self) -> str:
        return f"{self.type} {self.base64}"


@dataclass(frozen=True)
class AttachedVolume:
    id: str
    name: str
    size_gb: int
    type: str
    device: str | None


@dataclass(frozen=True)
class Created:
    """A server ready for SSH: where it is, who logs in, and the host key to insist on."""

    run_id: str
    name: str
    server_id: str
    address: str
    port: int
    user: str
    host_key: HostKey
    host_keys: tuple[HostKey, ...]
    flavor: FlavorInfo
    key_name: str
    security_group: str | None
    volumes: tuple[AttachedVolume, ...] = ()


@dataclass
class Leftover:
    """What one run left in the cloud, and why ``cleanup`` would delete it."""

    run_id: str
    reason: str
    created: datetime | None = None
    expires: datetime | None = None
    resources: list[str] = field(default_factory=list)


def check_run_id(run_id: str) -> str:
    """Run ids go into names and Nova tags (no '/' or ','): keep them to letters, digits, '-', '_', '.'."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}", run_id):
        raise DiskbenchError(f"run id {run_id!r} cannot name OpenStack resources",
                             hint="use up to 40 letters, digits, '.', '_' or '-'")
    return run_id


def run_prefix(run_id: str) -> str:
    return f"{MARKER}-{check_run_id(run_id)}"


def server_name(run_id: str, machine: str) -> str:
    return f"{run_prefix(run_id)}-{machine}"


def run_tag(run_id: str) -> str:
    return f"{MARKER}-run-{run_id}"


def default_user(image_properties: dict[str, object], image_name: str) -> str | None:
    """The login user of an image: its os_admin_user, else the usual user of its os_distro or name."""
    admin = image_properties.get("os_admin_user")
    if isinstance(admin, str) and admin:
        return admin
    distro = str(image_properties.get("os_distro") or "").lower()
    if distro in USERS:
        return USERS[distro]
    lowered = image_name.lower()
    return next((user for key, user in USERS.items() if key in lowered), None)
