"""Who may reach a cloud machine's SSH port: the caller's public address, or what the user says."""

from __future__ import annotations

import ipaddress

from ..errors import DiskbenchError


def ssh_source(value: str) -> str:
    """A CIDR (a bare address means /32), or ``*`` for ``any``."""
    if value == "any":
        return "*"
    try:
        return str(ipaddress.ip_network(value if "/" in value else f"{value}/32", strict=False))
    except ValueError:
        raise DiskbenchError(f"--ssh-source {value!r} is not an address or CIDR",
                             hint="e.g. 203.0.113.7 or 203.0.113.0/24, or `any` to open SSH to everyone") from None


def detect_public_address(timeout: float = 5.0) -> str:
    """This machine's public IPv4 address as a /32, for the rule that admits SSH."""
    import urllib.request

    for url in ("https://api.ipify.org", "https://ifconfig.me/ip"):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - fixed https URLs
                text = response.read().decode().strip()
            return f"{ipaddress.ip_address(text)}/32"
        except (OSError, ValueError):
            continue
    raise DiskbenchError("cannot detect your public address for the SSH rule",
                         hint="pass --ssh-source CIDR (or --ssh-source any to open SSH to everyone)")
