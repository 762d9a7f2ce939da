"""Create one machine of a run: keypair, security group, server, volumes; return it ready for SSH.

Order matters for safety. The journal entry comes first, then the per-run keypair and security
group (SSH from the caller's address only), then the tagged server and its volumes. The host key
is taken from the console (``hostkeys``), never from the first SSH connection. Any failure or
interrupt deletes everything of the run before the error is raised, so a failed run leaves nothing.
"""

from __future__ import annotations

import base64
import ipaddress
import threading
from collections.abc import Callable
from contextlib import suppress
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from diskbench.errors import DiskbenchError

from .hostkeys import host_keys
from .journal import Journal
from .preflight import flavor_info, image_properties
from .session import Waits, explained, find
from .spec import (
    DEFAULT_LIFETIME,
    MARKER,
    SSH_PORT_KEY,
    AttachedVolume,
    Created,
    HostKey,
    Spec,
    check_run_id,
    default_user,
    labels,
    run_prefix,
    run_tag,
    server_name,
)
from .teardown import teardown

if TYPE_CHECKING:
    from openstack.connection import Connection

_access_lock = threading.Lock()  # machines of one run provisioned in threads share its keypair and group
NO_HOST_HINT = ("the cloud has no capacity for this flavor now: try another availability zone, region or flavor, "
                "or later")


def provision(conn: Connection, run_id: str, spec: Spec, ssh_source_cidr: str, public_key: str | None, *,
              journal: Journal | None = None, waits: Waits | None = None, lifetime: timedelta = DEFAULT_LIFETIME,
              user_data: str | None = None, line: Callable[[str], None] = lambda text: None,
              teardown_on_error: bool = True) -> Created:
    """One machine of run ``run_id``, ACTIVE, volumes attached, its host key read from the console.

    ``public_key`` (OpenSSH line) becomes the run's keypair unless ``spec.key_name`` names the
    user's own. On any error, Ctrl-C or SIGTERM everything of the run is deleted (unless
    ``teardown_on_error`` is False) and the error is raised as one line.
    """
    waits = waits or Waits()
    check_run_id(run_id)
    cidr = source_cidr(ssh_source_cidr)
    if spec.key_name is None and not public_key:
        raise DiskbenchError(f"{spec.name}: no public key for the run's keypair", hint="pass one, or set key_name")
    if journal is not None:
        journal.write("creating", run=run_id, cloud=spec.cloud, machine=spec.name)
    try:
        return _provision(conn, run_id, spec, cidr, public_key, waits, labels(run_id, lifetime=lifetime),
                          user_data, line)
    except BaseException:
        if teardown_on_error:
            try:
                line(f"openstack: deleting what run {run_id} created")
                teardown(conn, run_id, journal=journal, waits=Waits(poll=waits.poll, delete=waits.delete))
            except Exception as exc:  # noqa: BLE001 - the first error is the one to show
                line(f"openstack: teardown after the failure failed too: {exc}")
        raise


def source_cidr(text: str) -> str:
    """The network allowed to reach SSH: a CIDR, a bare address (/32 or /128) or ``any``."""
    if text == "any":
        return "0.0.0.0/0"
    try:
        return str(ipaddress.ip_network(text, strict=False))
    except ValueError:
        raise DiskbenchError(f"{text!r} is not an address or network for the SSH rule",
                             hint="pass e.g. 203.0.113.7 or 203.0.113.0/24, or any") from None


def _provision(conn: Connection, run_id: str, spec: Spec, cidr: str, public_key: str | None, waits: Waits,
               meta: dict[str, str], user_data: str | None, line: Callable[[str], None]) -> Created:
    name = server_name(run_id, spec.name)
    with explained(f"{spec.name}: looking up flavor, image and network"):
        flavor = find(conn.compute.find_flavor, spec.flavor, get_extra_specs=True)
        image = find(conn.image.find_image, spec.image)
        network = find(conn.network.find_network, spec.network)
    if flavor is None or image is None or network is None:
        kind, value = next((k, v) for k, v, found in (("flavor", spec.flavor, flavor), ("image", spec.image, image),
                                                      ("network", spec.network, network)) if found is None)
        raise DiskbenchError(f"{spec.name}: {kind} {value!r} does not exist in this cloud",
                             hint="`diskbench plan` runs the pre-flight check that lists what exists")
    user = spec.user or default_user(image_properties(image), image.name)
    if user is None:
        raise DiskbenchError(f"{spec.name}: cannot tell the login user of image {image.name!r}",
                             hint="set user: to the image's default user")
    key_name, group = _access(conn, run_id, spec, cidr, public_key, meta, line)
    line(f"{spec.name}: creating server {name} ({flavor.name}, {image.name})")
    with explained(f"{spec.name}: creating server {name}"):
        attrs: dict[str, Any] = {
            "name": name, "flavor_id": flavor.id, "image_id": image.id, "networks": [{"uuid": network.id}],
            "key_name": key_name, "security_groups": [{"name": group}], "metadata": meta,
            "tags": [MARKER, run_tag(run_id)]}
        if spec.availability_zone:
            attrs["availability_zone"] = spec.availability_zone
        if user_data:
            attrs["user_data"] = base64.b64encode(user_data.encode()).decode()
        server = conn.compute.create_server(**attrs)
    volumes = _create_volumes(conn, run_id, spec, meta)
    server = _wait_active(conn, server.id, spec, flavor.name, waits)
    attached = _attach(conn, server.id, spec, volumes, waits)
    line(f"{spec.name}: waiting for the host keys on the console")
    keys = _wait_host_keys(conn, server.id, spec, waits)
    address = _address(server, network.name, spec)
    port = _ssh_port(server, spec)
    line(f"{spec.name}: {address}:{port}, host key {keys[0].fingerprint}")
    return Created(run_id=run_id, name=spec.name, server_id=server.id, address=address, port=port, user=user,
                   host_key=keys[0], host_keys=tuple(keys), flavor=flavor_info(flavor, image), key_name=key_name,
                   security_group=None if spec.security_group else group, volumes=tuple(attached))


def _access(conn: Connection, run_id: str, spec: Spec, cidr: str, public_key: str | None, meta: dict[str, str],
            line: Callable[[str], None]) -> tuple[str, str]:
    """The keypair and security group of the run: the user's own, or created once per run."""
    from openstack import exceptions as sdk

    prefix = run_prefix(run_id)
    with _access_lock, explained(f"{spec.name}: creating the run's keypair and security group"):
        key_name = spec.key_name or prefix
        if spec.key_name is None and find(conn.compute.find_keypair, prefix) is None:
            with suppress(sdk.ConflictException):  # another machine of this run made it a moment ago
                conn.compute.create_keypair(name=prefix, public_key=public_key)
        if spec.security_group:
            return key_name, spec.security_group
        if find(conn.network.find_security_group, prefix) is None:
            sg = conn.network.create_security_group(
                name=prefix, description=f"diskbench run {run_id}: SSH from {cidr}; expires "
                                         f"{meta['diskbench-expires']}; delete with diskbench cleanup")
            conn.network.create_security_group_rule(
                security_group_id=sg.id, direction="ingress", protocol="tcp", port_range_min=22,
                port_range_max=22, remote_ip_prefix=cidr, ethertype="IPv6" if ":" in cidr else "IPv4")
            line(f"openstack: security group {prefix} admits SSH from {cidr}")
        return key_name, prefix


def _create_volumes(conn: Connection, run_id: str, spec: Spec, meta: dict[str, str]) -> list[Any]:
    out: list[Any] = []
    for v in spec.volumes:
        for _ in range(v.count):
            vname = f"{server_name(run_id, spec.name)}-vol{len(out)}"
            with explained(f"{spec.name}: creating volume {vname} ({v.size_gb} GB {v.type or 'default type'})"):
                attrs: dict[str, Any] = {"name": vname, "size": v.size_gb,
                                         "metadata": {**meta, "diskbench-machine": spec.name}}
                if v.type:
                    attrs["volume_type"] = v.type
                out.append(conn.block_storage.create_volume(**attrs))
    return out


def _wait_active(conn: Connection, server_id: str, spec: Spec, flavor: str, waits: Waits) -> Any:
    def check() -> Any:
        with explained(f"{spec.name}: checking server {server_id}"):
            server = conn.compute.get_server(server_id)
        if server.status == "ERROR":
            message = str((server.fault or {}).get("message") or "no fault message").splitlines()[0][:300]
            hint = NO_HOST_HINT if "No valid host" in message else f"see `openstack server show {server_id}`"
            raise DiskbenchError(f"{spec.name}: server {flavor} went to ERROR: {message}", hint=hint)
        return server if server.status == "ACTIVE" else None

    return waits.until(f"{spec.name} to become ACTIVE", waits.active, check,
                       f"the cloud is slow or stuck building it; see `openstack server show {server_id}`")


def _volume_status(conn: Connection, volume_id: str, spec: Spec, want: str) -> Any:
    with explained(f"{spec.name}: checking volume {volume_id}"):
        volume = conn.block_storage.get_volume(volume_id)
    if volume.status in ("error", "error_attaching", "error_detaching"):
        raise DiskbenchError(f"{spec.name}: volume {volume.name} went to {volume.status}",
                             hint=f"see `openstack volume show {volume_id}`")
    return volume if volume.status == want else None


def _attach(conn: Connection, server_id: str, spec: Spec, volumes: list[Any], waits: Waits) -> list[AttachedVolume]:
    out = []
    for v in volumes:
        waits.until(f"volume {v.name} to become available", waits.volume,
                    partial(_volume_status, conn, v.id, spec, "available"), "the volume service is slow")
        with explained(f"{spec.name}: attaching volume {v.name}"):
            attachment = conn.compute.create_volume_attachment(server_id, v.id)
        waits.until(f"volume {v.name} to be attached", waits.volume,
                    partial(_volume_status, conn, v.id, spec, "in-use"), "the volume service is slow")
        out.append(AttachedVolume(v.id, v.name, int(v.size), str(v.volume_type or ""), attachment.device))
    return out


def _wait_host_keys(conn: Connection, server_id: str, spec: Spec, waits: Waits) -> list[HostKey]:
    from openstack import exceptions as sdk

    def check() -> list[HostKey] | None:
        with explained(f"{spec.name}: reading the console"):
            try:
                output = conn.compute.get_server_console_output(server_id)
            except sdk.ConflictException:
                return None  # "instance is not ready": the next poll asks again
        return host_keys(str(output.get("output") or ""), spec.name)

    return waits.until(f"{spec.name}'s SSH host keys on its console", waits.console, check,
                       "the image must run cloud-init, which prints the host keys on the console at first boot")


def _ssh_port(server: Any, spec: Spec) -> int:
    text = str((server.metadata or {}).get(SSH_PORT_KEY, "22"))
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise DiskbenchError(f"{spec.name}: server metadata {SSH_PORT_KEY}={text!r} is not a port",
                             hint=f"fix or remove it (`openstack server unset --property {SSH_PORT_KEY}`)")
    return int(text)


def _address(server: Any, network: str, spec: Spec) -> str:
    """The server's IPv4 on the named network (floating first), else its access IPv4, else any IPv4."""
    addresses: dict[str, list[dict[str, Any]]] = dict(server.addresses or {})
    ranked = sorted(addresses.get(network, []), key=lambda a: a.get("OS-EXT-IPS:type") != "floating")
    for entry in ranked:
        if entry.get("version") == 4:
            return str(entry["addr"])
    if server.access_ipv4:
        return str(server.access_ipv4)
    for entries in addresses.values():
        for entry in entries:
            if entry.get("version") == 4:
                return str(entry["addr"])
    raise DiskbenchError(f"{spec.name}: server {server.id} has no IPv4 address on {network}",
                         hint="use a network with public IPv4 addresses (OVHcloud: Ext-Net)")

