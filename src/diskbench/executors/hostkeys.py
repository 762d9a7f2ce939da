"""SSH host keys: the user's known_hosts, diskbench's own record, and pinned fingerprints.

A key is checked before any authentication is attempted (as OpenSSH does), so diskbench never
offers credentials to a host it has not verified.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
from pathlib import Path

import paramiko

from ..errors import ExecutionError
from ..profile.machines import Host


class HostKeyError(ExecutionError):
    """The host's key is unknown, changed, or not the pinned one."""


def fingerprint(key: paramiko.PKey) -> str:
    """OpenSSH's SHA256 fingerprint, as ``ssh-keygen -lf`` prints it."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


class HostKeyTrust:
    """Known hosts: the user's known_hosts, diskbench's own record, and pinned fingerprints.

    Unknown keys are refused unless ``accept_new`` is set; then the first key seen is recorded
    (in diskbench's known-hosts file and the run) and a different key later is refused.
    """

    def __init__(self, *, known_hosts: str | None = None, diskbench_known_hosts: Path | None = None,
                 accept_new: bool = False) -> None:
        self.known_hosts = Path(known_hosts or os.path.expanduser("~/.ssh/known_hosts"))
        self.own = diskbench_known_hosts
        self.accept_new = accept_new
        self.seen: dict[str, str] = {}  # "[addr]:port" -> fingerprint, for the run record
        self._lock = threading.Lock()

    def host_keys(self) -> paramiko.HostKeys:
        keys = paramiko.HostKeys()
        for path in (self.known_hosts, self.own):
            if path is not None and path.is_file():
                keys.load(str(path))
        return keys

    def verify(self, host: Host, key: paramiko.PKey) -> None:
        name = host.address if host.port == 22 else f"[{host.address}]:{host.port}"
        got = fingerprint(key)
        with self._lock:
            self.seen[name] = got
        if host.host_key:
            if got != host.host_key:
                raise HostKeyError(f"{host.name}: host key {got} is not the pinned {host.host_key}",
                                   hint="someone may be intercepting the connection; check the host")
            return
        known = self.host_keys().lookup(name)
        if known is not None:
            if known.get(key.get_name()) is None or known[key.get_name()].asbytes() != key.asbytes():
                raise HostKeyError(f"{host.name}: the host key of {name} changed (now {got})",
                                   hint="if the host was rebuilt, remove its old key from known_hosts")
            return
        if not self.accept_new:
            raise HostKeyError(f"{host.name}: unknown host key {got} for {name}",
                               hint="pin it with host_key: in the profile, add it to known_hosts, "
                                    "or pass --accept-new-host-key")
        if self.own is not None:
            with self._lock:
                self.own.parent.mkdir(parents=True, exist_ok=True)
                with open(self.own, "a", encoding="utf-8") as fh:
                    fh.write(f"{name} {key.get_name()} {key.get_base64()}\n")


class VerifyBeforeAuth(paramiko.MissingHostKeyPolicy):
    """paramiko asks this policy after the key exchange and before authentication; the client
    holds no keys of its own, so it asks for every host, and a key the trust refuses ends the
    connection before a single credential is sent."""

    def __init__(self, trust: HostKeyTrust, host: Host) -> None:
        self.trust = trust
        self.host = host

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        self.trust.verify(self.host, key)
