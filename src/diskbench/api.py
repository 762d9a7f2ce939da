"""The library's front door: load a profile, run it, get results; no CLI, store or terminal needed.

    import diskbench
    profile = diskbench.load_profile("local", overrides={"defaults.runtime": "3s"})
    results = diskbench.run(profile, workloads=["randread-4k"], store=None, progress=None)
    print(results.get("randread-4k", "read").clat_us["p99"])

``store`` may be a ``diskbench.store.Store`` (each result committed as it is parsed) or None
(results in memory, raw outputs in a temporary folder removed afterwards); ``progress`` may be
anything with the ``diskbench.runner.progress.Progress`` methods, such as the terminal UI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import DiskbenchError, SafetyError

if TYPE_CHECKING:
    from .profile import LoadedProfile
    from .runner.progress import Progress
    from .runner.recorder import Recorder
    from .store import StoredResult


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
    """What ``run`` returns: the run's record and every result."""

    run: dict[str, Any]
    items: list[Result]

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


def load_profile(name_or_path: str, overrides: dict[str, Any] | list[str] | None = None) -> LoadedProfile:
    """A bundled profile by name, or a YAML file, with ``{"key.path": value}`` overrides."""
    from .profile import load_profile as load

    return load(name_or_path, overrides or ())


def run(profile: LoadedProfile | str, *, workloads: list[str] | None = None, machines: list[str] | None = None,
        store: Recorder | None = None,
        progress: Progress | None = None, target_dir: str | None = None, repeats: int | None = None,
        **options: Any) -> Results:
    """Run ``profile`` (or only ``workloads`` / ``machines`` of it) and return its results.

    Other keyword options are ``diskbench.runner.RunOptions`` fields (``hosts``, ``known_hosts``,
    ``provider_options`` ...). A run that did not complete raises ``DiskbenchError``; with a
    store its partial results stay stored.
    """
    from .plan import build_plan
    from .runner import Runner, RunOptions
    from .runner.recorder import MemoryRecorder

    loaded = load_profile(profile) if isinstance(profile, str) else profile
    opts = RunOptions(target_dir=target_dir, repeats=repeats, workloads=workloads, machines=machines, **options)
    plan = build_plan(loaded, target_dir=target_dir, hosts=opts.host_models() or None,
                      destroy_data_on=opts.destroy_data_on, repeats=repeats, workloads=workloads,
                      machines=machines)
    recorder: Recorder = store if store is not None else MemoryRecorder()
    try:
        outcome = Runner(recorder, progress).start(plan, opts)
        record = recorder.get_run(outcome.run_id)
        items = [Result(r, r.result.clat.to_json() if r.result.clat else {})
                 for r in recorder.get_results(outcome.run_id)]
    finally:
        if isinstance(recorder, MemoryRecorder):
            recorder.close()
    if outcome.status != "completed":
        kind = SafetyError if outcome.refused else DiskbenchError  # the safety rule's refusal keeps its class
        raise kind(f"run {outcome.run_id} is {outcome.status}: " + "; ".join(outcome.messages[:3]))
    return Results(record, items)
