"""One unit of work through its engine on one executor: passes, the measured run, the outcome.

The same steps serve the measured run and the passes before it (precondition, warm-up); every
file the engine writes lands in the unit's artifacts folder, whichever host it ran on.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from ..attribution import drain
from ..attribution.drain import Verdict, baselines
from ..attribution.limit import Limit
from ..attribution.steady_state import SteadyState, steady_state
from ..attribution.stop_rule import Watcher
from ..engines.base import Engine, Live, Place
from ..errors import ExecutionError
from ..executors.base import Executor
from ..model import GroupResult
from ..plan import Unit
from ..store.raw import compress
from ..units import parse_duration
from .progress import JobTracker

WARMUP_PASS_S = 10.0
WARMUP_MAX_PASSES = 30
WARMUP_GAIN = 0.02  # stop when a pass is less than 2% faster than the one before
# How an engine ended by SIGINT may exit: fio 3.x exits 128 (its sig_int sets exit_value = 128, seen
# here with fio 3.33); 130 and -2 are the conventions of a shell and of a process killed by it.
STOPPED_EXITS = (0, 128, 128 + 2, -2)


def run_engine(ex: Executor, engine: Engine, job: Unit, rendered: str, art: Path,
               tracker: JobTracker | None, name: str = "", watcher: Watcher | None = None) -> int:
    """Run one job file; its files land in ``art`` (locally) whatever the executor. With ``watcher``
    (a ``stop:`` job), the engine's live output feeds it and the job is ended the engine's own way
    once it says the answer is known; the exit code is then the engine's for a job that ended well."""
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
    live = engine.live(parse_duration(job.workload.ramp_time or 0)) if watcher is not None else None
    if watcher is not None and live is None:
        raise ExecutionError(f"{engine.name} cannot end a job early; the workload's stop: needs an engine that can")
    stopper = _Stopper(ex, watcher, live, feed) if watcher is not None and live is not None else None
    rc = ex.stream(live.command(jobfile) if live is not None else engine.command(jobfile, output),
                   on_output=stopper.feed if stopper is not None else feed, timeout=job.expected_s * 3 + 120,
                   stdout_path=art / f"{prefix}stdout.txt", stderr_path=art / f"{prefix}stderr.txt",
                   privileged=True, workdir=work)
    if stopper is not None:
        rc = stopper.finish(rc)
    (art / f"{prefix}exit_code").write_text(f"{rc}\n")
    logs = engine.log_files(rendered) if not name else []  # per-second series of the measured run
    got = ex.fetch_many([(output, art / output_name), *((f"{work}/{log}", art / log) for log in logs)])
    if live is not None:  # the result came on stdout, after the per-interval documents
        shutil.copyfile(art / f"{prefix}stdout.txt", art / output_name)
    elif not got[0]:
        (art / output_name).write_text("")
    return rc


class _Stopper:
    """The live output of a ``stop:`` job: each interval to the watcher, and the engine interrupted
    (from a thread of its own: the executor's reader must keep reading while the engine writes its
    final result) the first time the watcher says the answer is known."""

    def __init__(self, ex: Executor, watcher: Watcher, live: Live, progress: Callable[[str], None]) -> None:
        self.ex, self.watcher, self.live, self.progress = ex, watcher, live, progress
        self.thread: threading.Thread | None = None

    def feed(self, text: str) -> None:
        self.progress(text)
        for interval in self.live.feed(text):
            self.watcher.add(interval)
            if self.thread is None and self.watcher.judge().reason:
                self.thread = threading.Thread(target=self.ex.interrupt, name="adaptive-stop", daemon=True)
                self.thread.start()

    def finish(self, rc: int) -> int:
        """The exit code of the run: an engine the watcher stopped exits as Ctrl-C made it
        (``STOPPED_EXITS``), which here is a job that ended as asked; its output is then read as
        usual, so a result cut short would still fail there."""
        if self.thread is None:
            return rc
        self.thread.join(timeout=30)
        return 0 if rc in STOPPED_EXITS else rc


def steady_rounds(ex: Executor, engine: Engine, job: Unit, rendered: str, art: Path,
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
        _set_pass_aside(art, [engine.output_name, "stdout.txt", "stderr.txt", "exit_code",
                               *engine.log_files(rendered)], n)
    raise AssertionError("steady_state() is done by max_rounds")


def _rate(groups: list[GroupResult], mbps: bool = False) -> float:
    """A round's figure: its IOPS (or MB/s), all directions together."""
    total = 0.0
    for g in groups:
        both = [d for d in g.directions if d.direction == "total"]
        total += sum(d.bw_bytes_per_s / 1e6 if mbps else d.iops for d in (both or g.directions))
    return total


def _set_pass_aside(art: Path, names: list[str], n: int, stem: str = "round") -> Path:
    """Move a finished pass's files out of the way of the measured run's, into ``stem-NN/``."""
    return set_aside(art, names, f"{stem}-{n:02d}")


def set_aside(art: Path, names: list[str], name: str) -> Path:
    """``names`` moved out of the way of the next engine run, into ``name/`` (``name-2`` when a folder of that
    name is left from an earlier attempt)."""
    folder = next(f for i in range(1, 1000) if not (f := art / (name if i == 1 else f"{name}-{i}")).exists())
    folder.mkdir()
    for file in names:
        if (art / file).exists():
            (art / file).rename(folder / file)
    return folder


def set_run_aside(art: Path, engine: Engine, rendered: str, name: str) -> Path:
    """One whole engine run's files (its output, job file, streams, exit code and logs) into ``name/``, the
    raw output gzip'd: a drain pass, a segment, a knee step."""
    folder = set_aside(art, [engine.output_name, f"job{engine.job_suffix}", "stdout.txt", "stderr.txt", "exit_code",
                             *engine.log_files(rendered)], name)
    compress(folder / engine.output_name)
    return folder


def drain_burst(ex: Executor, engine: Engine, job: Unit, places: list[Place], art: Path, label: str,
                line: Callable[[str], None], stopped: Callable[[], bool],
                limits: list[Limit] | None) -> Verdict | None:
    """``drain_burst``: the job's own I/O in passes until the target's credit burst is spent
    (``attribution.drain`` decides when). Each pass's files are kept in ``drain-NN/``. None when there
    was nothing to drain (the caps are known and none bursts) or the run was stopped."""
    if limits and not any(lim.burst for lim in limits):
        line(f"{label}: no burst credits on {job.target_label}: nothing to drain")
        return None
    found, allowed_s = baselines(limits or []), job.workload.drain_s
    pass_s = min(drain.PASS_S, allowed_s)
    line(f"{label}: draining burst credits in {pass_s:g} s passes (at most {allowed_s:,.0f} s)")
    passes = [Place(p.workload.model_copy(update={"time_based": True, "runtime": f"{pass_s:g}s",
                                                   "ramp_time": None}), p.target_label, p.directory, p.filename)
              for p in places]
    rendered = engine.render(job, passes, purpose="measure")
    iops: list[float] = []
    mbps: list[float] = []
    for n in range(1, 100_000):
        rc = run_engine(ex, engine, job, rendered, art, None)
        groups, message = engine.outcome(art, rc)
        folder = set_run_aside(art, engine, rendered, f"drain-{n:02d}")
        if stopped():
            return None
        if message is not None:
            raise ExecutionError(f"{label}: draining failed: {message}; see {folder}")
        step, got_iops, got_mbps = _per_interval(groups, pass_s)
        iops += got_iops
        mbps += got_mbps
        if n == 1:
            allowed_s = drain.allowed(allowed_s, _rate(groups), _rate(groups, mbps=True), found)
        verdict = drain.judge(iops, mbps, step, n * pass_s, allowed_s, found, len(got_iops))
        line(f"{label}: drain pass {n}: {_rate(groups):,.0f} IOPS" + (f"; {verdict.why}" if verdict.done else ""))
        if verdict.done:
            return verdict
    raise AssertionError("drain.judge() is done once the time allowed has passed")


def _per_interval(groups: list[GroupResult], pass_s: float) -> tuple[float, list[float], list[float]]:
    """A pass's IOPS and MB/s per interval, all directions together; one point for the whole pass
    when the engine gave no series."""
    iops: list[float] = []
    mbps: list[float] = []
    step = 0.0
    for g in groups:
        for d in [d for d in g.directions if d.direction == "total"] or g.directions:
            if d.series is None:
                return pass_s, [_rate(groups)], [_rate(groups, mbps=True)]
            step = d.series.interval_s
            bw = d.series.bw_bytes_per_s or [0.0] * len(d.series.iops)
            for i, (v, b) in enumerate(zip(d.series.iops, bw, strict=False)):
                if i == len(iops):
                    iops.append(0.0)
                    mbps.append(0.0)
                iops[i] += v
                mbps[i] += b / 1e6
    return step or pass_s, iops, mbps


def data_passes(ex: Executor, engine: Engine, job: Unit, places: list[Place], art: Path, label: str,
                 line: Callable[[str], None], laid_out: set[str] | None = None) -> None:
    """Precondition (write the working set) and warm-up (fill a read cache) before measuring.

    An engine that lays its files out once per run (``prefill_once``) gets the pass for every
    target not in ``laid_out`` yet, preconditioned or not, and the target joins ``laid_out``.
    """
    parts = job.jobs
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


def _warmup(ex: Executor, engine: Engine, job: Unit, warm: Sequence[tuple[Place, bool | str | None]],
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

