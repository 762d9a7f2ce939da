"""Where an SSH host really is, as ``ssh`` would work it out: ~/.ssh/config, keys, jump hosts.

People reach their machines through Host aliases, a User and Port per host, IdentityFile and
ProxyJump (bastions) in ~/.ssh/config, and the agent or ~/.ssh/id_* keys. diskbench reads the same
file with paramiko's SSHConfig and resolves a host the way ssh does: what the profile or the command
line says wins, the config fills in the rest, and ssh's defaults come last.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from ..errors import ExecutionError
from ..profile import Host

DEFAULT_IDENTITIES = ("id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_dsa")  # ssh's order


@dataclass
class Route:
    """One hop: where to connect, as whom, with which keys (empty: the agent and ssh's defaults)."""

    alias: str  # what the profile or --host said
    hostname: str
    port: int
    user: str
    identities: list[str] = field(default_factory=list)
    jumps: list[Route] = field(default_factory=list)  # ProxyJump hops, first first

    def host(self, like: Host | None = None) -> Host:
        """This hop as a Host (for host-key checks): the name people gave it, the address it has."""
        if like is not None:
            return like.model_copy(update={"address": self.hostname, "port": self.port, "user": self.user})
        return Host(name=_name(self.alias), address=self.hostname, port=self.port, user=self.user)


def config_path() -> Path:
    return Path(os.path.expanduser("~/.ssh/config"))


def load_config(path: Path | None = None) -> paramiko.SSHConfig:
    """~/.ssh/config, or an empty one when there is none; a file ssh could not read either is an error."""
    path = path or config_path()
    if not path.is_file():
        return paramiko.SSHConfig()
    try:
        return paramiko.SSHConfig.from_path(str(path))
    except (OSError, ValueError, paramiko.SSHException) as exc:
        raise ExecutionError(f"{path}: cannot be read as an SSH config: {exc}",
                             hint="fix the file, or run with HOME pointing elsewhere") from None


def resolve(host: Host, config: paramiko.SSHConfig | None = None) -> Route:
    """``host`` as ssh would reach it: profile and command-line values first, then ~/.ssh/config."""
    config = config or load_config()
    found = config.lookup(host.address)
    port = host.port if host.port != 22 or "port" not in found else int(found["port"])
    user = host.user or found.get("user") or getpass.getuser()
    identities = [os.path.expanduser(host.key_file)] if host.key_file else _identities(found)
    jumps = [_jump(hop.strip(), config) for hop in str(found.get("proxyjump", "")).split(",")
             if hop.strip() and hop.strip().lower() != "none"]
    return Route(host.address, found.get("hostname", host.address), port, user, identities, jumps)


def _jump(spec: str, config: paramiko.SSHConfig) -> Route:
    """One ProxyJump hop (``[user@]host[:port]``), itself resolved through the config (but not its jumps)."""
    user, _, rest = spec.rpartition("@")
    address, _, port = rest.partition(":") if rest.count(":") == 1 else (rest, "", "")
    found = config.lookup(address)
    return Route(address, found.get("hostname", address), int(port or found.get("port", "22")),
                 user or found.get("user") or getpass.getuser(), _identities(found))


def _identities(found: paramiko.SSHConfigDict) -> list[str]:
    """The config's IdentityFile entries that exist (ssh skips missing ones, as paramiko's defaults do)."""
    paths = [os.path.expanduser(p) for p in found.get("identityfile", [])]
    return [p for p in paths if os.path.exists(p)]


def tried(route: Route) -> list[str]:
    """What authentication offers, as ssh would list it: the agent's keys, then the key files."""
    out = []
    if os.environ.get("SSH_AUTH_SOCK"):
        try:
            if paramiko.Agent().get_keys():
                out.append("agent")
        except paramiko.SSHException:
            pass
    if route.identities:
        return out + [_tilde(p) for p in route.identities]
    home = Path(os.path.expanduser("~/.ssh"))
    return out + [f"~/.ssh/{name}" for name in DEFAULT_IDENTITIES if (home / name).is_file()]


def _tilde(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if path.startswith(home + os.sep) else path


def _name(alias: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in alias).strip("-")[:64] or "jump"
