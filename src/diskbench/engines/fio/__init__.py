"""The fio engine: job files from templates, ``--output-format=json+``, and fio's numbers as fio means them.

Every job file asks for ``clat_percentiles=1`` and an explicit percentile list and runs with
json+ output, so the latency bins needed to merge jobs exactly are always there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ...executors.base import Executor
from ...model import GroupResult
from ...profile import Workload
from ..base import Engine, Live, MultiHost, Parsed, Place
from .files import fio_files, fio_flag

if TYPE_CHECKING:
    from ...check import Check
    from ...plan import Unit
    from ...platforms.base import Platform
    from ...runner.progress import JobTracker

FIO_ARGS = ["--output-format=json+", "--eta=always", "--eta-interval=1s"]
MIN_FIO = (3, 1)
LOG_OPTIONS = ("write_iops_log=", "write_bw_log=", "write_lat_log=", "log_avg_msec=")  # json+ latency bins


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


class FioEngine(Engine):
    name: ClassVar[str] = "fio"
    default_for: ClassVar[tuple[str, ...]] = ("linux",)
    platforms: ClassVar[tuple[str, ...]] = ("linux",)
    job_suffix: ClassVar[str] = ".fio"
    output_name: ClassVar[str] = "output.json"

    def check_workload(self, workload: Workload) -> list[tuple[str, str]]:
        return [(key, f"options for the {key} engine; this workload runs with fio")
                for key in (workload.engine_options or {})]

    def refused_options(self, workload: Workload, *, allow_exec: bool) -> list[tuple[str, str]]:
        from .options import option_problems

        return option_problems(workload, allow_exec=allow_exec)

    def render(self, job: Unit, places: list[Place], *, purpose: str = "") -> str:
        from .render import render_fio

        return render_fio(job, places, by_hand=purpose == "by-hand", logs=purpose == "measure")

    def command(self, jobfile: str, output: str) -> list[str]:
        return ["fio", *FIO_ARGS, f"--output={output}", jobfile]

    def version(self, ex: Executor) -> str | None:
        out = ex.run(["fio", "--version"], timeout=20)  # runs it: a file called fio that does not run is no fio
        if out.returncode != 0:
            return None
        return out.stdout.strip().removeprefix("fio-") or None

    def parse(self, text: str, *, source: str, per_job: bool = False) -> Parsed:
        from .parse import parse_fio_text

        doc, groups = parse_fio_text(text, per_job=per_job, source=source)
        facts = {"fio_version": str(doc.get("fio version", "")).removeprefix("fio-"),
                 "fio_time": doc.get("time"), "global_options": doc.get("global options")}
        return Parsed(groups, facts, doc)

    def verify(self, rendered: str, parsed: Parsed) -> str | None:
        from .echo import mismatch

        return mismatch(rendered, parsed.document) if parsed.document is not None else None

    def parse_file(self, path: Path, read: Callable[[Path], str], *, per_job: bool = False) -> Parsed:
        from .stream import last_document_text

        tail = last_document_text(path)  # a big status-interval file: only its last document
        if tail is None:
            return super().parse_file(path, read, per_job=per_job)
        return self.parse(tail, source=str(path), per_job=per_job)

    def combine(self, output: Path) -> GroupResult | None:
        from .parse import extract_fio_document, parse_fio_document

        doc = extract_fio_document(output.read_text(errors="replace"), str(output))
        (merged,) = parse_fio_document(doc, merge_all=True)
        return merged

    def log_files(self, rendered: str) -> list[str]:
        from .logs import log_files

        return log_files(rendered)

    def outcome(self, art: Path, rc: int, *, stopped_early: bool = False) -> tuple[list[GroupResult], str | None]:
        from .logs import attach_series
        from .parse import PARTIAL_PREFIXES

        groups, message = super().outcome(art, rc)
        if stopped_early and groups:  # fio's SIGINT was the adaptive stop's: the run ended as asked
            for g in groups:
                kept = [e for e in g.errors if not e.startswith(PARTIAL_PREFIXES)]
                if len(kept) < len(g.errors):
                    g.notes.append("ended by the adaptive stop (stop:) with fio's own SIGINT handling, as asked")
                g.errors = kept
            if rc == 0 and not any(g.errors for g in groups):
                message = None
        attach_series(art, groups)
        return groups, message

    def live(self, ramp_s: float) -> Live:
        """The status-interval stream on stdout, read document by document (``live.py``)."""
        from .live import FioLive

        return FioLive(ramp_s, FIO_ARGS)

    def multi_host(self) -> MultiHost:
        """fio's client/server mode: ``fio --server`` on every client, one ``fio --client`` here."""
        from .clientserver import ClientServer

        return ClientServer()

    def sniff(self, text: str) -> bool:
        return '"fio version"' in text or '"client_stats"' in text

    def status(self, progress: JobTracker) -> Callable[[str], None]:
        from .status import FioStatus

        return FioStatus(progress).feed

    def precondition(self, workload: Workload) -> Workload:
        return super().precondition(workload).model_copy(update={"ioengine": "libaio"})

    def warmup(self, workload: Workload, seconds: float) -> Workload:
        return super().warmup(workload, seconds).model_copy(update={"ioengine": "libaio"})

    def files(self, workload: Workload) -> dict[str, int]:
        return fio_files(workload)

    def keeps_files(self, workload: Workload) -> bool:
        return not fio_flag(workload.extra, "unlink")

    def doctor(self, ex: Executor, platform: Platform) -> list[Check]:
        from ...check import Check

        version = self.version(ex)
        if version is None:
            return [Check("fio", False, "not found", "apt-get install -y fio")]
        new_enough = _version_tuple(version) >= MIN_FIO
        return [Check("fio", new_enough, f"{version} ({platform.which(ex, 'fio')})",
                      "" if new_enough else "install fio 3.1 or newer (json+ latency bins)")]

    def data_file(self, name: str, workloads: list[str]) -> bool:
        """fio's default file name for a job in a directory: ``jobname.jobnumber.filenumber``."""
        stem, _, rest = name.partition(".")
        return stem in workloads and re.fullmatch(r"\d+\.\d+", rest) is not None

    def testbed_text(self, rendered: str) -> str:
        """The job file without comments and without the (scratch) path it happened to run in."""
        lines = []
        for line in rendered.splitlines():
            if not line.strip() or line.lstrip().startswith((";", "#")):
                continue
            if line.startswith(LOG_OPTIONS):  # how diskbench records, not what the job does
                continue
            if line.startswith(("directory=", "filename=")):
                line = line.split("=", 1)[0] + "=<target>"
            lines.append(line)
        return "\n".join(lines)
