"""A fake OpenStack cloud on 127.0.0.1 for the real openstacksdk: Keystone, Nova, Neutron, Cinder, Glance.

One threaded HTTP server answers every service under its own path prefix (``/identity``, ``/compute``,
``/network``, ``/volume``, ``/image``); the Keystone catalog points the SDK back at it. Resources move
through their states on polls, not on wall time, so tests are deterministic on a loaded machine.
Every request is recorded, with when it arrived. Faults are switched per test (``no_valid_host``,
``quota_fault``, ``expire_tokens()``, ``deletes_hang``, ``faults`` by method and path), and ``on_boot``
decides what a created server "is": its address, SSH port and host keys (later: a QEMU guest).
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

PROJECT_ID = "0a1b2c3d4e5f40718293a4b5c6d7e8f9"
USER_ID = "5b6c7d8e9f0a41b2c3d4e5f60718293a"
Reply = tuple[int, Any, dict[str, str]]
NO_VALID_HOST = "No valid host was found. There are not enough hosts available."


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    token: str | None
    at: float = field(default_factory=time.time)  # when it arrived: tests order the deletes against the run


@dataclass
class Boot:
    """What a created server is: where its SSH listens and which host keys its console prints."""

    address: str
    port: int = 22
    host_keys: list[str] = field(default_factory=list)  # OpenSSH public key lines
    console_polls: int = 1  # console reads that show no keys yet (cloud-init still running)
    console: Callable[[], str] | None = None  # a real console log (e.g. a guest's serial file)


def host_key_line(comment: str = "root@fake") -> str:
    """A fresh ed25519 public key line, as /etc/ssh/ssh_host_ed25519_key.pub holds it."""
    public = ed25519.Ed25519PrivateKey.generate().public_key()
    return public.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode() \
        + f" {comment}"


def fingerprint(key_line: str) -> str:
    import hashlib

    blob = base64.b64decode(key_line.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def cloud_init_console(host_keys: list[str], name: str) -> str:
    """The console log of an Ubuntu cloud image's first boot, with cloud-init's two key blocks."""
    kinds = {"ssh-ed25519": "ED25519", "ssh-rsa": "RSA", "ecdsa-sha2-nistp256": "ECDSA"}
    prints = [f"<14>Nov 22 10:00:01 cloud-init: 256 {fingerprint(k)} root@{name} ({kinds.get(k.split()[0], '?')})"
              for k in host_keys]
    return "\n".join([
        "[    0.000000] Linux version 6.8.0-49-generic (buildd@lcy02-amd64-103)",
        "[   11.204411] cloud-init[612]: Cloud-init v. 24.3.1 running 'init' at Sat, 22 Nov 2026 10:00:00 +0000.",
        "ci-info: ++++++++++++++++++++++++++++++++++++++Net device info+++++++++++++++++++++++++++++++++++++++",
        "<14>Nov 22 10:00:01 cloud-init: #############################################################",
        "<14>Nov 22 10:00:01 cloud-init: -----BEGIN SSH HOST KEY FINGERPRINTS-----",
        *prints,
        "<14>Nov 22 10:00:01 cloud-init: -----END SSH HOST KEY FINGERPRINTS-----",
        "<14>Nov 22 10:00:01 cloud-init: #############################################################",
        "-----BEGIN SSH HOST KEY KEYS-----",
        *[" ".join(k.split()[:2]) + f" root@{name}" for k in host_keys],
        "-----END SSH HOST KEY KEYS-----",
        "[   14.912034] cloud-init[1021]: Cloud-init v. 24.3.1 finished at Sat, 22 Nov 2026 10:00:04 +0000.",
        "",
    ])


def i1_180() -> dict[str, Any]:
    """OVHcloud's i1-180 as the seed article uses it: 32 vCPUs, 180 GB, four 1.8 TB NVMe passed through."""
    return {"id": "a8b2c7e4-1f0d-4c55-9e0a-0000000000b4", "name": "i1-180", "vcpus": 32, "ram": 184320,
            "disk": 50, "OS-FLV-EXT-DATA:ephemeral": 0, "swap": "", "rxtx_factor": 1.0,
            "os-flavor-access:is_public": True, "description": None,
            "extra_specs": {"pci_passthrough:alias": "nvme-1800g:4", "hw:cpu_policy": "dedicated"}}


def default_flavors() -> dict[str, dict[str, Any]]:
    small = {"id": "b2-7", "name": "b2-7", "vcpus": 2, "ram": 7168, "disk": 50, "OS-FLV-EXT-DATA:ephemeral": 0,
             "swap": "", "rxtx_factor": 1.0, "os-flavor-access:is_public": True, "description": None,
             "extra_specs": {}}
    big = i1_180()
    return {small["id"]: small, big["id"]: big}


def default_images() -> dict[str, dict[str, Any]]:
    ubuntu = {"id": "3f6c1d2e-8b4a-4f7e-9c1d-2e3f4a5b6c7d", "name": "Ubuntu 24.04", "status": "active",
              "visibility": "public", "os_distro": "ubuntu", "os_version": "24.04", "min_disk": 0, "min_ram": 0,
              "disk_format": "qcow2", "container_format": "bare", "size": 2361393152, "tags": [],
              "protected": False, "owner": "ffffffffffffffffffffffffffffffff"}
    debian = {**ubuntu, "id": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "name": "Debian 12", "os_distro": "debian",
              "os_version": "12", "os_admin_user": "debian"}
    return {ubuntu["id"]: ubuntu, debian["id"]: debian}


def default_networks() -> dict[str, dict[str, Any]]:
    ext = {"id": "6011fbc9-4cbf-46a4-8452-6890a340b60b", "name": "Ext-Net", "status": "ACTIVE",
           "admin_state_up": True, "shared": True, "router:external": True, "subnets": [],
           "project_id": "ffffffffffffffffffffffffffffffff", "tenant_id": "ffffffffffffffffffffffffffffffff",
           "mtu": 1500, "tags": []}
    return {ext["id"]: ext}


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class FakeOpenStack:
    """State and knobs of the fake cloud. ``start()`` serves it; tests assert on the dicts."""

    username: str = "demo"
    password: str = "secret"
    project_name: str = "demo"
    app_credential: tuple[str, str] = ("8e7d6c5b4a39482716a5b4c3d2e1f0a9", "app-secret")
    region: str = "RegionOne"
    token_lifetime: timedelta = timedelta(hours=1)
    flavors: dict[str, dict[str, Any]] = field(default_factory=default_flavors)
    images: dict[str, dict[str, Any]] = field(default_factory=default_images)
    networks: dict[str, dict[str, Any]] = field(default_factory=default_networks)
    volume_types: list[dict[str, Any]] = field(default_factory=lambda: [
        {"id": "5c1e3a52-0f5e-4a4e-8a62-6e8f1f3c2b10", "name": "classic", "is_public": True, "extra_specs": {}},
        {"id": "7d2f4b63-1a6f-4b5f-9b73-7f9a2a4d3c21", "name": "high-speed", "is_public": True,
         "extra_specs": {}}])
    # Cinder QoS specs: {"id", "name", "consumer", "specs", "types": [volume type ids]}; admin-only by
    # Cinder's default policy, so a user gets 403 when ``qos_forbidden``
    qos_specs: list[dict[str, Any]] = field(default_factory=list)
    qos_forbidden: bool = False
    compute_limits: dict[str, int] = field(default_factory=lambda: {
        "maxTotalInstances": 10, "maxTotalCores": 64, "maxTotalRAMSize": 409600, "maxTotalKeypairs": 100})
    volume_limits: dict[str, int] = field(default_factory=lambda: {
        "maxTotalVolumes": 10, "maxTotalVolumeGigabytes": 1000})
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    keypairs: dict[str, dict[str, Any]] = field(default_factory=dict)
    security_groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    volumes: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    build_polls: int = 2  # GETs of a new server that answer BUILD
    delete_polls: int = 2  # GETs of a deleted server that still find it
    deletes_hang: bool = False  # a deleted server stays "deleting" until this is switched off again
    volume_polls: int = 1  # GETs of a volume in a passing state (creating, detaching, deleting)
    no_valid_host: bool = False  # the scheduler fails: the server goes ERROR
    quota_fault: int | None = None  # 403 or 413: Nova refuses the next server create for quota
    # "METHOD path-regex" -> [status, body, times (None: always)]; checked before any routing
    faults: dict[str, list[Any]] = field(default_factory=dict)
    on_boot: Callable[[dict[str, Any]], Boot] | None = None  # called in a thread when a server is created
    on_delete: Callable[[dict[str, Any]], None] | None = None
    tokens: dict[str, datetime] = field(default_factory=dict)  # token -> expiry
    server: ThreadingHTTPServer | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _addresses: int = 10

    # --- serving ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def auth_url(self) -> str:
        return f"{self.url}/identity/v3"

    def start(self) -> FakeOpenStack:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once: no 40 ms delayed-ACK stalls

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                parsed = urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                req = Request(self.command, unquote(parsed.path).rstrip("/") or "/", parse_qs(parsed.query), body,
                              self.headers.get("X-Auth-Token"))
                with fake._lock:
                    fake.requests.append(req)
                    status, payload, headers = fake.dispatch(req)
                data = b"" if payload is None or status == 204 else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_DELETE = do_POST = do_PATCH = do_HEAD = _handle  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    # --- what tests use -----------------------------------------------------------------------
    def expire_tokens(self) -> None:
        """Every token issued so far stops working, as when it expires mid-run: the SDK must log in again."""
        with self._lock:
            for token in self.tokens:
                self.tokens[token] = datetime.now(timezone.utc) - timedelta(seconds=1)

    def auth_requests(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST" and r.path == "/identity/v3/auth/tokens"]

    def calls(self, method: str, pattern: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]

    def empty(self) -> bool:
        """Nothing a run creates is left: no server, keypair, security group or volume."""
        return not (self.servers or self.keypairs or self.security_groups or self.volumes)

    def clouds_yaml(self, cloud: str = "fake", *, application_credential: bool = False) -> str:
        if application_credential:
            auth = (f"      application_credential_id: {self.app_credential[0]}\n"
                    f"      application_credential_secret: {self.app_credential[1]}\n")
            kind = "    auth_type: v3applicationcredential\n"
        else:
            auth = (f"      username: {self.username}\n      password: {self.password}\n"
                    f"      project_name: {self.project_name}\n      user_domain_name: Default\n"
                    "      project_domain_name: Default\n")
            kind = "    auth_type: password\n"
        return (f"clouds:\n  {cloud}:\n{kind}    auth:\n      auth_url: {self.auth_url}\n{auth}"
                f"    region_name: {self.region}\n    identity_api_version: 3\n")

    def os_environ(self) -> dict[str, str]:
        return {"OS_AUTH_URL": self.auth_url, "OS_USERNAME": self.username, "OS_PASSWORD": self.password,
                "OS_PROJECT_NAME": self.project_name, "OS_USER_DOMAIN_NAME": "Default",
                "OS_PROJECT_DOMAIN_NAME": "Default", "OS_REGION_NAME": self.region, "OS_IDENTITY_API_VERSION": "3"}

    # --- routing ------------------------------------------------------------------------------
    def dispatch(self, req: Request) -> Reply:
        for pattern, reply in self.faults.items():
            method, _, path_re = pattern.partition(" ")
            times = reply[2] if len(reply) > 2 else None
            if req.method == method and re.search(path_re, req.path) and times != 0:
                if times is not None:
                    reply[2] = times - 1
                return reply[0], reply[1], {}
        if req.path.startswith("/identity"):
            return self._identity(req)
        if not self._token_ok(req.token):
            return 401, {"error": {"code": 401, "title": "Unauthorized",
                                   "message": "The request you have made requires authentication."}}, {}
        for prefix, handler in (("/compute", self._compute), ("/network", self._network),
                                ("/volume", self._volume), ("/image", self._image)):
            if req.path.startswith(prefix):
                return handler(req, req.path[len(prefix):])
        return 404, {"error": f"{req.method} {req.path} is not faked"}, {}

    def _token_ok(self, token: str | None) -> bool:
        return token is not None and token in self.tokens and self.tokens[token] > datetime.now(timezone.utc)

    # --- Keystone -----------------------------------------------------------------------------
    def _identity(self, req: Request) -> Reply:
        version = {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
                   "links": [{"rel": "self", "href": f"{self.auth_url}/"}],
                   "media-types": [{"base": "application/json",
                                    "type": "application/vnd.openstack.identity-v3+json"}]}
        if req.method == "GET" and req.path == "/identity":
            return 300, {"versions": {"values": [version]}}, {}
        if req.method == "GET" and req.path == "/identity/v3":
            return 200, {"version": version}, {}
        if req.method == "POST" and req.path == "/identity/v3/auth/tokens":
            return self._issue_token(req.body or {})
        return 404, {"error": {"code": 404, "message": f"{req.path} is not faked"}}, {}

    def _issue_token(self, body: dict[str, Any]) -> Reply:
        identity = body.get("auth", {}).get("identity", {})
        methods = identity.get("methods", [])
        if "password" in methods:
            user = identity["password"]["user"]
            ok = user.get("name") == self.username and user.get("password") == self.password
        elif "application_credential" in methods:
            cred = identity["application_credential"]
            ok = (cred.get("id"), cred.get("secret")) == self.app_credential
        else:
            ok = False
        if not ok:
            return 401, {"error": {"code": 401, "title": "Unauthorized",
                                   "message": "The request you have made requires authentication."}}, {}
        token = uuid.uuid4().hex
        expires = datetime.now(timezone.utc) + self.token_lifetime
        self.tokens[token] = expires
        domain = {"id": "default", "name": "Default"}

        def endpoint(kind: str, name: str, url: str) -> dict[str, Any]:
            return {"type": kind, "name": name, "id": uuid.uuid4().hex, "endpoints": [
                {"id": uuid.uuid4().hex, "interface": "public", "region": self.region, "region_id": self.region,
                 "url": url}]}

        catalog = [endpoint("identity", "keystone", f"{self.url}/identity"),
                   endpoint("compute", "nova", f"{self.url}/compute/v2.1"),
                   endpoint("network", "neutron", f"{self.url}/network"),
                   endpoint("volumev3", "cinderv3", f"{self.url}/volume/v3/{PROJECT_ID}"),
                   endpoint("image", "glance", f"{self.url}/image")]
        doc = {"token": {"methods": methods, "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%S.000000Z"),
                         "issued_at": _now(), "audit_ids": [uuid.uuid4().hex[:22]],
                         "user": {"id": USER_ID, "name": self.username, "domain": domain,
                                  "password_expires_at": None},
                         "project": {"id": PROJECT_ID, "name": self.project_name, "domain": domain},
                         "roles": [{"id": uuid.uuid4().hex, "name": "member"}], "catalog": catalog}}
        return 201, doc, {"X-Subject-Token": token}

    # --- Nova, Neutron, Cinder (tests/fake_openstack_services.py), Glance -----------------------
    def _compute(self, req: Request, path: str) -> Reply:
        from .fake_openstack_services import route_compute

        return route_compute(self, req, path)

    def _network(self, req: Request, path: str) -> Reply:
        from .fake_openstack_services import route_network

        return route_network(self, req, path)

    def _volume(self, req: Request, path: str) -> Reply:
        from .fake_openstack_services import route_volume

        return route_volume(self, req, path)

    def _image(self, req: Request, path: str) -> Reply:
        if path in ("", "/"):
            return 300, {"versions": [{"id": "v2.16", "status": "CURRENT",
                                       "links": [{"rel": "self", "href": f"{self.url}/image/v2/"}]}]}, {}
        if req.method == "GET" and path == "/v2/images":
            name = req.query.get("name", [None])[0]
            items = [i for i in self.images.values() if name is None or i["name"] == name]
            return 200, {"images": items, "schema": "/v2/schemas/images", "first": "/v2/images"}, {}
        m = re.fullmatch(r"/v2/images/([^/]+)", path)
        if req.method == "GET" and m:
            if m.group(1) in self.images:
                return 200, self.images[m.group(1)], {}
            return 404, {"code": 404, "title": "Not Found",
                         "message": f"No image found with ID {m.group(1)}"}, {}
        return 404, {"error": f"{req.method} /image{path} is not faked"}, {}

    # --- helpers for the service modules --------------------------------------------------------
    def next_address(self) -> str:
        self._addresses += 1
        return f"198.51.100.{self._addresses}"

    def default_boot(self, server: dict[str, Any]) -> Boot:
        return Boot(address=self.next_address(), host_keys=[host_key_line(f"root@{server['name']}")])
