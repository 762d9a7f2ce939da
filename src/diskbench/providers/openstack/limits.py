"""The limits an OpenStack cloud puts on a server's disks, in the attribution's terms.

Nova's libvirt driver throttles a server's local disks (root, ephemeral) by the flavor's extra specs
``quota:disk_{read,write,total}_{iops,bytes}_sec`` (with ``..._max`` and ``..._max_length`` for a
burst), and each Cinder volume by the QoS specs associated with its volume type (the same keys
without the prefix, plus ``..._per_gb`` that scale with the volume's size, with a ``..._per_gb_min``
floor). Passed-through NVMe devices are not throttled by either, so they get no limits. QoS specs
are readable by cloud admins only under Cinder's default policy: a user gets a note, not a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...attribution.limit import Limit
from ...profile.targets import TargetModel
from .schema import Machine

if TYPE_CHECKING:
    from openstack.connection import Connection

    from .spec import FlavorInfo

FLAVOR_PREFIX = "quota:disk_"
_DIRECTIONS = {"total": "any", "read": "read", "write": "write"}
_METRICS = {"iops": ("iops", 1.0), "bytes": ("mbps", 1e-6)}  # bytes/s -> MB/s (10^6), as the tables count


def iotune(specs: Mapping[str, Any], *, prefix: str = "") -> dict[str, float]:
    """``{total,read,write}_{iops,bytes}_sec[_max|_max_length|_per_gb|_per_gb_min]`` keys with a number."""
    out: dict[str, float] = {}
    for key, value in specs.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix):]
        if name.split("_", 1)[0] not in _DIRECTIONS or "_sec" not in name:
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if number > 0:
            out[name] = number
    return out


def iotune_limits(tune: Mapping[str, float], *, scope: str, source: str, size_gb: int | None = None,
                  count: int = 1) -> list[Limit]:
    """One limit per throttle ``tune`` sets, summed over ``count`` disks of ``size_gb`` striped together."""
    limits = []
    for direction, applies in _DIRECTIONS.items():
        for metric, (kind, scale) in _METRICS.items():
            base = f"{direction}_{metric}_sec"
            value = tune.get(base)
            if size_gb and tune.get(f"{base}_per_gb"):
                value = max(tune[f"{base}_per_gb"] * size_gb, tune.get(f"{base}_per_gb_min", 0.0))
            if value:
                limits.append(Limit(f"disk_{kind}", value * scale * count, scope, source, direction=applies))
            burst = tune.get(f"{base}_max")
            if burst and (not value or burst > value):
                seconds = tune.get(f"{base}_max_length", 1.0)  # libvirt's default length: one second
                limits.append(Limit(f"disk_burst_{kind}", burst * scale * count, f"{scope} burst", source,
                                    direction=applies, burst=True, minutes=seconds / 60))
    return limits


def flavor_limits(flavor: FlavorInfo) -> list[Limit]:
    """The flavor's throttle on each local disk (root and ephemeral)."""
    return iotune_limits(flavor.iotune, scope=f"flavor {flavor.name} per disk",
                         source=f"flavor {flavor.name} extra specs {FLAVOR_PREFIX}*")


def volume_limits(m: Machine, luns: tuple[int, ...], qos: Mapping[str, Mapping[str, float]],
                  default_type: str | None) -> list[Limit]:
    """The QoS of the volumes at ``luns`` (numbered in the order the profile declares them), summed
    when they are striped; none unless every volume's type has a QoS diskbench could read."""
    sizes = [(v.size_gb, v.type or default_type) for v in m.volumes for _ in range(v.count)]
    chosen = [sizes[n] for n in luns if n < len(sizes)]
    if not chosen or len({c for c in chosen}) != 1 or len(chosen) != len(luns):
        return []  # different volumes in one stripe: the slowest decides, which the tables cannot say
    size_gb, vtype = chosen[0]
    tune = qos.get(vtype or "")
    if not tune:
        return []
    scope = f"{len(chosen)} x {vtype} {size_gb} GB" if len(chosen) > 1 else f"{vtype} volume {size_gb} GB"
    return iotune_limits(tune, scope=scope, source=f"Cinder QoS of volume type {vtype}", size_gb=size_gb,
                         count=len(chosen))


def target_limits(m: Machine, target: TargetModel, flavor: FlavorInfo | None,
                  qos: Mapping[str, Mapping[str, float]], default_type: str | None = None) -> list[Limit]:
    """The limits of ``target``: the flavor's on the root disk (``/`` and scratch folders), the volume
    types' on volumes (``lun``/``luns``); none on NVMe passed through or a directory of unknown disk."""
    value = target.value
    if target.kind == "lun":
        return volume_limits(m, (int(value),), qos, default_type)
    if target.kind == "luns":
        return volume_limits(m, tuple(int(v) for v in value), qos, default_type)
    on_root = target.kind == "scratch" or (target.kind == "dir" and str(value).rstrip("/") == "")
    return flavor_limits(flavor) if on_root and flavor is not None else []


def volume_qos(conn: Connection, type_names: set[str]) -> tuple[dict[str, dict[str, float]], str | None, str]:
    """Each wanted volume type's QoS (name -> iotune), the cloud's default type, and a note when the
    cloud would not show its QoS specs (Cinder lets admins only, by default)."""
    from openstack import exceptions

    bs = conn.block_storage
    try:
        default = bs.get_type("default").name  # GET /types/default: the type of volumes that name none
    except exceptions.SDKException:
        default = None
    wanted = {t for t in type_names if t} | ({default} if default and "" in type_names else set())
    if not wanted:
        return {}, default, ""
    ids = {t.id: t.name for t in bs.types() if t.name in wanted or t.id in wanted}
    out: dict[str, dict[str, float]] = {}
    try:
        for spec in bs.qos_specs():
            tune = iotune(spec.specs or {})
            for assoc in bs.qos_spec_associations(str(spec.id)):
                if assoc.association_type == "volume_type" and assoc.id in ids and tune:
                    for key in (ids[assoc.id], assoc.id):  # a profile may name the type either way
                        out.setdefault(key, {}).update(tune)
    except exceptions.ForbiddenException:
        return {}, default, ("the cloud shows volume QoS to admins only: results on volumes are measured "
                             "but not attributed to a limit")
    except exceptions.SDKException as exc:  # limits only explain results: never a reason to stop the run
        return {}, default, f"could not read the volume types' QoS ({exc}): results on volumes are not attributed"
    return out, default, ""
