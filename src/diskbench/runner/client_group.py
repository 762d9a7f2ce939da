"""A unit on a client group: one job for every client at once, driven from here.

Each client gets its own job file (its own place on the shared target); the engine's multi-host
mode starts them together from this machine and writes every client's results and their merge.
A client missing from the output, or one whose job failed, makes the unit partial: its other
clients' rows are kept and no merge is stored, since a total without a client would look like a
slower system.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..attribution.attributor import Attributor
from ..engines.base import Endpoint, Engine, MultiHost, Place
from ..errors import DiskbenchError
from ..executors.base import Executor
from ..plan import Unit
from .drive import Drive, Outcome, Share
from .progress import JobTracker


@dataclass(frozen=True)
class Seat:
    """One client's part of a unit: its name, where its server listens, where its job lands."""

    name: str
    endpoint: Endpoint
    place: Place
    attributor: Attributor


@dataclass
class ClientGroup(Drive):
    """One unit's engine on every client of a group, from the controller."""

    engine: Engine
    mode: MultiHost
    version: str | None
    seats: list[Seat]
    controller: Executor  # this machine: runs the one command that drives every client
    merged: Attributor  # the merge's attribution: every client's limits together
    flush: Callable[[Unit, Path], None] | None = None  # flush_cache on every client (the group's step)

    def label(self, job: Unit) -> str:
        return f"{job.workload.name} on {job.target_label} @ {job.machine} ({len(self.seats)} clients)"

    def render(self, job: Unit, art: Path) -> str:
        """Each client's job file beside the others (``NAME.job.SUFFIX``); the first is the one recorded."""
        texts = []
        for seat in self.seats:
            text = self.engine.render(replace(job, machine=seat.name), [seat.place])
            self._jobfile(art, seat).write_text(text, encoding="utf-8")
            texts.append(text)
        return texts[0]

    def prepare(self, job: Unit, art: Path, label: str) -> None:
        """No engine pass (a client group runs each job once, all clients together; the plan refuses
        passes): only ``flush_cache``, on every client at once."""
        if job.workload.flush_cache and self.flush is not None:
            self.flush(job, art)

    def measure(self, job: Unit, rendered: str, art: Path, tracker: JobTracker) -> int:
        jobs = [(seat.endpoint, str(self._jobfile(art, seat))) for seat in self.seats]
        rc = self.controller.stream(self.mode.drive(jobs, str(art / self.engine.output_name)),
                                    on_output=lambda _text: None, timeout=job.expected_s * 3 + 120,
                                    stdout_path=art / "stdout.txt", stderr_path=art / "stderr.txt",
                                    workdir=str(art))
        (art / "exit_code").write_text(f"{rc}\n")
        return rc

    def results(self, job: Unit, art: Path, rc: int) -> Outcome:
        """Each client's rows under its name and, when every client finished, their merge under the group's."""
        output = art / self.engine.output_name
        try:
            found = self.mode.results(output.read_text(errors="replace") if output.exists() else "",
                                      source=str(output))
        except DiskbenchError as exc:
            return Outcome([], [], self._why(art, rc) or str(exc))
        seats = {seat.endpoint: seat for seat in self.seats}
        shares = [Share(seats[e].name, groups, seats[e].attributor, [seats[e].place]) if e in seats
                  else Share(f"{e.address},{e.port}", groups, None) for e, groups in found.hosts.items()]
        missing = [seat.name for seat in self.seats if seat.endpoint not in found.hosts]
        failed = [share.host for share in shares if any(g.errors for g in share.groups)]
        if missing or failed:
            return Outcome(shares, [], f"partial: client(s) {', '.join(missing + failed)} did not finish the job; "
                                       "other clients' rows kept, no total")
        for group in found.merged:
            group.hosts = [seat.name for seat in self.seats]
        shares.append(Share(job.machine, found.merged, self.merged, [self.seats[0].place]))
        message = None if rc == 0 else self._why(art, rc) or f"{self.engine.name} exit {rc}"
        return Outcome(shares, found.merged, message)

    def _why(self, art: Path, rc: int) -> str | None:
        """The line the engine wrote about the failure, with each client's name by its address."""
        path = art / "stderr.txt"
        line = self.mode.failure(path.read_text(errors="replace") if path.exists() else "")
        if not line:
            return None
        for seat in self.seats:
            address = seat.endpoint.address
            line = line.replace(address, f"{seat.name} ({address})") if address in line else line
        return f"{self.engine.name} exit {rc}: {line}"

    def _jobfile(self, art: Path, seat: Seat) -> Path:
        return art / f"{seat.name}.job{self.engine.job_suffix}"
