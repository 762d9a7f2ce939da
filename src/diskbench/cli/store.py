"""``diskbench store``: where the store is, copying a history between stores, raw outputs, readers."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .app import App, pass_app


@click.group(invoke_without_command=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
@click.pass_context
def store(ctx: click.Context, fmt: str) -> None:
    """The result store: SQLite (a file, the default) or PostgreSQL (`--db postgresql://...`).
    Without a subcommand: where it is, what it holds, where raw outputs are kept."""
    if ctx.invoked_subcommand is not None:
        return
    app = ctx.find_object(App)
    assert app is not None
    info = app.store().info()
    if fmt == "json":
        app.ui.write(json.dumps(info, indent=2) + "\n")
        return
    for key in ("location", "backend", "schema_version", "runs", "results", "raw_outputs", "local_folder"):
        app.ui.write(f"{key.replace('_', ' ')}: {info[key]}\n")


@store.command("copy")
@click.argument("src", metavar="SRC")
@click.argument("dst", metavar="DST")
@pass_app
def copy_cmd(app: App, src: str, dst: str) -> None:
    """Copy every run of SRC that DST lacks (jobs, results, histograms, journal, raw outputs), then
    check that both hold the same rows and raw outputs per run. SRC and DST are SQLite files or
    `postgresql://` DSNs, either way round; a copy that stopped part way is simply run again."""
    from ..store import Store
    from ..store.copy import copy_store

    source = Store(src)
    target = Store(dst)
    try:
        done = copy_store(source, target, line=app.ui.line)
    finally:
        source.close()
        target.close()
    rows = ", ".join(f"{n} {table}" for table, n in done.counts.items()) or "nothing"
    app.ui.write(f"copied {len(done.copied)} run(s) ({rows}) from {source.location} to {target.location}\n")
    if done.present:
        app.ui.write(f"{len(done.present)} run(s) were there already\n")
    for run_id in done.running:
        app.ui.write(f"left out {run_id}: still running; copy again once it has finished\n")
    app.ui.write(f"checked: the same rows and raw outputs for all {len(done.copied) + len(done.present)} run(s)\n")


@store.command("artifacts")
@click.argument("run_id", metavar="RUN_ID")
@click.option("--to", "dest", type=click.Path(file_okay=False), help="Write them into this folder.")
@pass_app
def artifacts_cmd(app: App, run_id: str, dest: str | None) -> None:
    """List a run's raw outputs (job files, engine outputs, logs), or write them into a folder
    with --to, from wherever the store keeps them."""
    st = app.store()
    rid = str(st.get_run(run_id)["id"])
    if dest is None:
        for name in st.artifact_names(rid):
            app.ui.write(name + "\n")
        return
    written = st.fetch_artifacts(rid, Path(dest) / rid)
    app.ui.write(f"wrote {len(written)} file(s) of run {rid} to {Path(dest) / rid}\n")


@store.command("keep")
@click.argument("run_id", metavar="RUN_ID")
@pass_app
def keep_cmd(app: App, run_id: str) -> None:
    """Keep the raw outputs this machine wrote for RUN_ID where every reader reaches them (done
    by itself as units finish; this is for a run whose keeping failed)."""
    st = app.store()
    rid = str(st.get_run(run_id)["id"])
    app.ui.write(f"kept {st.keep_artifacts(rid)} new or changed file(s) of run {rid}\n")


@store.command("grant-read")
@click.argument("role", metavar="ROLE")
@click.option("--print", "print_only", is_flag=True, help="Print the SQL instead of running it.")
@pass_app
def grant_read_cmd(app: App, role: str, print_only: bool) -> None:
    """Let the PostgreSQL login role ROLE read the store and nothing more (a dashboard, people who
    only look): through the group role diskbench_reader."""
    from ..store.reader import grant_read

    statements = grant_read(app.store(), role, apply=not print_only)
    if print_only:
        app.ui.write("".join(f"{s};\n" for s in statements))
    else:
        app.ui.write(f"{role} can read the store now (role diskbench_reader; view results_view)\n")
