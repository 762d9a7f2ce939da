"""The server's SSH host keys, read from its console log: the one channel the cloud vouches for.

On first boot cloud-init writes two blocks to the console: ``-----BEGIN SSH HOST KEY
FINGERPRINTS-----`` (one ``bits SHA256:... comment (TYPE)`` line per key, often behind a syslog
prefix) and ``-----BEGIN SSH HOST KEY KEYS-----`` (the public keys themselves). diskbench takes
the keys from the second block, computes their fingerprints as ``ssh-keygen -lf`` does, and, when
the first block is there too, insists that they agree. No key on the console means no SSH: the
first connection never trusts whatever key it is shown.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from diskbench.errors import DiskbenchError

from .spec import HostKey

KEYS = ("-----BEGIN SSH HOST KEY KEYS-----", "-----END SSH HOST KEY KEYS-----")
PRINTS = ("-----BEGIN SSH HOST KEY FINGERPRINTS-----", "-----END SSH HOST KEY FINGERPRINTS-----")
PREFERENCE = ("ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa")
_KEY = re.compile(r"\b(ssh-ed25519|ecdsa-sha2-nistp(?:256|384|521)|ssh-rsa)\s+([A-Za-z0-9+/]+={0,2})")
_PRINT = re.compile(r"\b(SHA256:[A-Za-z0-9+/]{43})\b")


def fingerprint(key_base64: str) -> str:
    """``SHA256:...`` of a public key blob, exactly as ``ssh-keygen -lf`` prints it."""
    blob = base64.b64decode(key_base64)
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _block(console: str, markers: tuple[str, str]) -> list[str] | None:
    """The lines between the last complete pair of markers (a reboot prints them again), or None."""
    end = console.rfind(markers[1])
    start = console.rfind(markers[0], 0, end) if end >= 0 else -1
    if start < 0:
        return None
    return console[start + len(markers[0]):end].splitlines()


def _key(kind: str, data: str) -> HostKey | None:
    try:
        blob = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    # The blob starts with its own type name: a line garbled on the console does not pass.
    if len(blob) < 4 or blob[4:4 + int.from_bytes(blob[:4], "big")] != kind.encode():
        return None
    return HostKey(kind, data, fingerprint(data))


def host_keys(console: str, server: str = "the server") -> list[HostKey] | None:
    """The host keys on the console, best first; None while cloud-init has not printed them yet.

    Raises when the console shows keys that contradict the fingerprints it showed: someone or
    something other than cloud-init wrote them, and connecting would trust the wrong host.
    """
    lines = _block(console, KEYS)
    if lines is None:
        return None
    keys = [k for k in (_key(m.group(1), m.group(2)) for line in lines for m in [_KEY.search(line)] if m) if k]
    if not keys:
        return None
    printed = _block(console, PRINTS)
    if printed is not None:
        shown = {m.group(1) for line in printed for m in [_PRINT.search(line)] if m}
        strangers = [k for k in keys if k.fingerprint not in shown]
        if shown and strangers:
            raise DiskbenchError(f"{server}: the console shows host key {strangers[0].fingerprint}, which is not "
                                 "among the fingerprints cloud-init printed", hint="do not trust this server; "
                                 "delete it with `diskbench cleanup` and look at its console log")
    return sorted(keys, key=lambda k: PREFERENCE.index(k.type))
