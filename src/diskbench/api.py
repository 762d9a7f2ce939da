"""The library's front door: what each command does, as one function; no CLI, store or terminal needed.

    import diskbench
    profile = diskbench.load_profile("local", overrides={"defaults.runtime": "3s"})
    results = diskbench.run(profile, workloads=["randread-4k"], store=None, progress=None)
    print(results.get("randread-4k", "read").clat_us["p99"])

Every command of the CLI parses its arguments, calls one of these functions and renders what it
returns; so the library can do whatever the command line does. ``store`` is a
``diskbench.store.Store``, a path to one, or None: the default store (``DISKBENCH_DB`` or the user
data folder) for the functions that read; for ``run``, None keeps results in memory (raw outputs in
a temporary folder removed afterwards). ``progress`` is anything with the
``diskbench.runner.progress.Progress`` methods (the terminal UI is one); None shows nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DiskbenchError, SafetyError

if TYPE_CHECKING:
    from .attribution.explain import Spent
    from .check import Check
    from .cleanup import CleanupOutcome
    from .planning import PlanReport
    from .profile import LoadedProfile
    from .render import Rendered
    from .reports.compare import CompareRow
    from .reports.gate import GateResult
    from .runner.options import RunOptions, RunOutcome
    from .runner.progress import Progress
    from .runner.recorder import Recorder
    from .store import Store, StoredResult

Line = Callable[[str], None]


@dataclass
class Result:
    """One workload, target and direction of a run, with latency in microseconds."""

    stored: StoredResult
    clat_us: dict[str, Any] = field(default_factory=dict)

    @property
    def workload(self) -> str:
        return self.stored.workload

    @property
    def target(self) -> str:
        return self.stored.target

    @property
    def direction(self) -> str:
        return self.stored.result.direction

    @property
    def iops(self) -> float:
        return self.stored.result.iops

    @property
    def bw_bytes_per_s(self) -> float:
        return self.stored.result.bw_bytes_per_s


@dataclass
class Results:
    """A run's record and every result; what ``run``, ``resume``, ``results`` and ``import_file`` return."""

    run: dict[str, Any]
    items: list[Result]
    outcome: RunOutcome | None = None  # how a run of this process went (failed jobs' messages)
    errors: list[str] = field(default_factory=list)  # an import's engine errors

    @classmethod
    def of(cls, run: dict[str, Any], stored: Sequence[StoredResult], **kw: Any) -> Results:
        return cls(run, [Result(r, r.result.clat.to_json() if r.result.clat else {}) for r in stored], **kw)

    @property
    def stored(self) -> list[StoredResult]:
        return [r.stored for r in self.items]

    @property
    def status(self) -> str:
        return str(self.run["status"])

    def raise_for_status(self) -> None:
        """A run that did not complete as an error (a refusal of the safety rule as ``SafetyError``)."""
        if self.status == "completed" or self.run.get("origin") == "import":
            return
        messages = self.outcome.messages if self.outcome else []
        if self.outcome is not None and self.outcome.refused:  # the refusal says which device, how to name it
            raise SafetyError(f"run {self.run['id']} is {self.status}: {self.outcome.refused[0]}")
        where = self.run.get("artifacts_dir")
        raise DiskbenchError(f"run {self.run['id']} is {self.status}: {len(messages)} job(s) failed ({messages[0]})"
                             if messages else f"run {self.run['id']} is {self.status}",
                             hint=(f"raw outputs are in {where}; " if where else "")
                             + f"`diskbench resume {self.run['id']}` retries")

    def get(self, workload: str, direction: str, target: str | None = None) -> Result:
        found = [r for r in self.items if r.workload == workload and r.direction == direction
                 and (target is None or r.target == target)]
        if not found:
            raise KeyError(f"no result for {workload} {direction}" + (f" on {target}" if target else ""))
        return found[0]

    def __iter__(self) -> Any:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


def open_store(store: Store | str | Path | None = None) -> Store:
    """``store`` as a ``Store``: itself, the store at a path, or (None) the default store."""
    from .store import Store

    return store if isinstance(store, Store) else Store(store)


# --- profiles and plans -----------------------------------------------------------------------
def load_profile(name_or_path: str, overrides: dict[str, Any] | list[str] | None = None) -> LoadedProfile:
    """A bundled profile by name, or a YAML file, with ``{"key.path": value}`` overrides."""
    from .profile import load_profile as load

    return load(name_or_path, overrides or ())


def profiles() -> list[dict[str, str]]:
    """The bundled profiles: name, description, and the problem of one that does not load."""
    from .profile import bundled_profiles, parse_profile
    from .yamldoc import read_text

    out = []
    for name, path in bundled_profiles().items():
        try:
            out.append({"name": name, "description": parse_profile(read_text(path, "a profile"), str(path)).description,
                        "path": str(path)})
        except DiskbenchError as exc:
            out.append({"name": name, "description": "", "path": str(path), "error": str(exc)})
    return out


def run_options(**fields_: Any) -> RunOptions:
    """``RunOptions`` from keywords (``target_dir``, ``hosts``, ``repeats`` ...): unknown ones are an error."""
    from .runner.options import RunOptions

    known = {f.name for f in fields(RunOptions)}
    unknown = sorted(set(fields_) - known)
    if unknown:
        raise TypeError(f"unknown run option(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return RunOptions(**fields_)


def _loaded(profile: LoadedProfile | str) -> LoadedProfile:
    return load_profile(profile) if isinstance(profile, str) else profile


def plan(profile: LoadedProfile | str, *, options: RunOptions | None = None, refresh_prices: bool = False,
         line: Line | None = None, **option_fields: Any) -> PlanReport:
    """What a run of ``profile`` would do: its units, expected time, pre-flight problems, warnings and
    cost per machine. Nothing is created and nothing runs (prices may be fetched with ``refresh_prices``)."""
    from . import planning

    opts = options or run_options(**option_fields)
    return planning.report(planning.plan_for(_loaded(profile), opts), refresh_prices=refresh_prices,
                           line=line or (lambda _text: None))


def render(profile: LoadedProfile | str, folder: str | Path, *, target_dir: str | None = None,
           allow_exec: bool = False) -> Rendered:
    """Write the engine's job file of every unit into ``folder``, to read or to run by hand."""
    from . import planning
    from .render import render_by_hand

    the_plan = planning.plan_for(_loaded(profile), run_options(target_dir=target_dir, allow_exec=allow_exec))
    return render_by_hand(the_plan, Path(folder))


# --- running -----------------------------------------------------------------------------------
def run(profile: LoadedProfile | str, *, options: RunOptions | None = None, store: Recorder | str | Path | None = None,
        progress: Progress | None = None, check: bool = True, **option_fields: Any) -> Results:
    """Run ``profile`` and return its results.

    ``options`` (or its fields as keywords: ``workloads``, ``machines``, ``target_dir``, ``repeats``,
    ``hosts``, ``known_hosts``, ``provider_options``, ``allow_exec`` ...) say what to run where.
    ``repeats="auto"`` (or ``"auto:MAX"``) runs every job 3 times, then again each job the gate finds
    INCONCLUSIVE against its baseline in the store, until it is decided or ran MAX times (10), judged
    with the gate policy file ``policy`` (default: the gate's defaults); the run's facts say per job how
    many repeats it took and why it stopped (``Results.run["facts"]["repeats"]``). The
    pre-flight problems of machines a provider would create stop it before anything is created; the
    plan's warnings go to ``progress.warn``. A run that does not complete raises ``DiskbenchError``
    (``check=False`` returns it instead; ``Results.raise_for_status`` raises later); with a store, its
    partial results stay stored.
    """
    from . import planning
    from .runner import Runner
    from .runner.progress import NullProgress

    opts = options or run_options(**option_fields)
    the_plan = planning.plan_for(_loaded(profile), opts)
    opts.gate_policy()  # a policy file that does not load stops the run before anything is said or made
    report = planning.PlanReport(the_plan, planning.preflight(the_plan.profile), planning.warnings(the_plan))
    show = progress or NullProgress()
    for text in report.preflight_lines():
        show.line(text)
    report.check()
    for warning in report.warnings:
        show.warn(warning)
    with _recorder(store) as recorder:
        outcome = Runner(recorder, progress).start(the_plan, opts)
        results = Results.of(recorder.get_run(outcome.run_id), recorder.get_results(outcome.run_id), outcome=outcome)
    if check:
        results.raise_for_status()
    return results


def resume(run_id: str, *, store: Store | str | Path | None = None, progress: Progress | None = None,
           accept_new_host_key: bool = False, allow_exec: bool = False, check: bool = True) -> Results:
    """Run the jobs of an interrupted or failed run that have no result yet, with the options it was
    started with (``allow_exec`` is never kept: say it again)."""
    from .runner import Runner, RunOptions

    opened = open_store(store)
    outcome = Runner(opened, progress).resume(run_id, RunOptions(accept_new_host_key=accept_new_host_key,
                                                                 allow_exec=allow_exec))
    results = Results.of(opened.get_run(outcome.run_id), opened.get_results(outcome.run_id), outcome=outcome)
    if check:
        results.raise_for_status()
    return results


def import_file(path: str | Path, *, store: Store | str | Path | None = None, keep: bool = True,
                per_job: bool = False) -> Results:
    """An engine's output file (fio JSON, DiskSpd XML or text) read into results; stored unless ``keep``
    is False. Engine errors inside the file (a failed job) are in ``Results.errors``."""
    from .importer import import_file as read

    imported = read(Path(path), store=open_store(store) if keep else None, per_job=per_job)
    return Results.of(imported.run, imported.results, errors=imported.errors)


# --- reading what is stored ------------------------------------------------------------------
def runs(*, store: Store | str | Path | None = None, limit: int | None = 20) -> list[dict[str, Any]]:
    """Stored runs, newest first: id, profile, origin, started, status, job counts, facts."""
    return open_store(store).list_runs(limit)


def results(run_id: str, *, store: Store | str | Path | None = None) -> Results:
    """A stored run (``run_id`` may be a unique prefix, ``last``) with its results."""
    opened = open_store(store)
    run = opened.get_run(run_id)
    return Results.of(run, opened.get_results(run["id"]))


@dataclass
class Comparison:
    """Runs side by side: their records and one row per job, direction and metric."""

    runs: list[dict[str, Any]]
    rows: list[CompareRow]


def compare(run_ids: Sequence[str], *, store: Store | str | Path | None = None) -> Comparison:
    """Runs side by side per job and direction: values, ratios, changes and whether each beats the noise."""
    from .reports.compare import compare as side_by_side

    if len(run_ids) < 2:
        raise DiskbenchError("compare needs at least two runs")
    runs_, rows = side_by_side(open_store(store), list(run_ids))
    return Comparison(runs_, rows)


def history(*, store: Store | str | Path | None = None, workload: str | None = None, target: str | None = None,
            last: int = 20) -> dict[tuple[str, str], list[Any]]:
    """One job's values over the newest ``last`` runs, per (job, direction)."""
    from .reports.compare import history as over_time

    found = over_time(open_store(store), workload=workload, target=target, last=last)
    if not found:
        raise DiskbenchError("no stored results match", hint="see `diskbench runs`")
    return found


def gate(run_id: str, *, store: Store | str | Path | None = None, policy: str | Path | None = None) -> GateResult:
    """The CI verdict of a run against the last accepted runs of the same testbed, recorded with the run.
    ``policy``: a gate.yaml (thresholds, windows)."""
    from .reports.gate import gate as judge
    from .reports.gate import load_policy, record

    opened = open_store(store)
    result = judge(opened, run_id, load_policy(str(policy) if policy is not None else None))
    record(opened, result)
    return result


def accept(run_id: str, *, store: Store | str | Path | None = None) -> dict[str, Any]:
    """Let a run the gate found suspect into future baselines; the run's record."""
    opened = open_store(store)
    run = opened.get_run(run_id)
    opened.set_verdict(run["id"], run.get("verdict") or "ACCEPTED", True)
    return opened.get_run(run["id"])


def report(run_ids: Sequence[str], *, store: Store | str | Path | None = None, with_history: bool = True) -> str:
    """One self-contained HTML report (tables and charts that work offline) of these runs."""
    from .reports.html import build_report

    return build_report(open_store(store), list(run_ids), with_history=with_history)


@dataclass
class Explanation:
    """Why one result is what it is, in the lines ``explain`` prints."""

    result: StoredResult
    lines: list[str]
    spent: Spent | None = None  # its job's VM-minutes and money on machines a provider created


def explain(run_id: str, job: str | None = None, *, store: Store | str | Path | None = None) -> list[Explanation]:
    """Why each result of a run (or of one job) is what it is: the limit that bound it with figures, the
    limits compared and their sources, the warnings, what to change next, and the VM-minutes and money its
    job spent on machines a provider created (its own time on them, at each machine's rate)."""
    from .attribution.explain import explain as explain_one
    from .attribution.explain import select, spent

    opened = open_store(store)
    run = opened.get_run(run_id)
    chosen = select(opened.get_results(run["id"]), job)
    if not chosen:
        raise DiskbenchError(f"run {run['id']} has no result for job {job!r}",
                             hint=f"see `diskbench show {run['id']}` for its workloads")
    jobs = {j["key"]: j for j in opened.get_jobs(run["id"])}
    uses = run.get("facts", {}).get("machine_use") or []
    costs = {r.job_key: spent(jobs.get(r.job_key), uses) for r in chosen}
    return [Explanation(r, explain_one(r, costs[r.job_key]), costs[r.job_key]) for r in chosen]


# --- the machine and the clouds ---------------------------------------------------------------
def doctor(*, db: str | None = None, online: bool = False) -> list[Check]:
    """What is installed and what is missing on this machine, with the command that fixes it."""
    from .doctor import checks
    from .executors.local import LocalExecutor

    return checks(LocalExecutor(), db, online)


def cleanup(*, store: Store | str | Path | None = None, run_id: str | None = None, older_than: float | None = None,
            dry_run: bool = False, provider: str | None = None, options: dict[str, Any] | None = None,
            line: Line | None = None) -> list[CleanupOutcome]:
    """Delete what diskbench left behind: each configured cloud's resources (expired, of ``run_id``, or
    older than ``older_than`` seconds) and what killed runs left on hosts (``provider="hosts"``
    alone). A provider that is not set up is skipped, saying why; ``dry_run`` deletes nothing."""
    from .cleanup import cleanup as clean

    return clean(open_store(store), run_id=run_id, older_than=older_than, dry_run=dry_run, only=provider,
                 options=options or {}, line=line or (lambda _text: None))


@contextmanager
def _recorder(store: Recorder | str | Path | None) -> Iterator[Recorder]:
    """The store a run records into, or results in memory (removed afterwards) when there is none."""
    from .runner.recorder import MemoryRecorder

    if store is not None:
        yield open_store(store) if isinstance(store, (str, Path)) else store
        return
    memory = MemoryRecorder()
    try:
        yield memory
    finally:
        memory.close()
