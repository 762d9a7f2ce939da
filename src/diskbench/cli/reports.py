"""Commands that read the store: the HTML report, compare, history, and the CI gate."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .app import App, complete_runs, pass_app, run_id_argument, run_ids_argument

if TYPE_CHECKING:
    from ..reports.compare import CompareRow


@click.command()
@run_ids_argument
@click.option("--html", "html_file", required=True, type=click.Path(dir_okay=False), help="File to write.")
@click.option("--no-history", is_flag=True, help="Leave out the history charts.")
@pass_app
def report(app: App, run_ids: tuple[str, ...], html_file: str, no_history: bool) -> None:
    """Write one self-contained HTML report (tables and charts, works offline)."""
    from .. import api
    from ..errors import UsageError

    text = api.report(list(run_ids), store=app.store(), with_history=not no_history)
    try:
        Path(html_file).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--html {html_file}: cannot write it: {exc.strerror}",
                         hint="name a file in a folder that exists and you can write to") from None
    app.ui.line(f"wrote {html_file} ({len(text) / 1024:,.0f} KiB)")


@click.command("compare")
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN_A RUN_B [RUN...]", shell_complete=complete_runs)
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table",
              show_default=True)
@click.option("--fail-on", "fail_on", multiple=True, metavar="METRIC:PCT",
              help="Exit 1 when a later run is worse than the first by more than PCT, e.g. iops:10 "
                   "or p99:15 (repeatable). Without it compare always exits 0.")
@pass_app
def compare_cmd(app: App, run_ids: tuple[str, ...], fmt: str, fail_on: tuple[str, ...]) -> None:
    """Runs side by side per job and direction: values, ratios, and whether it beats the noise."""
    from .. import api
    from ..errors import DiskbenchError
    from ..reports.compare import worse_by
    from ..reports.documents import compare_json, dumps

    if len(run_ids) < 2:
        raise click.UsageError("compare needs at least two runs")
    limits = _fail_on(fail_on)
    found = api.compare(list(run_ids), store=app.store())
    runs, rows = found.runs, found.rows
    if fmt == "json":
        app.ui.write(dumps(compare_json(runs, rows)))
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


METRIC_LABELS = {"iops": "IOPS ↑", "bw": "MiB/s ↑", "p50": "p50 ↓", "p99": "p99 ↓"}


def _cell(metric: str, value: float | None) -> str:
    from ..reports.textable import count
    from ..units import latency

    if metric == "iops":
        return count(value, 0)
    if metric == "bw":
        return count(None if value is None else value / 1048576, 1)
    return latency(value)


def _change(r: CompareRow, i: int) -> str:
    """``+40.0% better *``: the change, which way is better for the metric, and the noise mark."""
    change, sig = r.changes[i], r.significant[i]
    if change is None:
        return "-"
    good = change > 0 if r.better == "higher" else change < 0
    word = "same" if abs(change) < 0.0005 else ("better" if good else "worse")
    mark = "" if sig is None else (" *" if sig else " ~")
    return f"{change:+.1%} {word}{mark}"


def _compare_table(app: App, runs: list[dict[str, Any]], rows: list[CompareRow], fmt: str) -> None:
    from ..reports.textable import Col, TextTable

    n_runs = len(runs)
    legend = ("↑/↓ higher/lower is better; * beyond twice the repeat noise (the metric's CV over repeats), "
              "~ within it (noise), no mark: no repeats to judge. Runs: "
              + ", ".join(f"{i + 1} = {runs[i]['id']}" for i in range(n_runs)))
    renamed = {f"{r.job}: " + ", ".join(f"run {i + 1} {n}" for i, n in enumerate(r.names) if n and n != r.job)
               for r in rows if any(n and n != r.job for n in r.names)}
    if fmt == "markdown":
        head = ["job", "dir", "metric"] + [f"run {i + 1}" for i in range(n_runs)] + [
            f"change {i + 1}/1" for i in range(1, n_runs)] + ["n"]
        lines = ["| " + " | ".join(head) + " |",
                 "|" + "|".join("---" if i < 3 else "---:" for i in range(len(head))) + "|"]
        lines += ["| " + " | ".join([r.job, r.direction, METRIC_LABELS.get(r.metric, r.metric),
                                     *(_cell(r.metric, v) for v in r.values),
                                     *(_change(r, i) for i in range(1, n_runs)),
                                     "/".join(str(n) for n in r.samples)]) + " |" for r in rows]
        notes = [legend] + [f"matched by configuration: {m}" for m in sorted(renamed)]
        app.ui.write("\n".join(lines) + "\n\n" + "\n\n".join(notes) + "\n")
        return
    cols = [Col("metric", min_width=7)] + [Col(f"run {i + 1}", right=True) for i in range(n_runs)]
    cols += [Col(f"change {i + 1}/1", right=True) for i in range(1, n_runs)] + [Col("n", right=True, drop=1)]
    table = TextTable(cols, title="compare", caption=[legend] + [f"matched by configuration: {m}"
                                                                  for m in sorted(renamed)])
    last = None
    for r in rows:
        if (r.job, r.direction) != last:
            last = (r.job, r.direction)
            table.add_group(f"{r.job} {r.direction}")
        table.add_row(METRIC_LABELS.get(r.metric, r.metric), *(_cell(r.metric, v) for v in r.values),
                      *(_change(r, i) for i in range(1, n_runs)), "/".join(str(n) for n in r.samples))
    app.ui.print(table)


@click.command("history")
@click.option("--workload", "-w", help="Only this workload (or sweep base name).")
@click.option("--target", "-t", help="Only this target label.")
@click.option("--last", "last", type=click.IntRange(min=1, max=1_000_000), default=20, show_default=True,
              help="Look at the newest N runs.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True,
              help="Output format.")
@pass_app
def history_cmd(app: App, workload: str | None, target: str | None, last: int, fmt: str) -> None:
    """One job's values over time (the HTML report draws them as a line chart)."""
    from .. import api
    from ..reports.documents import HISTORY_COLUMNS, dumps, history_json, history_rows, to_csv
    from ..reports.textable import Col, TextTable

    found = api.history(store=app.store(), workload=workload, target=target, last=last)
    if fmt == "json":
        app.ui.write(dumps(history_json(found)))
        return
    if fmt == "csv":
        app.ui.write(to_csv(history_rows(found), HISTORY_COLUMNS))
        return
    for (job, direction), points in found.items():
        table = TextTable([Col("run", min_width=20), Col("started", drop=2), Col("gate", shrink=True, drop=1),
                           Col("n", right=True), Col("IOPS", right=True), Col("MiB/s", right=True),
                           Col("p50", right=True), Col("p99", right=True)], title=f"{job} {direction}")
        for p in points:
            v = p.values
            verdict = f"{p.verdict} (accepted)" if p.accepted else p.verdict or "-"
            table.add_row(p.run_id, p.started[:16].replace("T", " "), verdict, p.n,
                          *(_cell(m, v[m]) for m in ("iops", "bw", "p50", "p99")))
        app.ui.print(table)


@click.command("gate")
@run_id_argument
@click.option("--policy", type=click.Path(dir_okay=False), help="gate.yaml with thresholds and windows.")
@click.option("--strict", is_flag=True, help="INCONCLUSIVE (too noisy) exits 4 instead of 0.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Write the verdict as JSON.")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False), help="Write JUnit XML.")
@click.option("--markdown", "md_file", type=click.Path(dir_okay=False),
              help="Write the explanation as Markdown (e.g. $GITHUB_STEP_SUMMARY).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Print the verdict as text or as JSON.")
@pass_app
def gate_cmd(app: App, run_id: str, policy: str | None, strict: bool, json_file: str | None,
             junit_file: str | None, md_file: str | None, fmt: str) -> None:
    """Gate a run against the last accepted runs of the same testbed (exit 0/1/3/4)."""
    from .. import api
    from ..errors import DiskbenchError, Exit
    from ..reports.documents import dumps
    from ..reports.gate import explain, to_junit
    from ..reports.gate import to_markdown as gate_markdown
    from ..text import printable

    try:
        result = api.gate(run_id, store=app.store(), policy=policy)
    except DiskbenchError as exc:
        exc.exit_code = Exit.GATE_ERROR  # no verdict could be reached: never mistaken for REGRESSED
        raise
    for path, text in ((json_file, dumps(result.to_json())), (junit_file, to_junit(result)),
                       (md_file, gate_markdown(result))):
        if path:
            try:
                with open(path, "a" if path == os.environ.get("GITHUB_STEP_SUMMARY") else "w") as fh:
                    fh.write(text)
            except OSError as exc:
                error = DiskbenchError(f"cannot write {path}: {exc.strerror}", hint="the verdict is recorded; "
                                       "name a file you can write to")
                error.exit_code = Exit.GATE_ERROR  # exit 1 would read as REGRESSED
                raise error from None
    if fmt == "json":
        app.ui.write(dumps(result.to_json()))
    else:
        for warning in result.warnings:
            app.ui.warn(warning)
        counts: dict[str, int] = {}
        for c in result.checks:
            counts[c.verdict] = counts.get(c.verdict, 0) + 1
        detail = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        head = app.ui.wrap(printable(f"gate {result.run_id}: {result.verdict} ({detail or 'no checks'})"))
        app.ui.write(head.replace(result.verdict, app.ui.verdict(result.verdict), 1) + "\n", styled=True)
        for c in result.checks:
            if c.verdict in ("REGRESSED", "ERROR", "INCONCLUSIVE"):
                line = printable(f"  {c.verdict}: {c.job} {c.direction} {c.metric}: {explain(c)}")
                line = app.ui.wrap(line, indent=4).replace(c.verdict, app.ui.verdict(c.verdict), 1)
                app.ui.write(line + "\n", styled=True)
    code = result.exit_code(strict)
    if code:
        sys.exit(code)


@click.command()
@run_id_argument
@click.option("--yes", "-y", is_flag=True, help="Accept a REGRESSED or failed run without asking.")
@pass_app
def accept(app: App, run_id: str, yes: bool) -> None:
    """Let a suspect run into future baselines (after checking it is not a regression).

    A REGRESSED, INCONCLUSIVE or ERROR run becomes the new normal for every later gate, so
    diskbench asks first; without a terminal to ask on, it needs --yes."""
    from .. import api
    from ..errors import UsageError
    from ..reports.gate import ACCEPTED

    store = app.store()
    run = store.get_run(run_id)
    verdict = run.get("verdict")
    if verdict and verdict not in ACCEPTED and not yes:
        question = f"run {run['id']} was {verdict}; later gates will measure against it. Accept it?"
        if not app.ui.interactive:
            raise UsageError(f"run {run['id']} was {verdict}", hint="pass --yes to accept it into baselines")
        if not click.confirm(question, default=False, err=True):
            app.ui.print(f"run {run['id']} is left out of baselines")
            return
    run = api.accept(run["id"], store=store)
    app.ui.print(f"run {run['id']} is accepted into baselines")
