"""The CI gate: is this run worse than the recent accepted runs of the same testbed?

A metric is suspect when it falls outside the baseline median +- max(threshold x median,
3 x 1.4826 x MAD) on the bad side (IOPS and bandwidth: lower is worse; latency: higher). Noise
is measured, not assumed: a baseline whose own spread is wider than twice the threshold cannot
show a threshold-sized change, and says INCONCLUSIVE rather than guess. The run is held to the
same rule: a run whose repeats vary by more than the threshold, or whose change is within three
standard errors of its own per-second figures, is INCONCLUSIVE, so short nightly runs on a loaded
runner do not flap between PASS and REGRESSED. An infrastructure failure (a failed job, a run that
did not finish) is ERROR, never a regression.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Collection, Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Annotated, Any
from xml.sax.saxutils import escape, quoteattr

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from .. import yamldoc
from ..errors import UsageError
from ..store import Store
from ..units import latency, sig3
from .stats import MAD_SCALE, Summary, cv, mad, median, summarize

EXIT = {"PASS": 0, "IMPROVED": 0, "LEARNING": 0, "NOT_COMPARABLE": 0, "REGRESSED": 1, "ERROR": 3,
        "INCONCLUSIVE": 4}
ORDER = ["ERROR", "REGRESSED", "INCONCLUSIVE", "NOT_COMPARABLE", "LEARNING", "IMPROVED", "PASS"]
ACCEPTED = ("PASS", "IMPROVED", "LEARNING", "NOT_COMPARABLE")
HIGHER_IS_BETTER = {"iops": True, "bw": True}


def _threshold(t: float | None) -> float | None:
    if t is not None and not (math.isfinite(t) and 0 < t <= 10):
        raise ValueError(f"{t} is not a relative threshold (a number above 0, e.g. 0.1 for 10%)")
    return t


Threshold = Annotated[float | None, AfterValidator(_threshold)]


class JobPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    match: str = Field(description="glob on the job (machine/target/workload)")
    thresholds: dict[str, Threshold]


class Policy(BaseModel):
    """gate.yaml: thresholds per metric (relative), per-job overrides, and the baseline window."""

    model_config = ConfigDict(extra="forbid")
    thresholds: dict[str, Threshold] = Field(default_factory=lambda: {
        "iops": 0.10, "bw": 0.10, "p50": 0.10, "p99": 0.15, "p99.9": None})
    jobs: list[JobPolicy] = Field(default_factory=list)
    baseline_runs: int = Field(10, ge=1, le=10_000)
    baseline_days: int = Field(30, ge=1, le=36_500)
    min_runs: int = Field(5, ge=1, le=10_000)

    def for_job(self, job: str) -> dict[str, float | None]:
        out = dict(self.thresholds)
        for rule in self.jobs:
            if fnmatch.fnmatch(job, rule.match):
                out.update(rule.thresholds)
        return out


def load_policy(path: str | None) -> Policy:
    """gate.yaml, read as profiles are (bounded, any editor's encoding); a problem names the file,
    the line and the key."""
    if path is None:
        return Policy()
    node, data = yamldoc.parse(yamldoc.read_text(path, "a gate policy"), path, "a gate policy")
    if data is not None and not isinstance(data, dict):
        raise UsageError(f"{path}:1: a gate policy is a YAML mapping (thresholds, jobs, baseline_runs ...)")
    try:
        return Policy.model_validate(data or {})
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = list(err["loc"])
        line = yamldoc.line_of(node, loc)
        msg = str(err["msg"]).removeprefix("Value error, ")
        key = yamldoc.format_key_path(loc)
        if err["type"] == "extra_forbidden":
            msg, key = f"unknown key {loc[-1]!r}", yamldoc.format_key_path(loc[:-1]) or "(top level)"
        raise UsageError(f"{path}{f':{line}' if line else ''}: {key}: {msg}",
                         hint="the policy's keys are thresholds, jobs, baseline_runs, baseline_days "
                              "and min_runs (docs/reports-and-gate.md)") from None


@dataclass
class Check:
    """One metric of one job and direction."""

    job: str
    direction: str
    metric: str
    verdict: str
    value: float | None = None
    baseline_median: float | None = None
    limit: float | None = None
    threshold: float | None = None
    n: int = 0
    reason: str = ""
    change: float | None = None  # (value - baseline median) / baseline median
    run_cv: float | None = None  # how much this run's own repeats vary (the larger of metric and IOPS)


@dataclass
class GateResult:
    run_id: str
    verdict: str
    checks: list[Check] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def exit_code(self, strict: bool = False) -> int:
        if self.verdict == "INCONCLUSIVE" and not strict:
            return 0
        return EXIT[self.verdict]

    def to_json(self) -> dict[str, Any]:
        return {"schema": "diskbench.gate/1", "run": self.run_id, "verdict": self.verdict,
                "exit_code": self.exit_code(), "warnings": self.warnings,
                "checks": [asdict(c) for c in self.checks]}


def metric_value(row: Summary, metric: str) -> float | None:
    if metric == "iops":
        return row.result.iops
    if metric == "bw":
        return row.result.bw_bytes_per_s
    clat = row.result.clat
    return clat.percentiles.get(metric) if clat else None


def judge(value: float, baseline: list[float], threshold: float, higher_is_better: bool,
          min_runs: int) -> tuple[str, float | None, float | None, str]:
    """(verdict, baseline median, limit on the bad side, reason) for one metric."""
    if len(baseline) < min_runs:
        return "LEARNING", median(baseline) if baseline else None, None, \
            f"{len(baseline)} of {min_runs} baseline runs"
    m = median(baseline)
    noise = 3 * MAD_SCALE * mad(baseline)
    band = max(threshold * abs(m), noise)
    limit = m - band if higher_is_better else m + band
    worse = value < limit if higher_is_better else value > limit
    better = value > m + band if higher_is_better else value < m - band
    if worse:
        return "REGRESSED", m, limit, "beyond the limit"
    if noise > 2 * threshold * abs(m):
        return "INCONCLUSIVE", m, limit, (f"the baseline's own noise (+-{noise / abs(m):.1%} of its median) "
                                          f"is wider than twice the {threshold:.0%} threshold")
    if better:
        return "IMPROVED", m, limit, "better than the band around the baseline median"
    return "PASS", m, limit, ""


def _window(run: dict[str, Any], policy: Policy) -> tuple[str, str]:
    """The baseline window as the store's ISO times: ``baseline_days`` before the run, up to it."""
    started = datetime.fromisoformat(run["started"])
    since = started - timedelta(days=policy.baseline_days)
    return since.isoformat(timespec="seconds"), started.isoformat(timespec="seconds")


def gate(store: Store, run_ref: str, policy: Policy) -> GateResult:
    run = store.get_run(run_ref)
    result = GateResult(run["id"], "PASS")
    jobs = store.get_jobs(run["id"])
    failed = [j for j in jobs if j["status"] != "done"]
    if run["status"] != "completed" or failed:
        for j in failed or jobs:
            result.checks.append(Check(j["base_key"] or j["key"], "-", "run", "ERROR",
                                       reason=j["message"] or f"job {j['status']}"))
        if not jobs:
            result.checks.append(Check("-", "-", "run", "ERROR", reason=f"run is {run['status']}"))
        result.verdict = "ERROR"
        return result
    _judge(store, run, summarize(store.get_results(run["id"])), policy, result)
    return result


def job_checks(store: Store, run_id: str, policy: Policy, jobs: Collection[str]) -> GateResult:
    """The gate's checks of some jobs (base keys) of a run that may still be under way, from the results
    of their units finished so far: what ``run --repeats auto`` asks between rounds. The same rules and
    baseline as ``gate`` (its window ends when the run started); read-only, nothing is recorded."""
    run = store.get_run(run_id)
    done = {j["key"] for j in store.get_jobs(run["id"])
            if j["status"] == "done" and (j["base_key"] or j["key"]) in jobs}
    result = GateResult(run["id"], "PASS")
    _judge(store, run, summarize([r for r in store.get_results(run["id"]) if r.job_key in done]), policy, result)
    return result


def _judge(store: Store, run: dict[str, Any], rows: list[Summary], policy: Policy, result: GateResult) -> None:
    """Every metric of ``rows`` (a run's medians) against its baseline, into ``result``; its verdict is
    the worst of them."""
    since, until = _window(run, policy)
    baselines: dict[str | None, list[Summary]] = {}  # per testbed: its newest runs, summarized, newest first
    for row in rows:
        if row.testbed not in baselines:
            picked = store.baseline_results(run["id"], row.testbed, since, until, policy.baseline_runs)
            baselines[row.testbed] = [h for _, results in picked for h in summarize(results)]
        comparable = [h for h in baselines[row.testbed] if h.group_key == row.group_key
                      and h.result.direction == row.result.direction][: policy.baseline_runs]
        if not comparable and store.job_seen(run["id"], row.group_key, since, until):
            result.warnings.append(f"{row.group_key}: its configuration changed (testbed {row.testbed}); "
                                   "a new baseline starts with this run")
            result.checks.append(Check(row.group_key, row.result.direction, "all", "NOT_COMPARABLE",
                                       n=0, reason="no earlier run with the same testbed"))
            continue
        for metric, threshold in policy.for_job(row.group_key).items():
            value = metric_value(row, metric)
            if threshold is None or value is None:
                continue
            baseline = [v for h in comparable if (v := metric_value(h, metric)) is not None]
            verdict, m, limit, reason = judge(value, baseline, threshold,
                                              HIGHER_IS_BETTER.get(metric, False), policy.min_runs)
            run_cv = _run_cv(row, metric)
            change = (value - m) / m if m else None
            if verdict != "NOT_COMPARABLE" and run_cv is not None and run_cv > threshold:
                # a run that cannot repeat itself within the threshold cannot show a threshold-sized change
                verdict, reason = "INCONCLUSIVE", (f"this run's repeats vary by {run_cv:.1%} (n {row.n}), "
                                                   f"more than the {threshold:.0%} threshold")
            elif verdict in ("REGRESSED", "IMPROVED") and change is not None:
                verdict, reason = _within_own_noise(row, metric, change, verdict, reason)
            result.checks.append(Check(row.group_key, row.result.direction, metric, verdict, value, m,
                                       limit, threshold, len(baseline), reason, change, run_cv))
    result.verdict = worst(result.checks)


def worst(checks: Iterable[Check]) -> str:
    """The verdict of these checks: the first of ``ORDER`` among them (LEARNING when there are none)."""
    verdicts = {c.verdict for c in checks} or {"LEARNING"}
    return next(v for v in ORDER if v in verdicts)


def noisy_baseline(c: Check) -> bool:
    """Whether the baseline's own spread makes ``c`` inconclusive (its band is wider than twice the
    threshold): no repeat of the run can change that."""
    if c.baseline_median is None or c.limit is None or c.threshold is None:
        return False
    return abs(c.limit - c.baseline_median) > 2 * c.threshold * abs(c.baseline_median)


def _run_cv(row: Summary, metric: str) -> float | None:
    """The larger of the metric's own CV and the IOPS CV over this run's repeats (None without)."""
    found = [v for v in (row.cvs.get(metric), row.cvs.get("iops", row.iops_cv)) if v is not None]
    return max(found) if found else None


def _series_se(row: Summary, metric: str) -> tuple[float, int] | None:
    """This run's relative standard error from its per-second figures, and how many there were.

    Only for a run without repeats (repeats carry their own spread). IOPS and bandwidth use the
    per-second IOPS; a latency metric the larger of the per-second mean latency's and the IOPS's
    spread. Seconds are not independent (load comes in waves), so this is a floor on the noise.
    """
    series = row.result.series
    if row.n > 1 or series is None:
        return None
    spreads = [cv(series.iops)]
    if metric not in ("iops", "bw") and series.lat_mean_us:
        spreads.append(cv([v for v in series.lat_mean_us if v is not None]))
    found = [s for s in spreads if s is not None]
    if not found or len(series.iops) < 3:
        return None
    return max(found) / math.sqrt(len(series.iops)), len(series.iops)


def _within_own_noise(row: Summary, metric: str, change: float, verdict: str,
                      reason: str) -> tuple[str, str]:
    """A change no larger than three standard errors of the run's own figure proves nothing: a
    regression becomes INCONCLUSIVE, an improvement PASS."""
    se = _series_se(row, metric)
    if se is None or abs(change) > 3 * se[0]:
        return verdict, reason
    why = (f"{verdict.lower()} by {abs(change):.1%}, within this run's own noise (+-{3 * se[0]:.1%} from its "
           f"{se[1]} per-second figures); run longer or with --repeats")
    return "INCONCLUSIVE" if verdict == "REGRESSED" else "PASS", why


def fmt_value(metric: str, value: float | None) -> str:
    """A metric's value with its unit: ``16,734 IOPS``, ``130.7 MiB/s``, ``1.29 ms``."""
    if value is None:
        return "-"
    if metric == "iops":
        return f"{value:,.0f} IOPS"
    if metric == "bw":
        mib = value / 1048576
        return f"{mib:,.0f} MiB/s" if mib >= 1000 else f"{sig3(mib)} MiB/s"
    return latency(value)


def fmt_change(change: float | None, arrows: bool = False) -> str:
    if change is None:
        return "-"
    arrow = ("▲ " if change > 0 else "▼ " if change < 0 else "") if arrows else ""
    return f"{arrow}{change:+.1%}"


def explain(c: Check) -> str:
    """One line a person can act on: value, baseline median, change, limit and n, with units."""
    if c.value is None:
        return c.reason
    parts = [fmt_value(c.metric, c.value)]
    if c.baseline_median is not None:
        parts.append(f"vs baseline median {fmt_value(c.metric, c.baseline_median)} ({fmt_change(c.change)}")
        parts[-1] += f", limit {fmt_value(c.metric, c.limit)}" if c.limit is not None else ""
        parts[-1] += f", n {c.n})"
    text = " ".join(parts)
    return f"{text}: {c.reason}" if c.verdict in ("INCONCLUSIVE", "LEARNING") and c.reason else text


def record(store: Store, result: GateResult) -> None:
    """Suspect runs stay out of later baselines unless someone accepts them."""
    store.set_verdict(result.run_id, result.verdict, result.verdict in ACCEPTED)


def to_junit(result: GateResult) -> str:
    cases = []
    for c in result.checks:
        name = quoteattr(f"{c.job} {c.direction} {c.metric}")
        detail = explain(c)
        body = ""
        if c.verdict == "REGRESSED":
            body = f"<failure message={quoteattr(detail)} type=\"REGRESSED\">{escape(detail)}</failure>"
        elif c.verdict == "ERROR":
            body = f"<error message={quoteattr(c.reason)} type=\"ERROR\"/>"
        elif c.verdict in ("LEARNING", "NOT_COMPARABLE", "INCONCLUSIVE"):
            body = f"<skipped message={quoteattr(c.verdict + ': ' + detail)}/>"
        cases.append(f'  <testcase classname={quoteattr("diskbench." + result.run_id)} name={name}>'
                     f"{body}</testcase>")
    failures = sum(c.verdict == "REGRESSED" for c in result.checks)
    errors = sum(c.verdict == "ERROR" for c in result.checks)
    skipped = sum(c.verdict in ("LEARNING", "NOT_COMPARABLE", "INCONCLUSIVE") for c in result.checks)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="diskbench gate" '
            f'tests="{len(result.checks)}" failures="{failures}" errors="{errors}" skipped="{skipped}">\n'
            + "\n".join(cases) + "\n</testsuite>\n")



def to_markdown(result: GateResult) -> str:
    lines = [f"## diskbench gate: {result.verdict}", "", f"Run `{result.run_id}`, "
             f"{len(result.checks)} checks."]
    for w in result.warnings:
        lines += ["", f"> warning: {w}"]
    suspect = [c for c in result.checks if c.verdict in ("REGRESSED", "INCONCLUSIVE", "ERROR")]
    if suspect:
        lines += ["", "| job | dir | metric | verdict | value | baseline median | change | limit | n | why |",
                  "|---|---|---|---|---:|---:|---:|---:|---:|---|"]
        for c in suspect:
            lines.append(f"| {c.job} | {c.direction} | {c.metric} | **{c.verdict}** | {fmt_value(c.metric, c.value)} | "
                         f"{fmt_value(c.metric, c.baseline_median)} | {fmt_change(c.change, arrows=True)} | "
                         f"{fmt_value(c.metric, c.limit)} | {c.n} | {c.reason} |")
    else:
        lines += ["", "No suspect metric."]
    return "\n".join(lines) + "\n"

