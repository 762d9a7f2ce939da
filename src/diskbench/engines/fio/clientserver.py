"""fio's own client/server mode: servers on the clients, one ``fio --client ...`` on the controller.

fio starts the job on every server together and reports each client (``client_stats``, with
``hostname`` = the address it was reached at) plus its "All clients" sum. diskbench stores each
client's figures and the merge of all of them from the json+ bins, never an average of clients.
This is the fio engine's answer to the engine seam's ``MultiHost``: the runner asks it for the
commands and the results and never names fio itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from ...errors import ParseError
from ...model import GroupResult
from ...profile import Workload
from ..base import Endpoint, HostResults, MultiHost

SERVER_PIDFILE = "fio-server.pid"
RANDOM_KEYS = ("randrepeat", "randseed")  # a job that sets either chose its own offsets


class ClientServerOptions(BaseModel):
    """What fio's client/server mode adds to a profile's ``shared:`` block."""

    randrepeat: bool = Field(False, description="keep fio's default randrepeat=1 (same offsets on every "
                             "client: served from the server's cache)")


class ClientServer(MultiHost):
    """``fio --server`` on every client, ``fio --client=... job ...`` on the controller."""

    pidfile: ClassVar[str] = SERVER_PIDFILE
    options: ClassVar[type[BaseModel] | None] = ClientServerOptions

    def plan_workload(self, workload: Workload, options: Mapping[str, Any]) -> Workload:
        """``randrepeat=0`` unless the job or ``shared.randrepeat`` says otherwise: with fio's default
        every client seeds its offsets alike and the server answers the same blocks from its cache."""
        if workload.stop_rule is not None:
            from ...errors import ProfileError

            raise ProfileError(f"workload {workload.name}: stop: a client group's job (shared:) runs its whole "
                               "runtime; drop stop for it", hint="run it without --adaptive, or set stop: false on it")
        extra = workload.extra or {}
        if options.get("randrepeat") or any(k in extra for k in RANDOM_KEYS):
            return workload
        return workload.model_copy(update={"extra": {**extra, "randrepeat": False}})

    def same_offsets(self, workload: Workload) -> bool:
        """fio's default ``randrepeat=1`` seeds every client's offsets alike."""
        return str((workload.extra or {}).get("randrepeat", 1)) not in ("0", "False", "false")

    def serve(self, bind: str, port: int, pidfile: str) -> list[str]:
        return server_command(bind, port, pidfile)

    def drive(self, jobs: Sequence[tuple[Endpoint, str]], output: str) -> list[str]:
        return client_command([(e.address, e.port, jobfile) for e, jobfile in jobs], output)

    def results(self, text: str, *, source: str) -> HostResults:
        return client_results(text, source)

    def failure(self, stderr: str) -> str | None:
        """The first line fio wrote about the failure (its own ``fio:`` lines first)."""
        lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
        return next((ln for ln in lines if "fio:" in ln or "error" in ln.lower()), lines[0] if lines else None)


def endpoint(address: str, port: int) -> str:
    """fio's ``--server``/``--client`` address: ``ip:HOST,PORT`` (``ip6:`` for IPv6)."""
    return f"{'ip6' if ':' in address else 'ip'}:{address},{port}"


def server_command(address: str, port: int, pidfile: str) -> list[str]:
    """A daemonised server bound to one address; stopped by the pid it writes."""
    return ["fio", f"--server={endpoint(address, port)}", f"--daemonize={pidfile}"]


def client_command(clients: list[tuple[str, int, str]], output: str) -> list[str]:
    """Each client with its own job file (address, port, job file); fio starts them together."""
    argv = ["fio", "--output-format=json+", f"--output={output}"]
    for address, port, jobfile in clients:
        argv += [f"--client={endpoint(address, port)}", jobfile]
    return argv


def client_results(text: str, source: str) -> HostResults:
    """The merged groups, and each client's own by the endpoint fio reached it at."""
    from .parse import ALL_CLIENTS, extract_fio_document, parse_fio_document

    doc = extract_fio_document(text, source)
    stats = doc.get("client_stats")
    if not isinstance(stats, list):
        raise ParseError(f"{source}: no client_stats: this is not fio client/server output")
    clients = [e for e in stats if isinstance(e, dict) and e.get("jobname") != ALL_CLIENTS]
    hosts: dict[Endpoint, list[GroupResult]] = {}
    for key in dict.fromkeys(_key(e) for e in clients):
        hosts[key] = parse_fio_document({**doc, "client_stats": [e for e in clients if _key(e) == key]})
    return HostResults(parse_fio_document(doc), hosts)


def all_clients(doc: dict[str, Any]) -> dict[str, Any] | None:
    """fio's own "All clients" entry (for checking; diskbench merges the bins itself)."""
    from .parse import ALL_CLIENTS

    return next((e for e in doc.get("client_stats") or [] if e.get("jobname") == ALL_CLIENTS), None)


def _key(entry: dict[str, Any]) -> Endpoint:
    port = entry.get("port")
    return Endpoint(str(entry.get("hostname", "")), port if isinstance(port, int) else -1)
