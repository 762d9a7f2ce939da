"""Commands that read the store: the HTML report, compare, history, and the CI gate."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .app import App, pass_app

if TYPE_CHECKING:
    from ..reports.compare import CompareRow


@click.command()
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN_ID...")
@click.option("--html", "html_file", required=True, type=click.Path(dir_okay=False), help="File to write.")
@click.option("--no-history", is_flag=True, help="Leave out the history charts.")
@pass_app
def report(app: App, run_ids: tuple[str, ...], html_file: str, no_history: bool) -> None:
    """Write one self-contained HTML report (tables and charts, works offline)."""
    from ..reports.html import build_report

    text = build_report(app.store(), list(run_ids), with_history=not no_history)
    Path(html_file).write_text(text, encoding="utf-8")
    app.ui.line(f"wrote {html_file} ({len(text) / 1024:,.0f} KiB)")


@click.command("compare")
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN_A RUN_B [RUN...]")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table",
              show_default=True)
@click.option("--fail-on", "fail_on", multiple=True, metavar="METRIC:PCT",
              help="Exit 1 when a later run is worse than the first by more than PCT, e.g. iops:10 "
                   "or p99:15 (repeatable). Without it compare always exits 0.")
@pass_app
def compare_cmd(app: App, run_ids: tuple[str, ...], fmt: str, fail_on: tuple[str, ...]) -> None:
    """Runs side by side per job and direction: values, ratios, and whether it beats the noise."""
    from ..errors import DiskbenchError
    from ..reports.compare import compare, worse_by

    if len(run_ids) < 2:
        raise click.UsageError("compare needs at least two runs")
    limits = _fail_on(fail_on)
    runs, rows = compare(app.store(), list(run_ids))
    if fmt == "json":
        app.ui.write(json.dumps({"schema": "diskbench.compare/1", "runs": [r["id"] for r in runs],
                                 "rows": [asdict(r) for r in rows]}, indent=2) + "\n")
    else:
        _compare_table(app, runs, rows, fmt)
    bad = [f"{r.job} {r.direction} {r.metric} run {i + 1} worse by {w:.1%}"
           for r in rows for i in range(1, len(runs))
           if r.metric in limits and (w := worse_by(r, i)) is not None and w > limits[r.metric]]
    if bad:
        raise DiskbenchError(f"{len(bad)} metric(s) beyond --fail-on: {bad[0]}")


def _fail_on(specs: tuple[str, ...]) -> dict[str, float]:
    from ..reports.compare import METRICS

    out = {}
    for spec in specs:
        metric, _, pct = spec.partition(":")
        try:
            out[metric] = float(pct.rstrip("%")) / 100
        except ValueError:
            raise click.BadParameter(f"{spec!r}: use METRIC:PCT, e.g. iops:10", param_hint="--fail-on") from None
        if metric not in METRICS:
            raise click.BadParameter(f"{metric!r}: one of {', '.join(METRICS)}", param_hint="--fail-on")
    return out


def _compare_table(app: App, runs: list[dict[str, Any]], rows: list[CompareRow], fmt: str) -> None:
    from rich.table import Table

    head = ["job", "dir", "metric"] + [f"run {i + 1}" for i in range(len(runs))] + [
        f"ratio {i + 1}/1" for i in range(1, len(runs))] + ["n"]
    body = []
    labels = {"iops": "IOPS", "bw": "MiB/s", "p50": "p50 µs", "p99": "p99 µs"}
    for r in rows:
        scale = 1 / 1048576 if r.metric == "bw" else 1
        vals = ["-" if v is None else f"{v * scale:,.1f}" for v in r.values]
        ratios = []
        for i in range(1, len(runs)):
            ratio, sig = r.ratios[i], r.significant[i]
            mark = "" if sig is None else (" *" if sig else " (noise)")
            ratios.append("-" if ratio is None else f"{ratio:.3f}{mark}")
        body.append([r.job, r.direction, labels.get(r.metric, r.metric), *vals, *ratios,
                     "/".join(str(n) for n in r.samples)])
    legend = ("* beyond twice the repeat noise (CV); (noise) within it; no mark: no repeats to judge. Runs: "
              + ", ".join(f"{i + 1} = {runs[i]['id']}" for i in range(len(runs))))
    if fmt == "markdown":
        rule = "|" + "|".join("---" if i < 3 else "---:" for i in range(len(head))) + "|"
        lines = ["| " + " | ".join(head) + " |", rule]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        app.ui.write("\n".join(lines) + "\n\n" + legend + "\n")
        return
    table = Table(title="compare", title_justify="left", caption=legend, caption_justify="left")
    for i, h in enumerate(head):
        table.add_column(h, justify="left" if i < 3 else "right")
    for row in body:
        table.add_row(*row)
    app.ui.print(table)


@click.command("history")
@click.option("--workload", "-w", help="Only this workload (or sweep base name).")
@click.option("--target", "-t", help="Only this target label.")
@click.option("--last", "last", type=click.IntRange(min=1), default=20, show_default=True,
              help="Look at the newest N runs.")
@pass_app
def history_cmd(app: App, workload: str | None, target: str | None, last: int) -> None:
    """One job's values over time (the HTML report draws them as a line chart)."""
    from rich.table import Table

    from ..errors import DiskbenchError
    from ..reports.compare import history

    found = history(app.store(), workload=workload, target=target, last=last)
    if not found:
        raise DiskbenchError("no stored results match", hint="see `diskbench runs`")
    for (job, direction), points in found.items():
        table = Table(title=f"{job} {direction}", title_justify="left")
        for h in ("run", "started", "gate", "n", "IOPS", "MiB/s", "p50 µs", "p99 µs"):
            table.add_column(h, justify="left" if h in ("run", "started", "gate") else "right")
        for p in points:
            v = p.values
            table.add_row(p.run_id, p.started, p.verdict or "-", str(p.n), _num(v["iops"], 0),
                          _num(None if v["bw"] is None else v["bw"] / 1048576, 1), _num(v["p50"], 1),
                          _num(v["p99"], 1))
        app.ui.print(table)


def _num(v: float | None, digits: int) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


@click.command("gate")
@click.argument("run_id")
@click.option("--policy", type=click.Path(dir_okay=False), help="gate.yaml with thresholds and windows.")
@click.option("--strict", is_flag=True, help="INCONCLUSIVE (too noisy) exits 4 instead of 0.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Write the verdict as JSON.")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False), help="Write JUnit XML.")
@click.option("--markdown", "md_file", type=click.Path(dir_okay=False),
              help="Write the explanation as Markdown (e.g. $GITHUB_STEP_SUMMARY).")
@pass_app
def gate_cmd(app: App, run_id: str, policy: str | None, strict: bool, json_file: str | None,
             junit_file: str | None, md_file: str | None) -> None:
    """Gate a run against the last accepted runs of the same testbed (exit 0/1/3/4)."""
    from ..errors import DiskbenchError, Exit
    from ..reports.gate import explain, gate, load_policy, record, to_junit
    from ..reports.gate import to_markdown as gate_markdown

    try:
        store = app.store()
        result = gate(store, run_id, load_policy(policy))
    except DiskbenchError as exc:
        exc.exit_code = Exit.GATE_ERROR  # no verdict could be reached: never mistaken for REGRESSED
        raise
    record(store, result)
    for path, text in ((json_file, json.dumps(result.to_json(), indent=2) + "\n"),
                       (junit_file, to_junit(result)), (md_file, gate_markdown(result))):
        if path:
            with open(path, "a" if path == os.environ.get("GITHUB_STEP_SUMMARY") else "w") as fh:
                fh.write(text)
    for warning in result.warnings:
        app.ui.warn(warning)
    counts: dict[str, int] = {}
    for c in result.checks:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    detail = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    app.ui.write(f"gate {result.run_id}: {result.verdict} ({detail or 'no checks'})\n")
    for c in result.checks:
        if c.verdict in ("REGRESSED", "ERROR", "INCONCLUSIVE"):
            app.ui.write(f"  {c.verdict}: {c.job} {c.direction} {c.metric}: {explain(c)}\n")
    code = result.exit_code(strict)
    if code:
        sys.exit(code)


@click.command()
@click.argument("run_id")
@pass_app
def accept(app: App, run_id: str) -> None:
    """Let a suspect run into future baselines (after checking it is not a regression)."""
    store = app.store()
    run = store.get_run(run_id)
    store.set_verdict(run["id"], run.get("verdict") or "ACCEPTED", True)
    app.ui.print(f"run {run['id']} is accepted into baselines")
