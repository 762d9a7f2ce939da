"""The DiskSpd engine: Windows hosts, XML profiles from templates, XML results in the one model.

A workload runs DiskSpd on one file per target (``diskbench-<workload>.dat``). The file is laid
out once per target with DiskSpd's own ``-c`` (the prefill pass, kept as an artifact like any
pass), and every profile is validated on the host with ``-Rpxml`` before the measured run. A job
with ``stop:`` runs as short DiskSpd runs until its answer is known (``segments.py``, ``merge.py``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

from ...profile import BUILTIN_DEFAULTS, Workload
from ..base import Engine, Parsed, Place
from .options import check_workload
from .parse import parse_diskspd, sniff
from .render import DiskspdTarget, command, render_profile
from .segments import DiskspdSegments

if TYPE_CHECKING:
    from ...executors.base import Executor
    from ...plan import Unit

_VERSION = re.compile(r"(?:DiskSpd|version)\D{0,20}(\d+\.\d+(?:\.\d+)*\w*)", re.IGNORECASE)
_FIO_ONLY_DEFAULTS = {"ioengine": BUILTIN_DEFAULTS.ioengine}  # filled in for fio, meaningless here


class DiskspdEngine(Engine):
    name: ClassVar[str] = "diskspd"
    platforms: ClassVar[tuple[str, ...]] = ("windows",)
    default_for: ClassVar[tuple[str, ...]] = ("windows",)
    job_suffix: ClassVar[str] = ".xml"
    output_name: ClassVar[str] = "stdout.txt"  # DiskSpd writes its XML results to stdout
    prefill_once: ClassVar[bool] = True

    def options(self, workload: Workload) -> dict[str, Any]:
        """The workload as DiskSpd's option mapping: its keys, and its ``diskspd:`` block (not what the
        profile says of its warnings, ``deliberate:``, which is no I/O option)."""
        data = workload.model_dump(exclude_none=True, exclude={"description", "targets", "sweep", "sections",
                                                                "engine", "engine_options", "deliberate",
                                                                "stop"})  # stop: check_workload's own word
        for key, default in _FIO_ONLY_DEFAULTS.items():
            if data.get(key) == default:
                del data[key]
        if not data.get("extra"):
            data.pop("extra", None)
        block = (workload.engine_options or {}).get(self.name)
        if block is not None:
            data["diskspd"] = block
        return data

    def check_workload(self, workload: Workload) -> list[tuple[str, str]]:
        other = [(key, f"options for the {key} engine; this workload runs with DiskSpd")
                 for key in (workload.engine_options or {}) if key != self.name]
        knee = [("stop", "a knee search (iodepth: auto) with DiskSpd runs each step its whole runtime; drop stop "
                 "for this workload (or run it with fio)")] if workload.stop_rule and workload.knee else []
        return other + knee + check_workload(self.options(workload))

    def file(self, place: Place) -> str:
        folder = (place.directory or "").rstrip("/\\")
        return f"{folder}/diskbench-{place.workload.name}.dat" if folder else place.filename or ""

    def render(self, job: Unit, places: list[Place], *, purpose: str = "") -> str:
        lay_out = purpose == "precondition"  # DiskSpd recreates a file given a size (-c): only to lay out
        targets = [DiskspdTarget(self.file(p), create_size=p.workload.size if lay_out else None) for p in places]
        return render_profile(self.options(places[0].workload), targets, title=f"{job.profile} {job.workload.name}")

    def command(self, jobfile: str, output: str) -> list[str]:
        return command(jobfile, validate=False)

    def check_command(self, jobfile: str) -> list[str] | None:
        return command(jobfile, validate=True)

    def version(self, ex: Executor) -> str | None:
        out = ex.run(["diskspd"], timeout=20)  # prints its usage and version, with a non-zero exit
        found = _VERSION.search(out.stdout + out.stderr)
        return found.group(1) if found else None

    def parse(self, text: str, *, source: str, per_job: bool = False) -> Parsed:
        result = parse_diskspd(text, source=source, per_target=per_job)
        return Parsed(result.groups, result.facts)

    def sniff(self, text: str) -> bool:
        return sniff(text)

    def segments(self) -> DiskspdSegments:
        """A ``stop:`` job as short DiskSpd runs, merged (``segments.py``): stopped early, DiskSpd writes
        no result at all."""
        return DiskspdSegments()

    def multi_host(self) -> None:
        """DiskSpd has no mode that drives one job on many hosts at once: no client group runs it."""
        return None

    def precondition(self, workload: Workload) -> Workload:
        """The prefill: DiskSpd creates the file at ``size`` (``-c``), then writes it sequentially once."""
        return workload.model_copy(update={"rw": "write", "bs": "1M", "iodepth": 8, "numjobs": 1,
                                           "runtime": "1s", "ramp_time": None, "rate_iops": None,
                                           "rwmixread": None, "extra": {}})

    def warmup(self, workload: Workload, seconds: float) -> Workload:
        return super().warmup(workload, seconds).model_copy(update={"numjobs": 1, "extra": {}})
