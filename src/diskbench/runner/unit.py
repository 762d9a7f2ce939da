"""One unit of work through its engine on one executor: passes, the measured run, the outcome.

The same steps serve the measured run and the passes before it (precondition, warm-up); every
file the engine writes lands in the unit's artifacts folder, whichever host it ran on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..attribution.steady_state import SteadyState, steady_state
from ..engines.base import Engine, Place
from ..errors import ExecutionError
from ..executors.base import Executor
from ..model import GroupResult
from ..plan import PlannedJob
from ..units import human_bytes, parse_duration
from .progress import JobTracker

WARMUP_PASS_S = 10.0
WARMUP_MAX_PASSES = 30
WARMUP_GAIN = 0.02  # stop when a pass is less than 2% faster than the one before


def run_engine(ex: Executor, engine: Engine, job: PlannedJob, rendered: str, art: Path,
               tracker: JobTracker | None, name: str = "") -> int:
    """Run one job file; its files land in ``art`` (locally) whatever the executor."""
    prefix = f"{name}." if name else ""
    job_name, output_name = f"{prefix}job{engine.job_suffix}", f"{prefix}{engine.output_name}"
    (art / job_name).write_text(rendered, encoding="utf-8")
    work = ex.workspace(art)
    jobfile, output = f"{work}/{job_name}", f"{work}/{output_name}"
    ex.write_text(jobfile, rendered)
    check = engine.check_command(jobfile)
    if check is not None:
        out = ex.run(check, timeout=60)
        if out.returncode != 0:
            detail = [ln.strip() for ln in (out.stderr or out.stdout).splitlines() if ln.strip()]
            raise ExecutionError(f"{engine.name} refused the job file {job_name}: "
                                 f"{detail[0] if detail else f'exit {out.returncode}'}")
    feed = engine.status(tracker) if tracker is not None else (lambda _t: None)
    rc = ex.stream(engine.command(jobfile, output), on_output=feed, timeout=job.expected_s * 3 + 120,
                   stdout_path=art / f"{prefix}stdout.txt", stderr_path=art / f"{prefix}stderr.txt",
                   privileged=True, workdir=work)
    (art / f"{prefix}exit_code").write_text(f"{rc}\n")
    logs = engine.log_files(rendered) if not name else []  # per-second series of the measured run
    got = ex.fetch_many([(output, art / output_name), *((f"{work}/{log}", art / log) for log in logs)])
    if not got[0]:
        (art / output_name).write_text("")
    return rc


def steady_rounds(ex: Executor, engine: Engine, job: PlannedJob, rendered: str, art: Path,
                  tracker: JobTracker | None, line: Callable[[str], None], label: str,
                  stopped: Callable[[], bool]) -> tuple[int, SteadyState | None]:
    """``protocol: steady_state``: the job, round after round, until the SNIA PTS rule holds over the
    last five rounds' IOPS or ``max_rounds`` ran. The last round's output stays where a single run's
    would (it is the result); each earlier round's files move to ``round-NN/`` beside it."""
    rates: list[float] = []
    limit = job.workload.rounds
    for n in range(1, limit + 1):
        rc = run_engine(ex, engine, job, rendered, art, tracker)
        if rc != 0 or stopped():
            return rc, None
        text = (art / engine.output_name).read_text(errors="replace")
        rates.append(_rate(engine.parse(text, source=str(art / engine.output_name)).groups))
        state = steady_state(rates, max_rounds=limit)
        line(f"{label}: round {n}: {rates[-1]:,.0f} IOPS" + (f"; {state.text()}" if state.done else ""))
        if state.done:
            return rc, state
        _set_round_aside(art, [engine.output_name, "stdout.txt", "stderr.txt", "exit_code",
                               *engine.log_files(rendered)], n)
    raise AssertionError("steady_state() is done by max_rounds")


def _rate(groups: list[GroupResult]) -> float:
    """A round's figure: its IOPS, all directions together."""
    total = 0.0
    for g in groups:
        both = [d for d in g.directions if d.direction == "total"]
        total += sum(d.iops for d in (both or g.directions))
    return total


def _set_round_aside(art: Path, names: list[str], n: int) -> None:
    folder = next(f for i in range(1, 1000)
                  if not (f := art / (f"round-{n:02d}" if i == 1 else f"round-{n:02d}-{i}")).exists())
    folder.mkdir()
    for name in names:
        if (art / name).exists():
            (art / name).rename(folder / name)


def data_passes(ex: Executor, engine: Engine, job: PlannedJob, places: list[Place], art: Path, label: str,
                 line: Callable[[str], None], laid_out: set[str] | None = None) -> None:
    """Precondition (write the working set) and warm-up (fill a read cache) before measuring.

    An engine that lays its files out once per run (``prefill_once``) gets the pass for every
    target not in ``laid_out`` yet, preconditioned or not, and the target joins ``laid_out``.
    """
    parts = job.parts
    laid_out = laid_out if laid_out is not None else set()
    pre = [Place(engine.precondition(p.workload), p.target_label, p.directory, p.filename)
           for p, part in zip(places, parts, strict=True)
           if part.target.precondition or (engine.prefill_once and p.target_label not in laid_out)]
    laid_out.update(p.target_label for p in places)
    if pre:
        line(f"{label}: preconditioning (writing the working set once)")
        rc = run_engine(ex, engine, job, engine.render(job, pre, purpose="precondition"), art, None, "precondition")
        if rc != 0:
            raise ExecutionError(f"{label}: preconditioning failed ({engine.name} exit {rc}); see {art}")
    warm = [(p, part.target.warmup) for p, part in zip(places, parts, strict=True) if part.target.warmup]
    if warm:
        _warmup(ex, engine, job, warm, art, label, line)


def _warmup(ex: Executor, engine: Engine, job: PlannedJob, warm: Sequence[tuple[Place, bool | str | None]],
            art: Path, label: str, line: Callable[[str], None]) -> None:
    fixed = [w for _, w in warm if isinstance(w, str)]
    if fixed:
        seconds = max(parse_duration(w) for w in fixed)
        line(f"{label}: warming the read cache for {seconds:g}s")
        places = [Place(engine.warmup(p.workload, seconds), p.target_label, p.directory, p.filename) for p, _ in warm]
        run_engine(ex, engine, job, engine.render(job, places, purpose="warmup"), art, None, "warmup")
        return
    previous = 0.0
    for n in range(1, WARMUP_MAX_PASSES + 1):
        places = [Place(engine.warmup(p.workload, WARMUP_PASS_S), p.target_label, p.directory, p.filename)
                  for p, _ in warm]
        run_engine(ex, engine, job, engine.render(job, places, purpose="warmup"), art, None, f"warmup{n}")
        text = (art / f"warmup{n}.{engine.output_name}").read_text(errors="replace")
        rate = sum(d.iops for g in engine.parse(text, source=str(art)).groups for d in g.directions)
        line(f"{label}: warm-up pass {n}: {rate:,.0f} read IOPS")
        if previous and rate < previous * (1 + WARMUP_GAIN):
            return
        previous = rate


def summary(groups: list[GroupResult]) -> str:
    parts = []
    for g in groups:
        for d in g.directions:
            p99 = d.clat.percentiles.get("p99") if d.clat else None
            lat = f", p99 {p99:.0f} µs" if p99 is not None else ""
            parts.append(f"{d.direction} {d.iops:,.0f} IOPS {human_bytes(d.bw_bytes_per_s)}/s{lat}")
    return "; ".join(parts)
