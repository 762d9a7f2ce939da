"""Pre-flight against the cloud: every reason the run would fail, found at once, nothing created.

Flavor, image, network, the user's keypair and security group, volume types and the login user
are looked up; then the whole run (all machines together) must fit what is left of the project's
quota for instances, cores, RAM, volumes and gigabytes. The flavor's extra specs tell what local
NVMe it has (OVHcloud's i1 flavors pass NVMe through with ``pci_passthrough:alias``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .limits import FLAVOR_PREFIX, iotune
from .session import explained, find
from .spec import FlavorInfo, Problem, Spec, default_user

if TYPE_CHECKING:
    from openstack.connection import Connection


def preflight(conn: Connection, specs: Spec | Sequence[Spec],
              seen: dict[str, FlavorInfo] | None = None) -> list[Problem]:
    """All problems of the run's machines against the cloud; ``seen`` collects each flavor's facts."""
    specs = [specs] if isinstance(specs, Spec) else list(specs)
    problems: list[Problem] = []
    flavors: list[FlavorInfo] = []
    with explained("pre-flight"):
        for spec in specs:
            flavor = _check_machine(conn, spec, problems)
            if flavor is not None:
                flavors.append(flavor)
                if seen is not None:
                    seen[flavor.name] = flavor
        problems += _compute_quota(conn, flavors)
        problems += _volume_quota(conn, specs)
    return problems


def flavor_info(flavor: Any, image: Any = None) -> FlavorInfo:
    """A flavor's size and, from its extra specs, its local NVMe devices and its disks' throttle."""
    specs = dict(getattr(flavor, "extra_specs", None) or {})
    count, source = local_nvme(specs)
    notes = []
    if image is not None and str(image_properties(image).get("hw_disk_bus", "")).lower() == "nvme":
        notes.append(f"image {image.name} puts the root disk on an emulated NVMe bus (hw_disk_bus=nvme): "
                     "/dev/nvme0n1 is then not local NVMe")
    return FlavorInfo(id=flavor.id, name=flavor.name, vcpus=int(flavor.vcpus or 0), ram_mb=int(flavor.ram or 0),
                      disk_gb=int(flavor.disk or 0), ephemeral_gb=int(flavor.ephemeral or 0),
                      local_nvme=count, nvme_source=source, notes=tuple(notes),
                      iotune=iotune(specs, prefix=FLAVOR_PREFIX))


def local_nvme(extra_specs: dict[str, Any]) -> tuple[int | None, str]:
    """NVMe devices a flavor passes through: PCI aliases naming NVMe, or custom placement resources."""
    total, sources = 0, []
    alias = str(extra_specs.get("pci_passthrough:alias") or "")
    for item in filter(None, (part.strip() for part in alias.split(","))):
        name, _, count = item.partition(":")
        if "nvme" in name.lower():
            total += int(count) if count.isdigit() else 1
            sources.append(f"pci_passthrough:alias={alias}")
    for key, value in extra_specs.items():
        if key.startswith("resources:CUSTOM_") and "NVME" in key.upper() and str(value).isdigit():
            total += int(value)
            sources.append(f"{key}={value}")
    return (total, "; ".join(dict.fromkeys(sources))) if sources else (None, "")


def image_properties(image: Any) -> dict[str, Any]:
    props = dict(getattr(image, "properties", None) or {})
    for key in ("os_distro", "os_admin_user", "hw_disk_bus"):
        value = getattr(image, key, None)
        if value is not None:
            props.setdefault(key, value)
    return props


def _check_machine(conn: Connection, spec: Spec, problems: list[Problem]) -> FlavorInfo | None:
    flavor = find(conn.compute.find_flavor, spec.flavor, get_extra_specs=True)
    image = find(conn.image.find_image, spec.image)
    if flavor is None:
        names = sorted(f.name for f in conn.compute.flavors())
        problems.append(Problem(spec.name, f"flavor {spec.flavor!r} does not exist in this cloud",
                                "use one of " + ", ".join(names[:12]) + (" ..." if len(names) > 12 else "")))
    if image is None:
        problems.append(Problem(spec.name, f"image {spec.image!r} does not exist in this cloud",
                                "see `openstack image list` for the names"))
    elif image.status != "active":
        problems.append(Problem(spec.name, f"image {spec.image!r} is {image.status}, not active",
                                "use an active image"))
    if find(conn.network.find_network, spec.network) is None:
        problems.append(Problem(spec.name, f"network {spec.network!r} does not exist in this cloud",
                                "see `openstack network list` (OVHcloud's public network is Ext-Net)"))
    if spec.key_name and find(conn.compute.find_keypair, spec.key_name) is None:
        problems.append(Problem(spec.name, f"keypair {spec.key_name!r} does not exist",
                                "import it with `openstack keypair create --public-key ...`, or drop key_name"))
    if spec.security_group and find(conn.network.find_security_group, spec.security_group) is None:
        problems.append(Problem(spec.name, f"security group {spec.security_group!r} does not exist",
                                "create it, or drop security_group to let diskbench make one for the run"))
    problems += _volume_types(conn, spec)
    if image is not None and spec.user is None and default_user(image_properties(image), image.name) is None:
        problems.append(Problem(spec.name, f"cannot tell the login user of image {image.name!r}",
                                "set user: to the image's default user (e.g. ubuntu, debian)"))
    if flavor is None:
        return None
    info = flavor_info(flavor, image)
    if image is not None and (image.min_ram or 0) > info.ram_mb:
        problems.append(Problem(spec.name, f"image {image.name!r} needs {image.min_ram} MB RAM, flavor "
                                f"{info.name} has {info.ram_mb}", "use a larger flavor"))
    if image is not None and info.disk_gb and (image.min_disk or 0) > info.disk_gb:
        problems.append(Problem(spec.name, f"image {image.name!r} needs a {image.min_disk} GB disk, flavor "
                                f"{info.name} has {info.disk_gb}", "use a larger flavor"))
    return info


def _volume_types(conn: Connection, spec: Spec) -> list[Problem]:
    wanted = {v.type for v in spec.volumes if v.type}
    if not wanted:
        return []
    types = list(conn.block_storage.types())
    known = {t.name for t in types} | {t.id for t in types}
    return [Problem(spec.name, f"volume type {t!r} does not exist",
                    "use one of " + ", ".join(sorted(str(t2.name) for t2 in types)))
            for t in sorted(wanted - known)]


def _fits(what: str, need: int, used: int, limit: int, unit: str = "") -> Problem | None:
    if limit < 0 or used + need <= limit:  # -1: unlimited
        return None
    return Problem("quota", f"{what}: {need}{unit} needed, {max(limit - used, 0)}{unit} of {limit}{unit} free",
                   "ask the cloud's operator for more quota, or run fewer or smaller machines")


def _compute_quota(conn: Connection, flavors: list[FlavorInfo]) -> list[Problem]:
    if not flavors:
        return []
    a = conn.compute.get_limits().absolute
    checks = [_fits("instances", len(flavors), a.instances_used or 0, _limit(a.instances)),
              _fits("cores", sum(f.vcpus for f in flavors), a.total_cores_used or 0, _limit(a.total_cores)),
              _fits("RAM", sum(f.ram_mb for f in flavors), a.total_ram_used or 0, _limit(a.total_ram), " MB")]
    return [p for p in checks if p is not None]


def _volume_quota(conn: Connection, specs: list[Spec]) -> list[Problem]:
    count = sum(v.count for s in specs for v in s.volumes)
    if not count:
        return []
    a = conn.block_storage.get_limits().absolute
    gigabytes = sum(v.count * v.size_gb for s in specs for v in s.volumes)
    checks = [_fits("volumes", count, a.total_volumes_used or 0, _limit(a.max_total_volumes)),
              _fits("volume gigabytes", gigabytes, a.total_gigabytes_used or 0,
                    _limit(a.max_total_volume_gigabytes), " GB")]
    return [p for p in checks if p is not None]


def _limit(value: Any) -> int:
    return -1 if value is None else int(value)
