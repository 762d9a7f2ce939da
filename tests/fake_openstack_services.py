"""Nova, Neutron and Cinder of the fake cloud in tests/fake_openstack.py.

Each ``route_*`` gets the fake and the request path below the service's prefix and answers as the
real service does for what diskbench calls, with the same error bodies (Nova's ``{"forbidden":
...}``, Neutron's ``{"NeutronError": ...}``) so the SDK's exceptions carry the real messages.
Servers and volumes move one state per GET, so a test controls how long everything "takes".
"""

from __future__ import annotations

import re
import threading
import uuid
from typing import TYPE_CHECKING, Any

from .fake_openstack import NO_VALID_HOST, PROJECT_ID, USER_ID, Boot, Reply, Request, _now, cloud_init_console

if TYPE_CHECKING:
    from .fake_openstack import FakeOpenStack

NOVA_VERSION = {"id": "v2.1", "status": "CURRENT", "version": "2.96", "min_version": "2.1",
                "updated": "2013-07-23T11:33:21Z"}


def nova_error(status: int, message: str) -> Reply:
    key = {400: "badRequest", 403: "forbidden", 404: "itemNotFound", 409: "conflictingRequest",
           413: "overLimit"}.get(status, "computeFault")
    return status, {key: {"code": status, "message": message}}, {}


def neutron_error(status: int, kind: str, message: str) -> Reply:
    return status, {"NeutronError": {"type": kind, "message": message, "detail": ""}}, {}


def cinder_error(status: int, message: str) -> Reply:
    key = {400: "badRequest", 403: "forbidden", 404: "itemNotFound", 413: "overLimit"}.get(status, "computeFault")
    return status, {key: {"code": status, "message": message}}, {}


def _public(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if not k.startswith("_")}


# --- Nova -------------------------------------------------------------------------------------
def route_compute(fake: FakeOpenStack, req: Request, path: str) -> Reply:
    version = {**NOVA_VERSION, "links": [{"rel": "self", "href": f"{fake.url}/compute/v2.1/"}]}
    if path == "":
        return 200, {"versions": [version]}, {}
    if path == "/v2.1":
        return 200, {"version": version}, {}
    path = path[len("/v2.1"):]
    m = req.method
    if m == "GET" and path in ("/flavors", "/flavors/detail"):
        return 200, {"flavors": [_flavor(f) for f in fake.flavors.values()]}, {}
    match = re.fullmatch(r"/flavors/([^/]+)(/os-extra_specs)?", path)
    if m == "GET" and match:
        flavor = fake.flavors.get(match.group(1))
        if flavor is None:
            return nova_error(404, f"Flavor {match.group(1)} could not be found.")
        return 200, ({"extra_specs": flavor["extra_specs"]} if match.group(2) else {"flavor": _flavor(flavor)}), {}
    if m == "GET" and path == "/limits":
        return 200, {"limits": {"rate": [], "absolute": _compute_limits(fake)}}, {}
    if path.startswith("/os-keypairs"):
        return _keypairs(fake, req, path)
    if m == "POST" and path == "/servers":
        return _create_server(fake, req.body["server"])
    if m == "GET" and path in ("/servers", "/servers/detail"):
        return 200, {"servers": [_server_doc(fake, s) for s in _filter_servers(fake, req)]}, {}
    match = re.fullmatch(r"/servers/([^/]+)(/.*)?", path)
    if match:
        server = fake.servers.get(match.group(1))
        if server is None:
            return nova_error(404, f"Instance {match.group(1)} could not be found.")
        return _server(fake, req, server, match.group(2) or "")
    return 404, {"error": f"{m} /compute/v2.1{path} is not faked"}, {}


def _flavor(f: dict[str, Any]) -> dict[str, Any]:
    return {**f, "links": [], "OS-FLV-DISABLED:disabled": False}


def _compute_limits(fake: FakeOpenStack) -> dict[str, int]:
    used = [s for s in fake.servers.values()]
    return {**fake.compute_limits, "totalInstancesUsed": len(used),
            "totalCoresUsed": sum(s["_flavor"]["vcpus"] for s in used),
            "totalRAMUsed": sum(s["_flavor"]["ram"] for s in used), "maxServerMeta": 128,
            "maxServerGroups": 10, "maxServerGroupMembers": 10, "totalServerGroupsUsed": 0}


def _keypairs(fake: FakeOpenStack, req: Request, path: str) -> Reply:
    if req.method == "GET" and path == "/os-keypairs":
        return 200, {"keypairs": [{"keypair": k} for k in fake.keypairs.values()]}, {}
    if req.method == "POST" and path == "/os-keypairs":
        body = req.body["keypair"]
        if body["name"] in fake.keypairs:
            return nova_error(409, f"Key pair '{body['name']}' already exists.")
        if "public_key" not in body:
            return nova_error(400, "diskbench always imports its own public key")
        fake.keypairs[body["name"]] = {"name": body["name"], "public_key": body["public_key"], "type": "ssh",
                                       "fingerprint": "00:11", "user_id": USER_ID}
        return 200, {"keypair": fake.keypairs[body["name"]]}, {}
    name = path[len("/os-keypairs/"):]
    if name not in fake.keypairs:
        return nova_error(404, f"Keypair {name} not found for user {USER_ID}")
    if req.method == "GET":
        return 200, {"keypair": fake.keypairs[name]}, {}
    if req.method == "DELETE":
        del fake.keypairs[name]
        return 204, None, {}
    return nova_error(405, req.method)


def _filter_servers(fake: FakeOpenStack, req: Request) -> list[dict[str, Any]]:
    out = list(fake.servers.values())
    if "tags" in req.query:
        wanted = set(req.query["tags"][0].split(","))
        out = [s for s in out if wanted <= set(s["tags"])]
    if "name" in req.query:
        out = [s for s in out if re.search(req.query["name"][0], s["name"])]
    return out


def _create_server(fake: FakeOpenStack, body: dict[str, Any]) -> Reply:
    flavor = fake.flavors.get(body.get("flavorRef", ""))
    if flavor is None:
        return nova_error(400, f"Flavor {body.get('flavorRef')} could not be found.")
    if body.get("imageRef") not in fake.images:
        return nova_error(400, f"Image {body.get('imageRef')} could not be found.")
    if body.get("key_name") and body["key_name"] not in fake.keypairs:
        return nova_error(400, "Invalid key_name provided.")
    nets = body.get("networks") or []
    if nets in ("auto", "none") or not nets:
        return nova_error(400, "diskbench always names its network")
    for n in nets:
        if n.get("uuid") not in fake.networks:
            return nova_error(400, f"Network {n.get('uuid')} could not be found.")
    groups = []
    for g in body.get("security_groups") or [{"name": "default"}]:
        found = next((sg for sg in fake.security_groups.values() if g["name"] in (sg["id"], sg["name"])), None)
        if found is None and g["name"] != "default":
            return nova_error(400, f"Unable to find security_group with name or id '{g['name']}'")
        groups.append(found["id"] if found else "default")
    quota = _quota_problem(fake, flavor)
    if fake.quota_fault is not None or quota:
        status = fake.quota_fault or 403
        fake.quota_fault = None
        limit = fake.compute_limits["maxTotalCores"]
        message = quota or f"Quota exceeded for cores: Requested {flavor['vcpus']}, but already used {limit} of " \
                           f"{limit} cores"
        return nova_error(status, message)
    sid = str(uuid.uuid4())
    server = {"id": sid, "name": body["name"], "metadata": dict(body.get("metadata") or {}),
              "tags": list(body.get("tags") or []), "key_name": body.get("key_name"),
              "image": {"id": body["imageRef"]}, "OS-EXT-AZ:availability_zone": body.get("availability_zone") or "nova",
              "created": _now(), "status": "BUILD", "_flavor": flavor, "_network": nets[0]["uuid"], "_sgs": groups,
              "_build_left": fake.build_polls, "_delete_left": None, "_boot": None, "_console_reads": 0,
              "_volumes": [], "_fail": NO_VALID_HOST if fake.no_valid_host else None, "_address": None}
    fake.servers[sid] = server
    if server["_fail"] is None:
        threading.Thread(target=_boot, args=(fake, server), daemon=True).start()
    return 202, {"server": {"id": sid, "links": [], "OS-DCF:diskConfig": "MANUAL", "adminPass": "x",
                            "security_groups": [{"name": g["name"]} for g in body.get("security_groups") or []]}}, {}


def _quota_problem(fake: FakeOpenStack, flavor: dict[str, Any]) -> str | None:
    limits = _compute_limits(fake)
    for what, used, need, limit in (("instances", limits["totalInstancesUsed"], 1, limits["maxTotalInstances"]),
                                    ("cores", limits["totalCoresUsed"], flavor["vcpus"], limits["maxTotalCores"]),
                                    ("ram", limits["totalRAMUsed"], flavor["ram"], limits["maxTotalRAMSize"])):
        if used + need > limit:
            return f"Quota exceeded for {what}: Requested {need}, but already used {used} of {limit} {what}"
    return None


def _boot(fake: FakeOpenStack, server: dict[str, Any]) -> None:
    """What the hypervisor does: the test's callback decides the address, port and host keys."""
    try:
        boot = (fake.on_boot or fake.default_boot)(_public(server))
    except Exception as exc:  # noqa: BLE001 - the callback's failure becomes the server's fault
        server["_fail"] = f"Build of instance {server['id']} aborted: {exc}"
        return
    server["_boot"] = boot


def _advance(fake: FakeOpenStack, server: dict[str, Any]) -> None:
    """One GET of the server: BUILD counts down to ACTIVE (or ERROR); a delete counts down to gone."""
    if server["_delete_left"] is not None:
        if fake.deletes_hang:
            return
        server["_delete_left"] -= 1
        if server["_delete_left"] < 0:
            _finish_delete(fake, server)
        return
    if server["status"] != "BUILD":
        return
    server["_build_left"] -= 1
    if server["_build_left"] > 0:
        return
    if server["_fail"] is not None:
        server["status"] = "ERROR"
        server["fault"] = {"code": 500, "created": _now(), "message": server["_fail"],
                           "details": "Traceback (most recent call last): ..."}
    elif server["_boot"] is not None:
        boot: Boot = server["_boot"]
        server["status"] = "ACTIVE"
        server["_address"] = boot.address
        if boot.port != 22:
            server["metadata"]["diskbench-ssh-port"] = str(boot.port)


def _finish_delete(fake: FakeOpenStack, server: dict[str, Any]) -> None:
    fake.servers.pop(server["id"], None)
    for vid in server["_volumes"]:
        volume = fake.volumes.get(vid)
        if volume is not None:
            volume.update(status="detaching", attachments=[], _left=fake.volume_polls, _then="available")
    if fake.on_delete is not None:
        fake.on_delete(_public(server))


def _server_doc(fake: FakeOpenStack, s: dict[str, Any]) -> dict[str, Any]:
    net = fake.networks[s["_network"]]
    addresses = {net["name"]: [{"version": 4, "addr": s["_address"], "OS-EXT-IPS:type": "fixed",
                                "OS-EXT-IPS-MAC:mac_addr": "fa:16:3e:00:00:01"}]} if s["_address"] else {}
    f = s["_flavor"]
    flavor = {"original_name": f["name"], "vcpus": f["vcpus"], "ram": f["ram"], "disk": f["disk"],
              "ephemeral": f["OS-FLV-EXT-DATA:ephemeral"], "swap": 0, "extra_specs": f["extra_specs"]}
    task = "deleting" if s["_delete_left"] is not None else ("spawning" if s["status"] == "BUILD" else None)
    sgs = [fake.security_groups[g]["name"] if g in fake.security_groups else g for g in s["_sgs"]]
    return {**_public(s), "tenant_id": PROJECT_ID, "user_id": USER_ID, "hostId": "", "flavor": flavor,
            "updated": _now(), "addresses": addresses, "accessIPv4": "", "accessIPv6": "", "links": [],
            "security_groups": [{"name": n} for n in sgs], "OS-EXT-STS:task_state": task,
            "OS-EXT-STS:vm_state": s["status"].lower(), "OS-EXT-STS:power_state": 1 if s["status"] == "ACTIVE" else 0,
            "os-extended-volumes:volumes_attached": [{"id": v, "delete_on_termination": False}
                                                     for v in s["_volumes"]],
            "locked": False, "description": None, "progress": 0, "config_drive": ""}


def _server(fake: FakeOpenStack, req: Request, server: dict[str, Any], sub: str) -> Reply:
    if req.method == "GET" and sub == "":
        _advance(fake, server)
        if server["id"] not in fake.servers:
            return nova_error(404, f"Instance {server['id']} could not be found.")
        return 200, {"server": _server_doc(fake, server)}, {}
    if req.method == "DELETE" and sub == "":
        if server["_delete_left"] is None:
            server["_delete_left"] = fake.delete_polls
        return 204, None, {}
    if req.method == "POST" and sub == "/action" and "os-getConsoleOutput" in (req.body or {}):
        return _console(server, (req.body["os-getConsoleOutput"] or {}).get("length"))
    if sub.startswith("/os-volume_attachments"):
        return _attachments(fake, req, server, sub)
    return 404, {"error": f"{req.method} server{sub} is not faked"}, {}


def _console(server: dict[str, Any], length: int | None) -> Reply:
    boot: Boot | None = server["_boot"]
    if server["status"] != "ACTIVE" or boot is None:
        return nova_error(409, f"Instance {server['id']} is not ready")
    server["_console_reads"] += 1
    if boot.console is not None:
        text = boot.console()
    elif server["_console_reads"] <= boot.console_polls:
        text = "[    0.000000] Linux version 6.8.0-49-generic (buildd@lcy02-amd64-103)\n"
    else:
        text = cloud_init_console(boot.host_keys, server["name"])
    if length is not None:
        text = "\n".join(text.splitlines()[-int(length):]) + "\n"
    return 200, {"output": text}, {}


def _attachments(fake: FakeOpenStack, req: Request, server: dict[str, Any], sub: str) -> Reply:
    if req.method == "GET" and sub == "/os-volume_attachments":
        return 200, {"volumeAttachments": [_attachment(server, v, i) for i, v in enumerate(server["_volumes"])]}, {}
    if req.method == "POST" and sub == "/os-volume_attachments":
        vid = req.body["volumeAttachment"]["volumeId"]
        volume = fake.volumes.get(vid)
        if volume is None:
            return nova_error(404, f"Volume {vid} could not be found.")
        if volume["status"] != "available":
            return nova_error(400, f"Invalid volume: volume {vid} status must be 'available'. Currently in "
                                   f"'{volume['status']}'")
        server["_volumes"].append(vid)
        device = f"/dev/vd{chr(ord('b') + len(server['_volumes']) - 1)}"
        volume.update(status="attaching", _left=fake.volume_polls, _then="in-use",
                      attachments=[{"server_id": server["id"], "attachment_id": str(uuid.uuid4()),
                                    "volume_id": vid, "device": device, "id": vid}])
        return 200, {"volumeAttachment": _attachment(server, vid, len(server["_volumes"]) - 1)}, {}
    return 404, {"error": f"{req.method} server{sub} is not faked"}, {}


def _attachment(server: dict[str, Any], vid: str, index: int) -> dict[str, Any]:
    return {"id": vid, "volumeId": vid, "serverId": server["id"], "device": f"/dev/vd{chr(ord('b') + index)}",
            "tag": None, "delete_on_termination": False}


# --- Neutron ----------------------------------------------------------------------------------
def route_network(fake: FakeOpenStack, req: Request, path: str) -> Reply:
    if path == "":
        return 200, {"versions": [{"id": "v2.0", "status": "CURRENT", "links": [
            {"rel": "self", "href": f"{fake.url}/network/v2.0/"}]}]}, {}
    if path == "/v2.0":
        return 200, {"resources": []}, {}
    path = path[len("/v2.0"):]
    if req.method == "GET" and path == "/networks":
        items = [n for n in fake.networks.values() if _matches(n, req.query, ("name", "id"))]
        return 200, {"networks": items}, {}
    match = re.fullmatch(r"/networks/([^/]+)", path)
    if req.method == "GET" and match:
        if match.group(1) not in fake.networks:
            return neutron_error(404, "NetworkNotFound", f"Network {match.group(1)} could not be found.")
        return 200, {"network": fake.networks[match.group(1)]}, {}
    if path.startswith("/security-group"):
        return _security_groups(fake, req, path)
    return 404, {"error": f"{req.method} /network/v2.0{path} is not faked"}, {}


def _matches(doc: dict[str, Any], query: dict[str, list[str]], keys: tuple[str, ...]) -> bool:
    return all(doc.get(k) in query[k] for k in keys if k in query)


def _security_groups(fake: FakeOpenStack, req: Request, path: str) -> Reply:
    if req.method == "GET" and path == "/security-groups":
        items = [g for g in fake.security_groups.values() if _matches(g, req.query, ("name", "id"))]
        return 200, {"security_groups": items}, {}
    if req.method == "POST" and path == "/security-groups":
        body = req.body["security_group"]
        gid = str(uuid.uuid4())
        egress = [{"id": str(uuid.uuid4()), "security_group_id": gid, "direction": "egress", "ethertype": e,
                   "protocol": None, "port_range_min": None, "port_range_max": None, "remote_ip_prefix": None,
                   "remote_group_id": None, "project_id": PROJECT_ID} for e in ("IPv4", "IPv6")]
        fake.security_groups[gid] = {"id": gid, "name": body["name"], "description": body.get("description", ""),
                                     "project_id": PROJECT_ID, "tenant_id": PROJECT_ID, "stateful": True,
                                     "security_group_rules": egress, "tags": [], "created_at": _now()}
        return 201, {"security_group": fake.security_groups[gid]}, {}
    if req.method == "POST" and path == "/security-group-rules":
        body = dict(req.body["security_group_rule"])
        group = fake.security_groups.get(body.get("security_group_id", ""))
        if group is None:
            return neutron_error(404, "SecurityGroupNotFound", "Security group could not be found.")
        rule = {"id": str(uuid.uuid4()), "project_id": PROJECT_ID, "remote_group_id": None, **body}
        group["security_group_rules"].append(rule)
        return 201, {"security_group_rule": rule}, {}
    match = re.fullmatch(r"/security-groups/([^/]+)", path)
    if match:
        gid = match.group(1)
        if gid not in fake.security_groups:
            return neutron_error(404, "SecurityGroupNotFound", f"Security group {gid} does not exist")
        if req.method == "GET":
            return 200, {"security_group": fake.security_groups[gid]}, {}
        if req.method == "DELETE":
            if any(gid in s["_sgs"] for s in fake.servers.values()):
                return neutron_error(409, "SecurityGroupInUse", f"Security Group {gid} in use.")
            del fake.security_groups[gid]
            return 204, None, {}
    return 404, {"error": f"{req.method} /network/v2.0{path} is not faked"}, {}


# --- Cinder -----------------------------------------------------------------------------------
def route_volume(fake: FakeOpenStack, req: Request, path: str) -> Reply:
    version = {"id": "v3.0", "status": "CURRENT", "version": "3.71", "min_version": "3.0",
               "updated": "2023-08-31T00:00:00Z", "links": [{"rel": "self", "href": f"{fake.url}/volume/v3/"}]}
    if path in ("", "/v3", f"/v3/{PROJECT_ID}"):
        return 300 if path == "" else 200, {"versions": [version]}, {}
    prefix = f"/v3/{PROJECT_ID}"
    if not path.startswith(prefix + "/"):
        return cinder_error(404, f"{path} is not faked")
    path = path[len(prefix):]
    if req.method == "GET" and path == "/types":
        return 200, {"volume_types": fake.volume_types}, {}
    if req.method == "GET" and path == "/types/default":  # the type of a volume created without one
        return 200, {"volume_type": fake.volume_types[0]}, {}
    if req.method == "GET" and path.startswith("/qos-specs"):
        return _qos(fake, path)
    if req.method == "GET" and path == "/limits":
        used = list(fake.volumes.values())
        absolute = {**fake.volume_limits, "totalVolumesUsed": len(used),
                    "totalGigabytesUsed": sum(v["size"] for v in used), "maxTotalSnapshots": 10,
                    "totalSnapshotsUsed": 0, "maxTotalBackups": 10, "totalBackupsUsed": 0}
        return 200, {"limits": {"rate": [], "absolute": absolute}}, {}
    if req.method == "POST" and path == "/volumes":
        return _create_volume(fake, req.body["volume"])
    if req.method == "GET" and path in ("/volumes", "/volumes/detail"):
        items = [_volume_doc(v) for v in fake.volumes.values() if _matches(v, req.query, ("name",))]
        return 200, {"volumes": items}, {}
    match = re.fullmatch(r"/volumes/([^/]+)", path)
    if match:
        volume = fake.volumes.get(match.group(1))
        if volume is None:
            return cinder_error(404, f"Volume {match.group(1)} could not be found.")
        if req.method == "GET":
            _advance_volume(fake, volume)
            if volume["id"] not in fake.volumes:
                return cinder_error(404, f"Volume {match.group(1)} could not be found.")
            return 200, {"volume": _volume_doc(volume)}, {}
        if req.method == "DELETE":
            if volume["status"] not in ("available", "error", "deleting"):
                return cinder_error(400, "Invalid volume: Volume status must be available or error or "
                                         "error_restoring or error_extending or error_managing and must not be "
                                         "migrating, attached, belong to a group, have snapshots or be "
                                         "disassociated from snapshots after volume transfer.")
            volume.update(status="deleting", _left=fake.volume_polls, _then=None)
            return 202, None, {}
    return cinder_error(404, f"{req.method} {path} is not faked")


def _qos(fake: FakeOpenStack, path: str) -> Reply:
    if fake.qos_forbidden:
        return cinder_error(403, "Policy doesn't allow volume_extension:qos_specs_manage:get_all to be performed.")
    public = [{k: v for k, v in q.items() if k != "types"} for q in fake.qos_specs]
    if path == "/qos-specs":
        return 200, {"qos_specs": public}, {}
    match = re.fullmatch(r"/qos-specs/([^/]+)/associations", path)
    spec = next((q for q in fake.qos_specs if match and q["id"] == match.group(1)), None)
    if spec is None:
        return cinder_error(404, f"QoS spec {path} could not be found.")
    names = {t["id"]: t["name"] for t in fake.volume_types}
    return 200, {"qos_associations": [{"association_type": "volume_type", "id": t, "name": names.get(t, t)}
                                      for t in spec["types"]]}, {}


def _create_volume(fake: FakeOpenStack, body: dict[str, Any]) -> Reply:
    vtype = body.get("volume_type")
    if vtype and not any(vtype in (t["name"], t["id"]) for t in fake.volume_types):
        return cinder_error(404, f"Volume type with name {vtype} could not be found.")
    size = int(body["size"])
    used = sum(v["size"] for v in fake.volumes.values())
    if used + size > fake.volume_limits["maxTotalVolumeGigabytes"]:
        return cinder_error(413, f"VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed "
                                 f"gigabytes quota. Requested {size}G, quota is "
                                 f"{fake.volume_limits['maxTotalVolumeGigabytes']}G and {used}G has been consumed.")
    if len(fake.volumes) + 1 > fake.volume_limits["maxTotalVolumes"]:
        return cinder_error(413, "VolumeLimitExceeded: Maximum number of volumes allowed "
                                 f"({fake.volume_limits['maxTotalVolumes']}) exceeded for quota 'volumes'.")
    vid = str(uuid.uuid4())
    fake.volumes[vid] = {"id": vid, "name": body.get("name"), "size": size, "volume_type": vtype or "classic",
                         "metadata": dict(body.get("metadata") or {}), "status": "creating", "attachments": [],
                         "availability_zone": body.get("availability_zone") or "nova", "bootable": "false",
                         "created_at": _now(), "description": body.get("description"),
                         "_left": fake.volume_polls, "_then": "available"}
    return 202, {"volume": _volume_doc(fake.volumes[vid])}, {}


def _advance_volume(fake: FakeOpenStack, volume: dict[str, Any]) -> None:
    if volume["status"] not in ("creating", "attaching", "detaching", "deleting"):
        return
    volume["_left"] -= 1
    if volume["_left"] >= 0:
        return
    if volume["status"] == "deleting":
        fake.volumes.pop(volume["id"], None)
    else:
        volume["status"] = volume["_then"]


def _volume_doc(v: dict[str, Any]) -> dict[str, Any]:
    return {**_public(v), "os-vol-tenant-attr:tenant_id": PROJECT_ID, "user_id": USER_ID, "links": [],
            "encrypted": False, "multiattach": False, "snapshot_id": None, "source_volid": None,
            "consistencygroup_id": None, "replication_status": None}
