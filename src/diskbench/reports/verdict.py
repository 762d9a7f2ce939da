"""The verdict box that opens the report: what went wrong, before any table or chart.

A failed run's cause used to sit in a collapsed job list under an empty table, and a regressed
run said only "REGRESSED" in the subtitle. The box leads with, per run: its status; the errors
(each failed job's message and each result's errors) with a hint of what to do where one is
known; the gate's verdict as stored with the run; and each suspect metric with its baseline
median, value, change and limit.

The gate stores its verdict, not its per-metric checks; so the box re-runs the gate, read-only
(never ``gate.record``), for the runs whose stored verdict is REGRESSED or INCONCLUSIVE and for
runs never gated, at most ``MAX_REGATED`` of them: a report of 200 runs stays fast, and the
runs left out show what is stored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..store import Store, StoredResult
from .gate import GateResult, Policy, fmt_change, fmt_value, gate

SUSPECT = ("REGRESSED", "INCONCLUSIVE")
BAD = ("REGRESSED", "ERROR")
NOT_FINISHED = ("failed", "partial", "interrupted", "running")
MAX_REGATED = 4  # runs per report whose checks are recomputed
MAX_PROBLEMS = 8  # distinct errors listed per run
SHOWN_REGRESSED = 8  # regressed metrics listed open per run; the rest are one click away
SHOWN_INCONCLUSIVE = 4  # inconclusive ones listed open when nothing regressed
FEW_RUNS = 3  # a report of up to this many runs gives each its own entry, even when all is well
METRIC_NAMES = {"iops": "IOPS", "bw": "MiB/s"}

# What to do about the errors people meet most, by the words the system or the engine uses.
HINTS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), h) for p, h in (
    (r"permission denied|operation not permitted|\bEACCES\b|\bEPERM\b",
     "the user diskbench runs as may not create or open files there: choose a folder it can write "
     "(--target DIR), change the folder's owner or mode, or on an SSH host add --sudo"),
    (r"read-only file system|\bEROFS\b", "the target is mounted read-only: remount it read-write, or choose "
     "another --target"),
    (r"no space left on device|disk quota exceeded|\bENOSPC\b", "the target is full: free space, or use a "
     "smaller working set (--set defaults.size=1G)"),
    (r"invalid argument|\bEINVAL\b", "often direct I/O on a file system without it (tmpfs, some network file "
     "systems): --set defaults.direct=false, or choose another target"),
    (r"no such file or directory|\bENOENT\b", "a path the job names does not exist on the host: create the "
     "folder, or pass an existing one with --target"),
    (r"cannot allocate memory|\bENOMEM\b", "the host ran out of memory: lower numjobs or iodepth"),
    (r"device or resource busy|\bEBUSY\b", "another process holds the device: stop it, or unmount the device"),
    (r"did not finish in time", "the job ran far past its runtime: is the host overloaded, or the disk failing?"),
    (r"host key", "the host's SSH key is not known yet: add --accept-new-host-key (or add it to known_hosts)"),
    (r"connection refused|timed out|no route to host", "the host cannot be reached on its SSH port: is it up, "
     "and is a firewall in the way?"),
))
_JOB_PREFIX = re.compile(r"^job '[^']*' failed: ")  # the job is named beside the message
_TRAILING_HINT = re.compile(r"^(?P<text>.*\S) \((?P<hint>[^()]*\S\s+\S+\s+\S[^()]*)\)$", re.DOTALL)


@dataclass
class Problem:
    """One error and the jobs it happened to."""

    text: str
    hint: str = ""
    jobs: list[str] = field(default_factory=list)


@dataclass
class Suspect:
    """One suspect metric of the gate, formatted as the gate's Markdown shows it."""

    workload: str  # the job's last part (what it ran) ...
    place: str  # ... and where: machine and target
    direction: str
    metric: str
    verdict: str
    baseline: str
    now: str
    change: str
    limit: str
    n: int
    why: str  # the gate's reason, when it says more than "beyond the limit"


@dataclass
class RunVerdict:
    """What the box says about one run."""

    run_id: str
    profile: str
    status: str
    tone: str  # "bad", "warn" or "ok": the box's colour
    word: str  # the one word in the badge: FAILED, REGRESSED, INCONCLUSIVE, OK ...
    gate: str  # the verdict line: as stored, and as re-checked now
    verdict: str  # the stored verdict, or "not gated"
    problems: list[Problem] = field(default_factory=list)
    more_problems: int = 0
    suspects: list[Suspect] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def shown(self) -> int:
        """How many suspects to list open: regressions first (up to 8), else a few inconclusive ones."""
        regressed = sum(1 for s in self.suspects if s.verdict == "REGRESSED")
        return min(regressed, SHOWN_REGRESSED) if regressed else min(len(self.suspects), SHOWN_INCONCLUSIVE)


@dataclass
class VerdictBox:
    """Every run with something to say, worst first, and one line for the rest."""

    tone: str
    runs: list[RunVerdict]
    calm: list[RunVerdict]

    def calm_line(self) -> str:
        """The runs with nothing wrong, counted: ``196 more runs completed without errors (gate: PASS 150,
        not gated 46)``."""
        if not self.calm:
            return ""
        tally: dict[str, int] = {}
        for v in self.calm:
            tally[v.verdict] = tally.get(v.verdict, 0) + 1
        verdicts = ", ".join(f"{word} {n}" for word, n in sorted(tally.items(), key=lambda kv: -kv[1]))
        more = "more " if self.runs else ""
        return f"{len(self.calm)} {more}run(s) completed without errors (gate: {verdicts})."


def split_hint(message: str) -> tuple[str, str]:
    """(message, hint): a known cause's hint (permission, full disk, read-only, SSH) first; else
    diskbench's own errors end with their hint in parentheses; else none."""
    known = next((hint for pattern, hint in HINTS if pattern.search(message)), "")
    found = _TRAILING_HINT.match(message.strip())
    if found and not known:
        return found["text"], found["hint"]
    return message, known


def _problems(jobs: Sequence[dict[str, Any]], raw: Sequence[StoredResult]) -> list[Problem]:
    """Failed jobs' messages and results' errors; one entry per distinct cause, naming its jobs."""
    found: dict[str, Problem] = {}

    def add(job: str, message: str) -> None:
        text, hint = split_hint(message)
        key = hint or text  # the same cause in twenty jobs is one entry, whatever each job's name
        problem = found.setdefault(key, Problem(text, hint))
        if job not in problem.jobs:
            problem.jobs.append(job)

    for j in jobs:
        if j["status"] == "failed":
            message = _JOB_PREFIX.sub("", j["message"] or "") or "failed without a message (see the run's raw outputs)"
            add(j["key"], message)
    for r in raw:
        for error in r.errors:
            add(r.job_key, error)
    return list(found.values())


def _suspects(result: GateResult) -> list[Suspect]:
    """The gate's suspect checks, regressions first, with units (µs/ms, MiB/s, IOPS)."""
    checks = sorted((c for c in result.checks if c.verdict in SUSPECT), key=lambda c: SUSPECT.index(c.verdict))
    return [Suspect(c.job.rsplit("/", 1)[-1], c.job.rsplit("/", 1)[0] if "/" in c.job else "", c.direction,
                    METRIC_NAMES.get(c.metric, c.metric), c.verdict, fmt_value(c.metric, c.baseline_median),
                    fmt_value(c.metric, c.value), fmt_change(c.change, True), fmt_value(c.metric, c.limit), c.n,
                    "" if c.reason == "beyond the limit" else c.reason) for c in checks]


def _gate_line(run_id: str, stored: str | None, now: GateResult | None, default_policy: bool) -> str:
    """The verdict as stored, and what re-running the gate now says when that differs."""
    policy = "the default policy" if default_policy else "the report's policy"
    if now is None:
        return f"gate {stored}" if stored else f"not gated (`diskbench gate {run_id}` judges it)"
    if stored is None and now.verdict == "ERROR":
        return "not gated; to the gate a run that failed or did not finish is ERROR, never a regression"
    if stored is None:
        return f"not gated; the gate would say {now.verdict} now ({policy})"
    if stored != now.verdict:
        return (f"gate {stored} when it was gated; {now.verdict} if gated now ({policy}; accepted runs or the "
                "policy have changed since)")
    return f"gate {stored}"


def _notes(run: dict[str, Any], now: GateResult | None, raw: Sequence[StoredResult]) -> list[str]:
    """What else a reader should know first: unfinished jobs, a baseline being learned, warnings."""
    notes = []
    counts = run.get("job_counts") or {}
    left = sum(n for status, n in counts.items() if status not in ("done", "failed"))
    if left and run["status"] != "running":
        notes.append(f"{left} job(s) did not run: `diskbench resume {run['id']}` runs the rest")
    if now is not None:
        notes += now.warnings
        learning = [c for c in now.checks if c.verdict == "LEARNING"]
        if learning:
            notes.append(f"{len(learning)} metric(s) have too few baseline runs to judge yet ({learning[0].reason})")
    warned = sum(1 for r in raw if r.result.warnings)
    if warned:
        notes.append(f"{warned} result(s) carry warnings that may make a figure lie (see the summary table)")
    return notes


def _tone(status: str, problems: list[Problem], verdicts: set[str]) -> tuple[str, str]:
    """(colour, badge word): a run that did not finish or had errors is bad whatever the gate says;
    then the gate's worst verdict; INCONCLUSIVE and NOT_COMPARABLE are a warning, not a failure."""
    worst = next((v for v in ("ERROR", "REGRESSED", "INCONCLUSIVE", "NOT_COMPARABLE") if v in verdicts), None)
    if status == "running":  # still measuring: nothing has gone wrong yet
        return "warn", "RUNNING"
    if status in NOT_FINISHED:
        return "bad", status.upper()
    if problems or worst in BAD:
        return "bad", worst or "ERRORS"
    return ("warn", worst) if worst else ("ok", "OK")


def _to_regate(runs: Sequence[dict[str, Any]]) -> set[str]:
    """The runs whose checks are recomputed: stored suspects first, then runs never gated."""
    picked = [r["id"] for r in runs if r.get("verdict") in SUSPECT]
    picked += [r["id"] for r in runs if r.get("verdict") is None]
    return set(picked[:MAX_REGATED])


def run_verdict(run: dict[str, Any], jobs: Sequence[dict[str, Any]], raw: Sequence[StoredResult],
                now: GateResult | None, default_policy: bool = True) -> RunVerdict:
    """The box's entry for one run, from what the store holds and the gate re-run (or None)."""
    problems = _problems(jobs, raw)
    stored = run.get("verdict")
    verdicts = {v for v in (stored, now.verdict if now else None) if v}
    status = run["status"]
    failed = sum(1 for j in jobs if j["status"] == "failed")
    if failed:
        status += f": {failed} of {len(jobs)} job(s) failed"
    return RunVerdict(run["id"], run["profile"], status, *_tone(run["status"], problems, verdicts),
                      _gate_line(run["id"], stored, now, default_policy), stored or "not gated",
                      problems[:MAX_PROBLEMS], max(0, len(problems) - MAX_PROBLEMS), _suspects(now) if now else [],
                      _notes(run, now, raw))


def verdict_box(store: Store, runs: Sequence[dict[str, Any]], jobs: dict[str, list[dict[str, Any]]],
                raw: dict[str, list[StoredResult]], policy: Policy | None = None) -> VerdictBox:
    """The box for the report's runs: runs with something wrong in full, worst first; in a report
    of many runs, the ones with nothing wrong in one line."""
    regate = _to_regate(runs)
    pol = policy or Policy()
    default = pol == Policy()
    entries = [run_verdict(run, jobs[run["id"]], raw[run["id"]],
                           gate(store, run["id"], pol) if run["id"] in regate else None, default)
               for run in runs]
    order = ("bad", "warn", "ok")
    loud = sorted((e for e in entries if e.tone != "ok" or len(entries) <= FEW_RUNS),
                  key=lambda e: order.index(e.tone))
    calm = [e for e in entries if e.tone == "ok" and len(entries) > FEW_RUNS]
    tone = min((e.tone for e in entries), key=order.index, default="ok")
    return VerdictBox(tone, loud, calm)
