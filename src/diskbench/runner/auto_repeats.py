"""Automatic repeats (``--repeats auto``): a job runs again until the gate can decide it.

Every job first runs the plan's minimum of repeats, interleaved as fixed repeats are, so that it has
a spread of its own. Each time a part of the run (a machine, a client group) has run through its
units, it asks here for its next round: the gate judges each of its jobs from the results stored
so far, against the same baseline and with the same policy as ``diskbench gate`` (read-only: no
verdict is recorded), and only the jobs it finds INCONCLUSIVE because this run's repeats vary run
once more. A job stops when it is decided (PASS, IMPROVED or REGRESSED), at the limit, when it has
no baseline yet (nothing to decide against), when its baseline alone is too noisy (no repeat of
this run changes that) or when a repeat failed. Each stop is written to the run's facts
(``repeats``) the moment it is decided, so ``resume`` goes on with the jobs still open and the run's
JSON and table say how many repeats each job took and why it stopped.

A round's units are recorded in the store before they run (``add_jobs``), like the plan's, so
every repeat is stored the moment it is parsed and an interrupted run resumes with them.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..plan import LOCAL, AutoRepeats, Unit
from ..reports.formats import REPEATS as FACTS  # the run's facts: one entry per job that stopped
from ..reports.gate import Check, Policy, job_checks, noisy_baseline, worst
from ..store import Store
from .progress import Progress
from .recorder import Recorder

WIDTH = 80  # a progress line fits a terminal's default width

DECISIVE = "decisive"  # the gate decided: PASS, IMPROVED or REGRESSED
LIMIT = "limit"  # still INCONCLUSIVE after the most repeats allowed
NO_BASELINE = "no baseline"  # fewer accepted runs of its testbed than the policy's min_runs, or none comparable
NOISY_BASELINE = "noisy baseline"  # the baseline's own spread is wider than twice the threshold
FAILED = "failed"  # a repeat failed (the gate says ERROR for the run)
REASONS = (DECISIVE, LIMIT, NO_BASELINE, NOISY_BASELINE, FAILED)  # the run document's schema lists them


@dataclass
class Stop:
    """How a job's repeats ended: how many it took, why it stopped, and the gate's verdict then."""

    job: str  # the base key (machine/target/workload)
    repeats: int  # repeats with a whole result
    stopped: str  # one of REASONS
    verdict: str  # the gate's verdict of the job when it stopped
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Repeater:
    """The rounds of one run's automatic repeats; shared by its parts' threads (one lock)."""

    def __init__(self, store: Recorder, run_id: str, rule: AutoRepeats, policy: Policy, ui: Progress) -> None:
        self.store, self.run_id, self.rule, self.policy, self.ui = store, run_id, rule, policy, ui
        self.stops: dict[str, Stop] = {}
        self._lock = threading.Lock()

    def restore(self, facts: dict[str, Any]) -> None:
        """The stops an earlier attempt of the run recorded: those jobs are decided (``resume``)."""
        for entry in facts.get(FACTS) or []:
            stop = Stop(**{k: entry[k] for k in ("job", "repeats", "stopped", "verdict", "detail") if k in entry})
            self.stops[stop.job] = stop

    def open_jobs(self, units: list[Unit]) -> list[str]:
        """The jobs of ``units`` not stopped yet, in their order."""
        return [b for b in dict.fromkeys(u.base_key for u in units) if b not in self.stops]

    def next_round(self, units: list[Unit]) -> list[Unit]:
        """After a part ran through ``units``: one more unit for each of its jobs the gate cannot decide
        yet, recorded in the store (none: the part is done). Each job that stops is said once."""
        with self._lock:
            open_ = self.open_jobs(units)
            if not open_:
                return []
            rows = [j for j in self.store.get_jobs(self.run_id) if (j["base_key"] or j["key"]) in open_]
            checks = self._checks(open_)
            labels = _labels(units)
            repeat: list[str] = []
            stopped: list[Stop] = []
            for base in open_:
                mine = [j for j in rows if (j["base_key"] or j["key"]) == base]
                done = sum(j["status"] == "done" for j in mine)
                stop = self._decide(base, done, mine, checks)
                if stop is None:
                    repeat.append(base)
                else:
                    self.stops[base] = stop
                    stopped.append(stop)
            new = self._units(repeat, units, rows)
            if stopped:
                self.store.merge_facts(self.run_id, {FACTS: [s.to_json() for s in self.stops.values()]})
            self._say(stopped, new, labels, checks)
            return new

    # --- deciding ---------------------------------------------------------------------------
    def _checks(self, jobs: list[str]) -> dict[str, list[Check]] | None:
        """The gate's checks per job; None without a stored history (results kept in memory)."""
        if not isinstance(self.store, Store):
            return None
        out: dict[str, list[Check]] = {b: [] for b in jobs}
        for c in job_checks(self.store, self.run_id, self.policy, jobs).checks:
            out.setdefault(c.job, []).append(c)
        return out

    def _decide(self, base: str, done: int, rows: list[dict[str, Any]],
                checks: dict[str, list[Check]] | None) -> Stop | None:
        """Why ``base`` stops now, or None when it runs once more."""
        if any(j["status"] == "failed" for j in rows) or done == 0:
            return Stop(base, done, FAILED, "ERROR", "a repeat failed; the gate says ERROR for the run")
        if checks is None:
            return Stop(base, done, NO_BASELINE, "LEARNING", "results kept in memory: no stored history")
        mine = checks.get(base, [])
        verdict = worst(mine)
        if verdict == "REGRESSED":
            return Stop(base, done, DECISIVE, verdict, _why(mine, verdict))
        learning = [c for c in mine if c.verdict == "NOT_COMPARABLE" or c.n < self.policy.min_runs]
        if learning or not mine:
            runs = min((c.n for c in learning), default=0)
            return Stop(base, done, NO_BASELINE, verdict,
                        f"{runs} of {self.policy.min_runs} baseline runs" if any(
                            c.verdict != "NOT_COMPARABLE" for c in learning) else "its configuration changed")
        inconclusive = [c for c in mine if c.verdict == "INCONCLUSIVE"]
        noisy = [c for c in inconclusive if noisy_baseline(c)]
        if noisy:
            c = noisy[0]
            return Stop(base, done, NOISY_BASELINE, verdict, f"{c.direction} {c.metric}: the baseline's own noise "
                        f"is wider than twice the {c.threshold or 0:.0%} threshold")
        if inconclusive:
            if done >= self.rule.limit:
                return Stop(base, done, LIMIT, verdict, _why(mine, verdict))
            return None
        return Stop(base, done, DECISIVE, verdict, _why(mine, verdict))

    def _units(self, repeat: list[str], units: list[Unit], rows: list[dict[str, Any]]) -> list[Unit]:
        """The next repeat of each job in ``repeat``, made from the part's own unit of it (its host as
        the part reached it) and recorded before it runs."""
        if not repeat:
            return []
        seq = max((int(j["seq"]) for j in self.store.get_jobs(self.run_id)), default=-1)
        new = []
        for base in repeat:
            template = [u for u in units if u.base_key == base][-1]
            number = max([int(j["repeat"]) for j in rows if (j["base_key"] or j["key"]) == base] + [template.repeat])
            seq += 1
            new.append(replace(template, seq=seq, repeat=number + 1, repeats=max(template.repeats, 2)))
        self.store.add_jobs(self.run_id, [
            {"key": u.key, "seq": u.seq, "workload": u.workload.name, "target": u.target_label, "host": u.machine,
             "base_key": u.base_key, "repeat": u.repeat, "params": u.params()} for u in new])
        return new

    # --- saying so --------------------------------------------------------------------------
    def _say(self, stopped: list[Stop], new: list[Unit], labels: dict[str, str],
             checks: dict[str, list[Check]] | None) -> None:
        """One line per job that stops or runs again; the jobs without a baseline in one line, once."""
        unjudged = [s for s in stopped if s.stopped == NO_BASELINE]
        if unjudged:
            names = ", ".join(labels[s.job] for s in unjudged)
            why = unjudged[0].detail if len(unjudged) == 1 else "too few earlier runs"
            self.ui.line(fit(f"no baseline yet for {names} ({why}): no repeat beyond {unjudged[0].repeats}",
                             names))
        for s in stopped:
            if s.stopped != NO_BASELINE:
                self.ui.line(stop_line(s, labels[s.job], self.rule))
        for u in new:
            spread = _spread(checks.get(u.base_key, []) if checks else [])
            label = labels[u.base_key]
            self.ui.line(fit(f"{label}: INCONCLUSIVE{spread}: repeat {u.repeat} of up to {self.rule.limit}", label))


def stop_line(s: Stop, label: str, rule: AutoRepeats) -> str:
    """A job's stop in one line of at most 80 columns."""
    text = {
        DECISIVE: f"{label}: {s.verdict} after {s.repeats} repeats, decided",
        LIMIT: f"{label}: still INCONCLUSIVE after {s.repeats} repeats, the limit ({rule})",
        NOISY_BASELINE: f"{label}: INCONCLUSIVE, its baseline is too noisy; no more repeats",
        FAILED: f"{label}: a repeat failed; no more repeats",
        NO_BASELINE: f"{label}: no baseline yet ({s.detail}); no more repeats",
    }[s.stopped]
    return fit(text, label)


def _why(checks: list[Check], verdict: str) -> str:
    """The check that made the job's verdict, in words."""
    found = next((c for c in checks if c.verdict == verdict), None)
    if found is None:
        return ""
    return f"{found.direction} {found.metric}: {found.reason}" if found.reason else f"{found.direction} {found.metric}"


def _spread(checks: list[Check]) -> str:
    """`` (iops varies 26.6% > 20%)``: the widest spread of this run's repeats beyond its threshold."""
    over = [c for c in checks if c.verdict == "INCONCLUSIVE" and c.run_cv is not None and c.threshold is not None
            and c.run_cv > c.threshold]
    if not over:
        return ""
    c = max(over, key=lambda c: (c.run_cv or 0) / (c.threshold or 1))
    return f" ({c.metric} varies {c.run_cv:.1%} > {c.threshold:.0%})"


def _labels(units: list[Unit]) -> dict[str, str]:
    """Each job's short name: its workload, with its target when the part has several, and its machine
    when it is not this one."""
    several = len({u.target_label for u in units}) > 1
    return {u.base_key: u.workload.name + (f" on {u.target_label}" if several else "")
            + ("" if u.machine == LOCAL else f" @ {u.machine}") for u in units}


def fit(text: str, name: str) -> str:
    """``text`` in at most 80 columns: a long ``name`` inside it is shortened in the middle."""
    over = len(text) - WIDTH
    if over <= 0 or name not in text or len(name) <= over + 3:
        return text if over <= 0 else text[: WIDTH - 1] + "…"
    keep = len(name) - over - 1
    short = name[: (keep + 1) // 2] + "…" + name[len(name) - keep // 2:]
    return text.replace(name, short, 1)
