"""Commands that read what is stored or bundled: runs, show, import, profiles, profile-schema, doctor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from .app import App, format_option, pass_app, run_id_argument, run_ids_argument

TABLE_FORMATS = ("table", "json", "csv")
table_format_option = click.option("--format", "fmt", type=click.Choice(TABLE_FORMATS), default="table",
                                   show_default=True, help="Output format.")


@click.group(invoke_without_command=True)
@click.option("--limit", "-n", type=click.IntRange(min=1, max=1_000_000), default=20, show_default=True)
@table_format_option
@click.pass_context
def runs(ctx: click.Context, limit: int, fmt: str) -> None:
    """List stored runs, newest first; `runs delete` and `runs prune` tidy the store."""
    if ctx.invoked_subcommand is None:
        _list_runs(ctx.obj, limit, fmt)


def _list_runs(app: App, limit: int, fmt: str) -> None:
    from .. import api
    from ..reports.documents import RUN_COLUMNS, dumps, run_rows, runs_json, to_csv
    from ..reports.textable import Col, TextTable

    store = app.store()
    listed = api.runs(store=store, limit=limit)
    if fmt == "json":
        app.ui.write(dumps(runs_json(str(store.path), listed)))
        return
    if fmt == "csv":
        app.ui.write(to_csv(run_rows(listed), RUN_COLUMNS))
        return
    if not listed:
        app.ui.write(f"no runs in {store.path} yet; start one with `diskbench run --profile local`\n")
        return
    table = TextTable([Col("id", min_width=20), Col("profile", shrink=True), Col("origin", drop=2),
                       Col("started", drop=1), Col("status"), Col("jobs", right=True),
                       Col("host", shrink=True)], title=f"runs in {store.path}")
    for row in run_rows(listed):
        table.add_row(row["id"], row["profile"], row["origin"], row["started"][:16].replace("T", " "), row["status"],
                      f"{row['jobs_done']}/{row['jobs']}", row["host"] or "-")
    app.ui.print(table)


def _tidy(app: App, decisions: list[Any], dry_run: bool) -> int:
    """Say what goes and what stays (and why); delete unless ``dry_run``. Returns how many stayed."""
    from ..tidy import apply
    from ..units import human_bytes

    verb = "would delete" if dry_run else "deleted"
    if not dry_run:
        apply(app.store(), decisions)
    for d in decisions:
        run = d.run
        what = f"{run['id']} ({run['profile']}, {run['status']}, {run['started'][:16].replace('T', ' ')})"
        app.ui.write(f"{verb} {what}, artifacts {human_bytes(d.bytes)}\n" if d.delete
                     else f"kept {what}: {d.why}\n")
    gone = [d for d in decisions if d.delete]
    app.ui.write(f"{len(gone)} run(s) {verb}, {human_bytes(sum(d.bytes for d in gone))} of artifacts"
                 f"{'; nothing was changed (--dry-run)' if dry_run else ''}\n")
    return len(decisions) - len(gone)


dry_run_option = click.option("--dry-run", is_flag=True, help="Say what would be deleted; delete nothing.")
force_option = click.option("--force", is_flag=True, help="Also delete runs the gate uses as baselines.")


@runs.command("delete")
@run_ids_argument
@dry_run_option
@force_option
@pass_app
def runs_delete(app: App, run_ids: tuple[str, ...], dry_run: bool, force: bool) -> None:
    """Delete runs with their results and artifacts (never a running one)."""
    from ..errors import DiskbenchError
    from ..tidy import decide

    store = app.store()
    runs_ = list({r["id"]: r for r in (store.get_run(ref) for ref in run_ids)}.values())
    kept = _tidy(app, [decide(store, r, force) for r in runs_], dry_run)
    if kept:
        raise DiskbenchError(f"{kept} run(s) kept; see above")


@runs.command("prune")
@click.option("--failed", is_flag=True, help="Runs that failed, were interrupted or are partial.")
@click.option("--older-than", "older_than", metavar="AGE", help="Runs started longer ago than AGE (e.g. 30d).")
@dry_run_option
@force_option
@pass_app
def runs_prune(app: App, failed: bool, older_than: str | None, dry_run: bool, force: bool) -> None:
    """Delete the runs that match every filter given, with their artifacts."""
    from ..tidy import select
    from ..units import parse_duration

    if not failed and not older_than:
        raise click.UsageError("say what to prune: --failed, --older-than AGE, or both")
    try:
        age = parse_duration(older_than) if older_than else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--older-than") from None
    _tidy(app, select(app.store(), failed=failed, older_than_s=age, force=force), dry_run)


@click.command()
@run_id_argument
@format_option
@pass_app
def show(app: App, run_id: str, fmt: str) -> None:
    """Print a stored run again (RUN_ID may be a unique prefix or `last`)."""
    from .. import api

    found = api.results(run_id, store=app.store())
    app.emit(fmt, found.run, found.stored)


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--no-store", is_flag=True, help="Print only; do not store.")
@click.option("--per-job", "--per-target", "per_job", is_flag=True,
              help="One result per job name (fio) or per target (DiskSpd), not per group or run.")
@format_option
@pass_app
def import_cmd(app: App, file: Path, no_store: bool, per_job: bool, fmt: str) -> None:
    """Read an engine's output file (fio json/json+, DiskSpd XML or text, noise included); store and print it."""
    from .. import api

    imported = api.import_file(file, store=None if no_store else app.store(), keep=not no_store, per_job=per_job)
    app.emit(fmt, imported.run, imported.stored)
    for error in imported.errors:
        app.ui.warn(f"{file}: {error}")


@click.command()
@table_format_option
@pass_app
def profiles(app: App, fmt: str) -> None:
    """List the bundled profiles."""
    from .. import api
    from ..reports.documents import PROFILE_COLUMNS, dumps, profiles_json, to_csv
    from ..reports.textable import Col, TextTable

    found = api.profiles()
    if fmt == "json":
        app.ui.write(dumps(profiles_json(found)))
        return
    if fmt == "csv":
        app.ui.write(to_csv(found, PROFILE_COLUMNS))
        return
    table = TextTable([Col("name", min_width=8), Col("description", shrink=True, min_width=20)],
                      title="bundled profiles (diskbench plan --profile NAME shows one)")
    for p in found:
        table.add_row(p["name"], f"(invalid: {p['error']})" if p.get("error") else p["description"])
    app.ui.print(table)


@click.command("profile-schema")
@pass_app
def profile_schema(app: App) -> None:
    """Print the JSON Schema of the profile format."""
    from ..profile import profile_json_schema

    app.ui.write(json.dumps(profile_json_schema(), indent=2) + "\n")


@click.command()
@click.option("--online", is_flag=True, help="Also check cloud logins over the network.")
@table_format_option
@pass_app
def doctor(app: App, online: bool, fmt: str) -> None:
    """Say what is installed and what is missing, with the command that fixes it."""
    from .. import api
    from ..errors import DiskbenchError
    from ..reports.documents import CHECK_COLUMNS, doctor_json, dumps, to_csv

    checks = api.doctor(db=app.db, online=online)
    if fmt == "json":
        app.ui.write(dumps(doctor_json(checks)))
    elif fmt == "csv":
        app.ui.write(to_csv([vars(c) for c in checks], CHECK_COLUMNS))
    else:
        for check in checks:
            mark = "ok     " if check.ok else "absent " if check.optional else "MISSING"
            fix = f"  -> {check.fix}" if check.fix else ""
            app.ui.write(f"{mark} {check.name:9} {check.detail}{fix}\n")
    missing = sum(not c.ok and not c.optional for c in checks)
    if missing:
        raise DiskbenchError(f"{missing} requirement(s) missing; run the commands shown above")
