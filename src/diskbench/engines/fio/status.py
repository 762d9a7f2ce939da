"""One fio job file through an Executor: status lines, preparation passes, and the outcome.

The same steps serve the measured job and the passes before it (precondition, warm-up); every
file fio writes lands in the job's artifacts folder, whichever host it ran on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from .errors import DiskbenchError, ExecutionError
from .executor import Executor
from .model import GroupResult
from .parse import parse_fio_output
from .plan import PlannedJob
from .prepare import Prepared
from .profile import Workload
from .render import precondition_workload, render_fio, warmup_workload
from .ui import JobProgress
from .units import human_bytes, parse_duration

FIO_ARGS = ["--output-format=json+", "--eta=always", "--eta-interval=1s"]
_PCT_RE = re.compile(r"\]\[(\d+(?:\.\d+)?)%\]")
_ETA_RE = re.compile(r"\[eta (?:(\d+)d:)?(?:(\d+)h:)?(\d+)m:(\d+)s\]")
_RATE_RE = re.compile(r"\]\[([rwt]=[^\]]*IOPS)\]")
WARMUP_PASS_S = 10.0
WARMUP_MAX_PASSES = 30
WARMUP_GAIN = 0.02  # stop when a pass is less than 2% faster than the one before



class FioStatus:
    """Turns fio's ``Jobs: 1 (f=1): [w(1)][45.5%][w=1MiB/s][w=256 IOPS][eta 00m:06s]`` into updates."""

    def __init__(self, progress: JobProgress) -> None:
        self.progress = progress
        self.buffer = ""

    def feed(self, text: str) -> None:
        self.buffer += text
        *lines, self.buffer = re.split(r"[\r\n]", self.buffer)
        for line in lines:
            self._line(line)

    def _line(self, line: str) -> None:
        if not line.startswith("Jobs:"):
            return
        pct = _PCT_RE.search(line)
        eta = _ETA_RE.search(line)
        rate = _RATE_RE.search(line)
        eta_s = None
        if eta:
            d, h, m, s = (int(x) if x else 0 for x in eta.groups())
            eta_s = float(((d * 24 + h) * 60 + m) * 60 + s)
        self.progress.update(float(pct.group(1)) if pct else None, eta_s,
                             rate.group(1) if rate else "")



def run_fio(ex: Executor, job: PlannedJob, rendered: str, art: Path, tracker: JobProgress | None,
        name: str = "") -> int:
    """Run one job file; its files land in ``art`` (locally) whatever the executor."""
    prefix = f"{name}." if name else ""
    (art / f"{prefix}job.fio").write_text(rendered, encoding="utf-8")
    work = ex.workspace(art)
    jobfile, output = f"{work}/{prefix}job.fio", f"{work}/{prefix}output.json"
    ex.write_text(jobfile, rendered)
    status = FioStatus(tracker) if tracker is not None else None
    rc = ex.stream(["fio", *FIO_ARGS, f"--output={output}", jobfile],
                   on_output=status.feed if status else (lambda _t: None),
                   timeout=job.expected_s * 3 + 120, stdout_path=art / f"{prefix}stdout.txt",
                   stderr_path=art / f"{prefix}stderr.txt", privileged=True, workdir=work)
    (art / f"{prefix}exit_code").write_text(f"{rc}\n")
    if not ex.fetch(output, art / f"{prefix}output.json"):
        (art / f"{prefix}output.json").write_text("")
    return rc

def prepare_data(ex: Executor, job: PlannedJob, where: Prepared, art: Path, label: str,
             line: Callable[[str], None]) -> None:
    """Precondition (write the working set) and warm-up (fill a read cache) before measuring."""
    target, w = job.target, job.workload
    if target.precondition:
        line(f"{label}: preconditioning (writing the working set once)")
        rendered = render_fio(job, where.directory, filename=where.filename,
                              workload=precondition_workload(w))
        rc = run_fio(ex, job, rendered, art, None, "precondition")
        if rc != 0:
            raise ExecutionError(f"{label}: preconditioning failed (fio exit {rc}); see {art}")
    if target.warmup:
        warmup(ex, job, where, art, label, w, line)

def warmup(ex: Executor, job: PlannedJob, where: Prepared, art: Path, label: str, w: Workload,
       line: Callable[[str], None]) -> None:
    if isinstance(target_warmup := job.target.warmup, str):
        seconds = parse_duration(target_warmup)
        line(f"{label}: warming the read cache for {seconds:g}s")
        rendered = render_fio(job, where.directory, filename=where.filename,
                              workload=warmup_workload(w, seconds))
        run_fio(ex, job, rendered, art, None, "warmup")
        return
    previous = 0.0
    for n in range(1, WARMUP_MAX_PASSES + 1):
        rendered = render_fio(job, where.directory, filename=where.filename,
                              workload=warmup_workload(w, WARMUP_PASS_S))
        run_fio(ex, job, rendered, art, None, f"warmup{n}")
        text = (art / f"warmup{n}.output.json").read_text(errors="replace")
        rate = sum(d.iops for g in parse_fio_output(text) for d in g.directions)
        line(f"{label}: warm-up pass {n}: {rate:,.0f} read IOPS")
        if previous and rate < previous * (1 + WARMUP_GAIN):
            return
        previous = rate

def parse_outcome(art: Path, rc: int) -> tuple[list[GroupResult], str | None]:
    out_file = art / "output.json"
    text = out_file.read_text(errors="replace") if out_file.exists() else ""
    stderr_file = art / "stderr.txt"
    stderr = stderr_file.read_text(errors="replace") if stderr_file.exists() else ""
    try:
        groups = parse_fio_output(text, source=str(out_file))
    except DiskbenchError as exc:
        return [], _fio_failure(rc, stderr) or exc.message
    errors = [e for g in groups for e in g.errors]
    if errors:
        return groups, "; ".join(errors) + _stderr_hint(stderr)
    if rc != 0:
        return groups, _fio_failure(rc, stderr) or f"fio exited with code {rc}"
    return groups, None



def _fio_failure(rc: int, stderr: str) -> str | None:
    if rc == 0:
        return None
    if rc < 0 or rc == 137:
        return f"fio did not finish in time and was stopped (exit {rc})"
    return f"fio exited with code {rc}{_stderr_hint(stderr)}"


def _stderr_hint(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return f": {lines[0]}" if lines else ""


def summary(groups: list[GroupResult]) -> str:
    parts = []
    for g in groups:
        for d in g.directions:
            p99 = d.clat.percentiles.get("p99") if d.clat else None
            lat = f", p99 {p99:.0f} µs" if p99 is not None else ""
            parts.append(f"{d.direction} {d.iops:,.0f} IOPS {human_bytes(d.bw_bytes_per_s)}/s{lat}")
    return "; ".join(parts)
