"""Room on a target before its first job: the engine's files must fit the file system, or nothing runs there.

fio lays out every job's files before it does any I/O, and a file system that fills up half-way
fails the job after the user has waited for it (ENOSPC). So once a directory target is prepared
(made, formatted, mounted), and before its first unit, the bytes its remaining units will lay out
there are set against the free space the host itself reports, and the target's units are refused
with one line when they cannot fit. A raw device has no files: it is not checked here.

What is counted, as the runner does it (not per job, but per run): a target's data files stay
until it is released at the end of the machine's part (``MachineWork._remove_laid_out``, or the
scratch folder's removal), whatever ``--keep-files`` says (that only decides what is left after the
run). Which files one job section lays out, by name and size, the engine says (``Engine.files``;
fio's: engines/fio/files.py). So the need is the sum over distinct file names, each at its largest:
repeats and rounds reuse a name, sweep values and knee steps (``NAME-iodepthQ``) are names of their
own, and a precondition or warm-up pass writes the engine's own variant of the workload. Files the
engine removes itself (``Engine.keeps_files``) count only while their unit runs. ``flush_cache``'s
separate data set is laid out beside them once per run. Files of the same name already there (an
earlier run's, kept with ``--keep-files``) are reused, so only what they lack is needed.

An engine that cannot say leaves its targets unchecked (and says so).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .. import registry
from ..engines.base import Engine, UnknownLayout
from ..errors import DiskbenchError, ExecutionError
from ..executors.base import Executor
from ..plan import Unit
from ..platforms.base import Platform
from ..profile import Workload
from ..profile.knee import step_name
from ..units import human_bytes

SHOWN = 3  # workloads named in the refusal, the largest first


@dataclass
class Layout:
    """What a target's remaining units lay out on it: ``files`` stay until the target is released,
    ``transient`` is the largest one unit's files that fio removes itself (``unlink``), ``flush`` the
    separate data set of ``flush_cache``; ``shares`` the bytes and jobs each workload lays out, for
    the message."""

    files: dict[str, int] = field(default_factory=dict)
    transient: int = 0
    flush: int = 0
    shares: dict[str, tuple[int, int]] = field(default_factory=dict)
    unknown: str | None = None  # why the layout cannot be told

    def add(self, files: Mapping[str, int]) -> None:
        """Files kept until the end: a name laid out again is the same file, at its largest size."""
        for name, size in files.items():
            self.files[name] = max(size, self.files.get(name, 0))

    def need(self, existing: Mapping[str, int]) -> int:
        """Bytes still to be taken, given the files already in the directory (fio reuses a file of its
        name that is large enough, and lays out one that is too small again from scratch)."""
        kept = sum(max(0, size - existing.get(name, 0)) for name, size in self.files.items())
        return kept + self.transient + self.flush

    def largest(self) -> tuple[str, int]:
        """The workload that lays out the most, and how much."""
        name = max(self.shares, key=lambda n: self.shares[n][0])
        return name, self.shares[name][0]


def layout(units: list[Unit], label: str, flush_set: Callable[[int], int]) -> Layout:
    """The files ``units`` lay out on the target ``label`` over the rest of the run (in run order);
    ``flush_set``: bytes of the separate data set of a ``flush_cache`` size on this platform."""
    out = Layout()
    try:
        for unit in units:
            parts = [p for p in unit.jobs if p.target_label == label]
            if not parts:
                continue
            engine = registry.engines.get(unit.engine)
            transient = 0
            for part in parts:
                passes = [engine.precondition(part.workload)] if part.target.precondition else []
                passes += [engine.warmup(part.workload, 1.0)] if part.target.warmup else []
                transient += _part(out, part.workload, passes, engine)
            out.transient = max(out.transient, transient)
            if unit.workload.flush_bytes and not out.flush:  # the first flushing unit lays the set out
                out.flush = flush_set(unit.workload.flush_bytes)
    except UnknownLayout as exc:
        out.unknown = str(exc)
    return out


def _part(out: Layout, w: Workload, passes: list[Workload], engine: Engine) -> int:
    """One job section's runs on the target into ``out`` (``passes``: the engine's own precondition and
    warm-up variants of ``w``, with what they keep and drop); the bytes it lays out only while it runs."""
    steps = [step_name(w.name, f"step{n}") for n in range(w.knee.steps)] if w.knee is not None else [w.name]
    measured: dict[str, int] = {}
    for name in steps:  # each knee step is a job of its own name: files of its own
        measured.update(engine.files(w.model_copy(update={"name": name})))
    for variant in passes:
        out.add(engine.files(variant))
    total, jobs = out.shares.get(w.name, (0, 0))
    out.shares[w.name] = (max(total, sum(measured.values())), max(jobs, (w.numjobs or 1) * len(steps)))
    if not engine.keeps_files(w):
        return sum(measured.values())
    out.add(measured)
    return 0


def check_room(platform: Platform, ex: Executor, where: str, label: str, plan: Layout, *, host: str,
               line: Callable[[str], None], copies: int = 1, existing: Mapping[str, int] | None = None) -> None:
    """Refuse the target when ``plan``'s files do not fit the free space in ``where`` (``copies``: the
    clients of a group, each laying out its own set on the one volume); a layout or a free space that
    cannot be told is said and not checked (the engine's own ENOSPC then stays the last word)."""
    try:
        free = platform.free_bytes(ex, where)
    except DiskbenchError as exc:
        line(f"{host}: free space on {label} not checked: {str(exc).removeprefix(f'{ex.name}: ')}")
        return
    if free is None:  # a platform that cannot tell: nothing to say on every run
        return
    if plan.unknown is not None:
        line(f"{host}: free space on {label} not checked: {plan.unknown}")
        return
    need = plan.need(existing or {}) * copies
    if need <= free:
        return
    raise ExecutionError(refusal(host, label, where, plan, need, free, copies), hint=_what_to_do(plan, free, copies))


def refusal(host: str, label: str, where: str, plan: Layout, need: int, free: int, copies: int) -> str:
    """The one line: which target, what is free there, what the workloads need (the largest named)."""
    needed, available = _sizes(need, free)
    ranked = sorted(plan.shares.items(), key=lambda kv: -kv[1][0])
    named = [f"{n} {human_bytes(b)}" + (f" in {j} jobs" if j > 1 else "") for n, (b, j) in ranked[:SHOWN]]
    if len(ranked) > SHOWN:
        named.append(f"{len(ranked) - SHOWN} more")
    if plan.flush:
        named.append(f"flush_cache's data set {human_bytes(plan.flush)}")
    at = "" if where in label else f" ({where})"
    clients = f", {copies} clients a set each" if copies > 1 else ""
    return (f"{host}: {label}{at} has {available} free, but its workloads' data files need {needed} "
            f"({', '.join(named)}{clients})")


def _sizes(need: int, free: int) -> tuple[str, str]:
    """Both sizes readable; in bytes when they would read the same (4.0MiB against 4.0MiB)."""
    needed, available = human_bytes(need), human_bytes(free)
    return (f"{need:,} bytes", f"{free:,} bytes") if needed == available else (needed, available)


def _what_to_do(plan: Layout, free: int, copies: int) -> str:
    """Lower the one workload that alone does not fit; else the files of all add up until the run ends."""
    name, size = plan.largest() if plan.shares else ("", 0)
    if size * copies > free:
        return f"lower size or numjobs of {name}, or free space there"
    return ("every workload's files stay there until the run ends: lower size or numjobs, run fewer workloads "
            "on this target (--workload), or free space there")
