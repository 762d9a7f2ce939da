"""fio's own client/server mode: servers on the clients, one ``fio --client ...`` on the controller.

fio starts the job on every server together and reports each client (``client_stats``, with
``hostname`` = the address it was reached at) plus its "All clients" sum. diskbench stores each
client's figures and the merge of all of them from the json+ bins, never an average of clients.
"""

from __future__ import annotations

from typing import Any

from ...errors import ParseError
from ...model import GroupResult
from .parse import ALL_CLIENTS, extract_fio_document, parse_fio_document

SERVER_PIDFILE = "fio-server.pid"


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


def client_results(text: str, source: str) -> tuple[list[GroupResult], dict[str, list[GroupResult]],
                                                       dict[str, Any]]:
    """The merged groups, each client's own (by ``address,port`` fio reached it at), and the document."""
    doc = extract_fio_document(text, source)
    stats = doc.get("client_stats")
    if not isinstance(stats, list):
        raise ParseError(f"{source}: no client_stats: this is not fio client/server output")
    per_client: dict[str, list[GroupResult]] = {}
    clients = [e for e in stats if isinstance(e, dict) and e.get("jobname") != ALL_CLIENTS]
    for key in dict.fromkeys(_key(e) for e in clients):
        per_client[key] = parse_fio_document({**doc, "client_stats": [e for e in clients if _key(e) == key]})
    return parse_fio_document(doc), per_client, doc


def all_clients(doc: dict[str, Any]) -> dict[str, Any] | None:
    """fio's own "All clients" entry (for checking; diskbench merges the bins itself)."""
    return next((e for e in doc.get("client_stats") or [] if e.get("jobname") == ALL_CLIENTS), None)


def _key(entry: dict[str, Any]) -> str:
    return f"{entry.get('hostname', '')},{entry.get('port', '')}"
