"""``diskbench cleanup``: delete what runs left behind in clouds, provider by provider.

Without ``--provider`` it looks at every provider that creates machines. One that is not set up
(no credentials, no cloud named) or cannot log in is skipped with a line saying why, and the
others still run: a machine that only ever used one cloud needs no credentials for the rest.
The command fails only when a provider that was set up fails, or when the one named with
``--provider`` cannot do its part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .app import App, pass_app
from .run import provider_options

if TYPE_CHECKING:
    from ..errors import DiskbenchError
    from ..store import Store


@dataclass
class Outcome:
    """One provider's part: what it deleted (or would), or why it was skipped, or how it failed."""

    name: str
    done: list[str] = field(default_factory=list)
    skipped: str | None = None
    error: DiskbenchError | None = None


@dataclass
class Ask:
    """What every provider is asked to clean up."""

    options: dict[str, Any]
    state_dir: Path
    run_id: str | None
    older_than: float | None
    dry_run: bool


@click.command()
@click.option("--older-than", "older_than", metavar="DURATION",
              help="Also delete diskbench's resources created longer ago than this (e.g. 6h), expired or not.")
@click.option("--run", "run_ref", metavar="RUN_ID", help="Delete what this run created (`last` works).")
@click.option("--dry-run", is_flag=True, help="List what would be deleted, delete nothing.")
@click.option("--provider", "only", metavar="NAME", help="Only this provider's resources.")
@provider_options
@pass_app
def cleanup(app: App, older_than: str | None, run_ref: str | None, dry_run: bool, only: str | None,
            provider_opts: dict[str, Any]) -> None:
    """Delete what diskbench created in clouds and left behind (expired, or in its journal)."""
    age = _age(older_than)
    store = app.store()
    ask = Ask(provider_opts, store.path.parent, _run_id(app, store, run_ref) if run_ref else None, age, dry_run)
    names = [only] if only else _machine_providers()
    hosts = [] if only and only != HOSTS else [_hosts(app, store, ask)]
    _report(app, hosts + [_clean(app, name, ask, explicit=only is not None) for name in names if name != HOSTS])


HOSTS = "hosts"  # --provider hosts: only what dead runs left on this machine and their SSH hosts


def _hosts(app: App, store: Store, ask: Ask) -> Outcome:
    """What killed runs left on hosts (mounts, arrays, scratch folders, data files, workspaces),
    from the store's journal."""
    from ..errors import DiskbenchError
    from ..runner.leftovers import clean

    out = Outcome(HOSTS)
    out.done, failed = clean(store, run_id=ask.run_id, dry_run=ask.dry_run, line=app.ui.line)
    if failed:
        for line in failed[:-1]:
            app.ui.line(f"hosts: {line}")
        out.error = DiskbenchError(f"hosts: {failed[-1]}", hint="fix what is named, then run cleanup again")
    return out


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


def _machine_providers() -> list[str]:
    from .. import registry

    return [n for n in registry.providers.names() if registry.providers.get(n).creates_machines]


def _clean(app: App, name: str, ask: Ask, *, explicit: bool) -> Outcome:
    """One provider's cleanup; not being set up or not logging in skips it unless it was named."""
    from .. import registry
    from ..errors import DiskbenchError
    from ..providers.base import NotConfigured

    provider = registry.providers.get(name)
    out = Outcome(name)
    why = provider.configured(ask.options, state_dir=ask.state_dir)
    if why is not None:
        if explicit:
            out.error = NotConfigured(f"{name}: {why}")
        else:
            out.skipped = why
        return out
    try:
        out.done = provider.cleanup(ask.options, state_dir=ask.state_dir, run_id=ask.run_id,
                                    older_than=ask.older_than, dry_run=ask.dry_run, line=app.ui.line)
    except NotConfigured as exc:
        if explicit:
            out.error = _named(name, exc)
        else:
            out.skipped = f"{exc.message}; {exc.hint}" if exc.hint else exc.message
    except DiskbenchError as exc:
        out.error = _named(name, exc)
    return out


def _named(name: str, exc: DiskbenchError) -> DiskbenchError:
    """The provider's error with its name in front, and its exit code."""
    from ..errors import DiskbenchError

    named = DiskbenchError(f"{name}: {exc.message}", hint=exc.hint)
    named.exit_code = exc.exit_code
    return named


def _report(app: App, outcomes: list[Outcome]) -> None:
    """What each provider did or why it was skipped (stdout); then every failure, the last one as
    the command's error."""
    for out in outcomes:  # whole lines, never wrapped: scripts and CI logs read them
        if out.skipped is not None:
            app.ui.write(f"{out.name}: skipped ({out.skipped})\n")
        for done in out.done:
            app.ui.write(f"{out.name}: {done}\n")
    errors = [out.error for out in outcomes if out.error is not None]
    if not errors and not any(out.done for out in outcomes):
        app.ui.write("nothing to clean up\n")
    for error in errors[:-1]:
        click.echo(f"error: {error}", err=True)
    if errors:
        raise errors[-1]
