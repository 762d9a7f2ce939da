"""Key pairs a run makes for itself: a login key per run, a host key per machine it creates.

A host key diskbench generates and hands to the machine at creation is pinned before the
first connection; nothing is trusted on first use.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519


@dataclass
class KeyPair:
    private_openssh: str
    public_openssh: str

    @classmethod
    def generate(cls, comment: str = "") -> KeyPair:
        key = ed25519.Ed25519PrivateKey.generate()
        private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                    serialization.NoEncryption()).decode()
        public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                               serialization.PublicFormat.OpenSSH).decode()
        return cls(private, f"{public} {comment}".strip())

    @property
    def fingerprint(self) -> str:
        blob = base64.b64decode(self.public_openssh.split()[1])
        return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
