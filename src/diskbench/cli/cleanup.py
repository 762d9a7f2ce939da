"""``diskbench cleanup``: what diskbench left behind, deleted (``diskbench.cleanup`` does the work)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .app import App, format_option, pass_app
from .run import provider_options

if TYPE_CHECKING:
    from ..cleanup import CleanupOutcome
    from ..store import Store


@click.command()
@click.option("--older-than", "older_than", metavar="DURATION",
              help="Also delete diskbench's resources created longer ago than this (e.g. 6h), expired or not.")
@click.option("--run", "run_ref", metavar="RUN_ID", help="Delete what this run created (`last` works).")
@click.option("--dry-run", is_flag=True, help="List what would be deleted, delete nothing.")
@click.option("--provider", "only", metavar="NAME", help="Only this provider's resources.")
@provider_options
@format_option
@pass_app
def cleanup(app: App, older_than: str | None, run_ref: str | None, dry_run: bool, only: str | None,
            provider_opts: dict[str, Any], fmt: str) -> None:
    """Delete what diskbench created in clouds and left behind (expired, or in its journal), and what
    killed runs left on hosts."""
    import json

    from .. import api

    store = app.store()
    run_id = _run_id(app, store, run_ref) if run_ref else None
    outcomes = api.cleanup(store=store, run_id=run_id, older_than=_age(older_than), dry_run=dry_run,
                           provider=only, options=provider_opts, line=app.ui.line)
    if fmt == "json":
        app.ui.write(json.dumps({"schema": "diskbench.cleanup/1", "dry_run": dry_run,
                                 "outcomes": [o.to_json() for o in outcomes]}, indent=2) + "\n")
    else:
        _lines(app, outcomes)
    errors = [out.error for out in outcomes if out.error is not None]
    for error in errors[:-1]:
        click.echo(f"error: {error}", err=True)
    if errors:
        raise errors[-1]


def _age(older_than: str | None) -> float | None:
    """``--older-than`` in seconds; a value that is no duration is a usage error (exit 2), one line."""
    from ..errors import UsageError
    from ..units import parse_duration

    if older_than is None:
        return None
    try:
        return parse_duration(older_than)
    except ValueError as exc:
        raise UsageError(f"--older-than: {exc}") from None


def _run_id(app: App, store: Store, ref: str) -> str:
    """The run ``ref`` names in the store; a run id the store does not know (a run that failed before
    it was recorded, or one of another machine) is looked for in the clouds as it is."""
    if ref in ("last", "latest") or any(str(r["id"]).startswith(ref) for r in store.list_runs()):
        return str(store.get_run(ref)["id"])
    app.ui.line(f"run {ref} is not in {store.path}; looking for it in the clouds by its id")
    return ref


def _lines(app: App, outcomes: list[CleanupOutcome]) -> None:
    """What each part did or why it was skipped, whole lines (scripts and CI logs read them)."""
    for out in outcomes:
        if out.skipped is not None:
            app.ui.write(f"{out.name}: skipped ({out.skipped})\n")
        for done in out.done:
            app.ui.write(f"{out.name}: {done}\n")
    if not any(out.error for out in outcomes) and not any(out.done for out in outcomes):
        app.ui.write("nothing to clean up\n")
