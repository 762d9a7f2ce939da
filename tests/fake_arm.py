"""A fake Azure Resource Manager on 127.0.0.1 for the real azure-mgmt-* clients.

It implements what diskbench calls (resource groups with Location-polled deletes and tag
filters, resource SKUs and usages with paging), records every request, and can inject faults,
among them losing the connection for good mid-run (``outage_after``) as a dying network does.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from .fake_arm_rules import vm_rejection

SUB = "00000000-0000-0000-0000-000000000001"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    at: float = field(default_factory=time.time)  # when it arrived (seconds since the epoch)


@dataclass
class FakeArm:
    skus: list[dict[str, Any]] = field(default_factory=list)
    usages: list[dict[str, Any]] = field(default_factory=list)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    delete_polls: int = 3  # in-progress answers before a delete completes
    page_size: int = 2
    # "METHOD path-regex" -> [status, body, how many times (None: always)]
    faults: dict[str, list[Any]] = field(default_factory=dict)
    poll_delay: float = 0.0  # seconds each async-operation poll takes, to make creation slow
    slow_vm: tuple[int, float] | None = None  # (polls, seconds each) for VM creation only
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)  # lower-case id -> resource
    vm_addresses: list[str] = field(default_factory=list)  # public IPs handed out, in order
    create_polls: int = 2  # in-progress answers of a create before it succeeds
    fail_vm_after_polls: dict[str, Any] | None = None  # e.g. AllocationFailed after the polls
    on_vm_created: Any = None  # callback(vm_body, public_ip_address)
    netapp_quota: list[dict[str, Any]] = field(default_factory=list)  # Microsoft.NetApp quotaLimits items
    _ops: dict[str, dict[str, Any]] = field(default_factory=dict)
    server: ThreadingHTTPServer | None = None
    tls: tuple[str, str] | None = None  # (certificate, key) PEM files: serve HTTPS
    expect_token: str | None = None  # with a credential: the token the stock policy must send
    # ("METHOD path-regex", mode): once such a request is answered the Resource Manager is lost; mode
    # "reset" resets every later connection unanswered, "refuse" stops listening. ``restore()`` ends it.
    outage_after: tuple[str, str] | None = None
    down: str | None = None  # the outage in force ("reset" or "refuse"), None while it answers
    port: int = 0  # 0: any free port; restore() after a "refuse" outage listens on the same one again

    @property
    def url(self) -> str:
        assert self.server is not None
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeArm:
        arm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                parsed = urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                req = Request(self.command, parsed.path, parse_qs(parsed.query), body)
                arm.requests.append(req)
                if arm.down == "reset":  # RST on close, no answer: "connection reset by peer"
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                status, payload, headers = arm.dispatch(req, self.headers.get("Authorization", ""))
                arm.after(req)
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_DELETE = do_POST = do_PATCH = _handle  # noqa: N815

        self.server = _Server(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        if self.tls:
            import ssl

            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def after(self, req: Request) -> None:
        """The outage begins once the request named by ``outage_after`` is answered."""
        if self.outage_after is None or self.down is not None:
            return
        pattern, mode = self.outage_after
        method, _, path_re = pattern.partition(" ")
        if req.method == method and re.search(path_re, req.path):
            self.down = mode
            if mode == "refuse":  # closed before this answer leaves: the next connection is refused
                self.stop()

    def restore(self) -> None:
        """The Resource Manager answers again, at the same address."""
        mode, self.down, self.outage_after = self.down, None, None
        if mode == "refuse":
            self.start()

    # --- routing ----------------------------------------------------------------------------
    def dispatch(self, req: Request, auth: str) -> tuple[int, Any, dict[str, str]]:
        if not auth.startswith("Bearer ") or (self.expect_token and auth != f"Bearer {self.expect_token}"):
            return 401, _error("AuthenticationFailed", "no or wrong bearer token"), {}
        for pattern, reply in self.faults.items():
            method, _, path_re = pattern.partition(" ")
            times = reply[2] if len(reply) > 2 else None
            if req.method == method and re.search(path_re, req.path) and times != 0:
                if times is not None:
                    reply[2] = times - 1
                return reply[0], reply[1], {"Retry-After": "1"} if reply[0] == 429 else {}
        base = f"/subscriptions/{SUB}"
        if req.path.lower() == f"{base}/resourcegroups":
            return self._list_groups(req)
        m = re.fullmatch(rf"{base}/resourcegroups/([^/]+)", req.path, re.IGNORECASE)
        if m:
            return self._group(req, m.group(1))
        m = re.fullmatch(rf"{base}/operationresults/([^/]+)", req.path)
        if m:
            return self._operation(m.group(1))
        m = re.fullmatch(rf"{base}/providers/[^/]+/locations/[^/]+/asyncoperations/([^/]+)", req.path)
        if m:
            return self._async(m.group(1))
        m = re.fullmatch(rf"({base}/resourcegroups/([^/]+)/providers/([^/]+)/((?:[^/]+/[^/]+/)*[^/]+)/([^/]+))",
                         req.path, re.IGNORECASE)
        if m:  # nested types too: virtualMachines/vm1/extensions/x is type virtualMachines/extensions
            rtype = "/".join(m.group(4).split("/")[0::2])
            return self._resource(req, m.group(1), m.group(2), m.group(3), rtype, m.group(5))
        if req.path == f"{base}/providers/Microsoft.Compute/skus":
            location = _filter_value(req, "location")
            items = [s for s in self.skus if not location or location in s.get("locations", [])]
            return self._page(req, items)
        if re.fullmatch(rf"{base}/providers/Microsoft.NetApp/locations/[^/]+/quotaLimits", req.path):
            return 200, {"value": self.netapp_quota}, {}
        m = re.fullmatch(rf"{base}/providers/Microsoft.Compute/locations/([^/]+)/usages", req.path)
        if m:
            return self._page(req, self.usages)
        return 404, _error("NotFound", f"{req.method} {req.path} is not faked"), {}

    def _page(self, req: Request, items: list[dict[str, Any]]) -> tuple[int, Any, dict[str, str]]:
        start = int(req.query.get("skip", ["0"])[0])
        page = items[start:start + self.page_size]
        out: dict[str, Any] = {"value": page}
        if start + self.page_size < len(items):
            query = "&".join(f"{k}={v[0]}" for k, v in req.query.items() if k != "skip")
            out["nextLink"] = f"{self.url}{req.path}?{query}&skip={start + self.page_size}"
        return 200, out, {}

    def _group(self, req: Request, name: str) -> tuple[int, Any, dict[str, str]]:
        key = name.lower()
        if req.method == "PUT":
            created = key not in self.groups
            self.groups[key] = {"id": f"/subscriptions/{SUB}/resourceGroups/{name}", "name": name,
                                "type": "Microsoft.Resources/resourceGroups",
                                "location": req.body["location"], "tags": req.body.get("tags") or {},
                                "properties": {"provisioningState": "Succeeded"}}
            return (201 if created else 200), self.groups[key], {}
        if key not in self.groups:
            return 404, _error("ResourceGroupNotFound", f"Resource group '{name}' could not be found."), {}
        if req.method == "GET":
            return 200, self.groups[key], {}
        if req.method == "DELETE":
            op = uuid.uuid4().hex
            self._ops[op] = {"group": key, "left": self.delete_polls}
            self.groups[key]["properties"]["provisioningState"] = "Deleting"
            return 202, None, {"Location": f"{self.url}/subscriptions/{SUB}/operationresults/{op}"
                                           "?api-version=2025-04-01", "retry-after-ms": "5"}
        return 405, _error("MethodNotAllowed", req.method), {}

    def _resource(self, req: Request, rid: str, group: str, namespace: str, rtype: str,
                  name: str) -> tuple[int, Any, dict[str, str]]:
        key = rid.lower()
        if req.method == "GET":
            if key not in self.resources:
                return 404, _error("ResourceNotFound", f"{rtype} {name} not found"), {}
            return 200, self.resources[key], {}
        if req.method == "DELETE":
            return self._delete(key, rtype)
        if req.method != "PUT":
            return 405, _error("MethodNotAllowed", req.method), {}
        if group.lower() not in self.groups:
            return 404, _error("ResourceGroupNotFound", f"Resource group '{group}' could not be found."), {}
        body = dict(req.body or {})
        problem = self.validate(rtype, body)
        if problem:
            return problem[0], _error(problem[1], problem[2]), {}
        props = dict(body.get("properties") or {})
        props["provisioningState"] = "Creating"
        if rtype.lower() == "netappaccounts/capacitypools/volumes":
            props["mountTargets"] = [{"ipAddress": "10.213.1.4", "fileSystemId": str(uuid.uuid4())}]
        if rtype.lower() == "publicipaddresses":
            props["ipAddress"] = self.vm_addresses.pop(0) if self.vm_addresses else "192.0.2.1"
        resource = {**body, "id": rid, "name": name, "type": f"{namespace}/{rtype}", "properties": props}
        self.resources[key] = resource
        op = uuid.uuid4().hex
        polls = self.slow_vm[0] if self.slow_vm and rtype.lower() == "virtualmachines" else self.create_polls
        self._ops[op] = {"resource": key, "left": polls, "type": rtype.lower()}
        region = body.get("location", "westeurope")
        url = f"{self.url}/subscriptions/{SUB}/providers/{namespace}/locations/{region}/asyncoperations/{op}"
        return 201, resource, {"Azure-AsyncOperation": url + "?api-version=2024-01-01", "retry-after-ms": "5"}

    def _delete(self, key: str, rtype: str) -> tuple[int, Any, dict[str, str]]:
        """A long-running delete; NetApp refuses to delete a pool or account that still holds children."""
        if key not in self.resources:
            return 204, None, {}
        if rtype.lower().startswith("netappaccounts") and any(k.startswith(key + "/") for k in self.resources):
            return 409, _error("CannotDeleteResource", f"{key.rsplit('/', 1)[-1]} still contains resources"), {}
        op = uuid.uuid4().hex
        self._ops[op] = {"resource": key, "left": self.create_polls, "type": rtype.lower(), "delete": True}
        url = f"{self.url}/subscriptions/{SUB}/providers/x/locations/x/asyncoperations/{op}"
        return 202, None, {"Azure-AsyncOperation": url + "?api-version=2024-01-01", "retry-after-ms": "5"}

    def validate(self, rtype: str, body: dict[str, Any]) -> tuple[int, str, str] | None:
        """Azure's documented rules for what diskbench creates (the VM's in fake_arm_rules.py)."""
        if rtype.lower().startswith("netappaccounts/"):
            found = self._netapp_rules(rtype.lower(), body.get("properties") or {})
            return (400, *found) if found else None
        if rtype.lower() != "virtualmachines":
            return None
        props = body.get("properties", {})
        size = props.get("hardwareProfile", {}).get("vmSize", "")
        sku = next((s for s in self.skus if s["name"].lower() == size.lower()), None)
        if sku is None or body.get("location") not in sku.get("locations", []):
            return 409, "SkuNotAvailable", (f"The requested size {size} is not available in location "
                                            f"{body.get('location')}.")
        caps = {c["name"]: c["value"] for c in sku["capabilities"]}
        rejected = vm_rejection(body, size, caps)
        if rejected:
            return rejected
        windows = self._windows_rules(props.get("osProfile", {}))
        return (400, *windows) if windows else None

    def _windows_rules(self, profile: dict[str, Any]) -> tuple[str, str] | None:
        if "windowsConfiguration" in profile:
            password = profile.get("adminPassword", "")
            classes = sum(any(f(c) for c in password) for f in (str.isupper, str.islower, str.isdigit,
                                                                  lambda c: not c.isalnum()))
            if not 12 <= len(password) <= 123 or classes < 3:
                return "InvalidParameter", "The supplied password must be between 12-123 characters long and " \
                                           "must satisfy at least 3 of password complexity requirements."
            if len(profile.get("computerName", "")) > 15:
                return "InvalidParameter", "Windows computer name cannot be more than 15 characters long."
            if "linuxConfiguration" in profile or "customData" in profile:
                return "InvalidParameter", "A Windows VM takes no linuxConfiguration."
        return None

    def _netapp_rules(self, rtype: str, props: dict[str, Any]) -> tuple[str, str] | None:
        tib = 1024**4
        if rtype == "netappaccounts/capacitypools":
            size = props.get("size", 0)
            if size < tib or size % tib:
                return "InvalidParameter", "Capacity pool size must be a multiple of 1 TiB, at least 1 TiB."
        if rtype == "netappaccounts/capacitypools/volumes":
            subnet = self.resources.get(str(props.get("subnetId", "")).lower(), {})
            services = [d["properties"]["serviceName"] for d in subnet.get("properties", {}).get("delegations", [])]
            if "Microsoft.NetApp/volumes" not in services:
                return "InvalidSubnet", "The subnet is not delegated to Microsoft.NetApp/volumes."
            if not props.get("creationToken") or props.get("usageThreshold", 0) < 50 * 1024**3:
                return "InvalidParameter", "A volume needs a creationToken and a quota of at least 50 GiB."
        return None

    def _async(self, op: str) -> tuple[int, Any, dict[str, str]]:
        state = self._ops[op]
        delay = self.slow_vm[1] if self.slow_vm and state["type"] == "virtualmachines" else self.poll_delay
        if delay:
            time.sleep(delay)
        resource = self.resources.get(state["resource"])
        if state["left"] > 0 and (resource is not None or state.get("delete")):
            state["left"] -= 1
            return 200, {"status": "InProgress"}, {"retry-after-ms": "5"}
        if state.get("delete"):
            self.resources.pop(state["resource"], None)
            return 200, {"status": "Succeeded"}, {}
        if resource is None:
            return 200, {"status": "Canceled"}, {}  # deleted with its group: Azure cancels the creation
        if state["type"] == "virtualmachines" and self.fail_vm_after_polls:
            resource["properties"]["provisioningState"] = "Failed"
            return 200, {"status": "Failed", "error": self.fail_vm_after_polls}, {}
        resource["properties"]["provisioningState"] = "Succeeded"
        if state["type"] == "virtualmachines" and self.on_vm_created is not None:
            nic = resource["properties"]["networkProfile"]["networkInterfaces"][0]["id"].lower()
            pip = self.resources[nic]["properties"]["ipConfigurations"][0]["properties"]["publicIPAddress"]["id"]
            self.on_vm_created(resource, self.resources[pip.lower()]["properties"]["ipAddress"])
        return 200, {"status": "Succeeded"}, {}

    def group_resources(self, group: str) -> list[str]:
        return [k for k in self.resources if f"/resourcegroups/{group.lower()}/" in k]

    def _operation(self, op: str) -> tuple[int, Any, dict[str, str]]:
        state = self._ops[op]
        if state["left"] > 0:
            state["left"] -= 1
            return 202, None, {"Location": f"{self.url}/subscriptions/{SUB}/operationresults/{op}"
                                           "?api-version=2025-04-01", "retry-after-ms": "5"}
        self.groups.pop(state["group"], None)
        for key in self.group_resources(state["group"]):
            del self.resources[key]
        return 200, None, {}

    def _list_groups(self, req: Request) -> tuple[int, Any, dict[str, str]]:
        name, value = _filter_value(req, "tagName"), _filter_value(req, "tagValue")
        items = [g for g in self.groups.values()
                 if not name or (name in g["tags"] and (value is None or g["tags"][name] == value))]
        return self._page(req, items)


class _Server(ThreadingHTTPServer):
    """Azure's front door accepts every connection at once; socketserver's default listen backlog of 5
    drops the SYNs of a sixth connection arriving together (eight VMs polling in step, one connection
    per request), which the client sends again only a second later."""

    request_queue_size = 128


def _filter_value(req: Request, key: str) -> str | None:
    text = req.query.get("$filter", [""])[0]
    m = re.search(rf"{key} eq '([^']*)'", text)
    return m.group(1) if m else None


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}
