"""The object that owns one invocation's output and store; shared click options.

Nothing heavy is imported here: the terminal library, the store and the library modules are
imported when a command needs them, so ``diskbench --help`` starts fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..store import Store
    from ..ui import UI

FORMATS = ("table", "json", "markdown", "csv")


class App:
    """Shared state of one invocation: where the store is, and who prints."""

    def __init__(self, db: str | None, quiet: bool) -> None:
        self.db = db
        self.quiet = quiet
        self._ui: UI | None = None
        self._store: Store | None = None

    @property
    def ui(self) -> UI:
        if self._ui is None:
            from ..ui import UI

            self._ui = UI(quiet=self.quiet)
        return self._ui

    def store(self) -> Store:
        """The store ``--db`` (or ``DISKBENCH_DB``) names: a SQLite file or a ``postgresql://`` DSN;
        opened once per invocation (a PostgreSQL store is a connection, maybe over a network)."""
        if self._store is None:
            from ..store import Store

            self._store = Store(self.db)
        return self._store

    def emit(self, fmt: str, run: dict[str, Any], results: list[Any]) -> None:
        from ..reports.formats import format_results

        if fmt == "table" and not results:  # no empty table header in front of the error that follows
            self.ui.line(f"run {run['id']} ({run['status']}) has no results")
            return
        out = format_results(fmt, run, results)
        if not isinstance(out, str):
            self.ui.print(out)
            for note in sorted({n for r in results for n in r.notes}):
                self.ui.line(f"note: {note}")
        else:
            self.ui.write(out)


pass_app = click.make_pass_decorator(App)

format_option = click.option("--format", "fmt", type=click.Choice(FORMATS), default="table",
                             show_default=True, help="Output format.")
def complete_runs(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Shell completion of run ids: `last`, then the stored runs' ids, newest first."""
    from click.shell_completion import CompletionItem

    try:  # completing, the group's callback has not run: the store comes from --db or DISKBENCH_DB
        listed = App(ctx.find_root().params.get("db"), True).store().list_runs(200)
    except Exception:  # noqa: BLE001 - completion never fails the shell
        listed = []
    ids = ["last", *(str(r["id"]) for r in listed)]
    return [CompletionItem(i) for i in ids if i.startswith(incomplete)]


def complete_profiles(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Shell completion of --profile: the bundled profiles' names, then YAML files."""
    from click.shell_completion import CompletionItem

    from ..profile import bundled_profiles

    names = [CompletionItem(n) for n in bundled_profiles() if n.startswith(incomplete)]
    return names or [CompletionItem(incomplete, type="file")]


run_id_argument = click.argument("run_id", shell_complete=complete_runs)
run_ids_argument = click.argument("run_ids", nargs=-1, required=True, metavar="RUN_ID...", shell_complete=complete_runs)
profile_option = click.option("--profile", "-p", "profile", required=True, metavar="NAME|FILE",
                              shell_complete=complete_profiles,
                              help="A bundled profile name (see `diskbench profiles`) or a YAML file.")
set_option = click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE",
                          help="Override a profile value, e.g. defaults.runtime=5s (repeatable).")
target_option = click.option("--target", "-t", "target", metavar="DIR",
                             help="Run in this existing directory instead of the profile's target.")
allow_exec_option = click.option("--allow-exec", is_flag=True,
                                 help="Let the profile's engine options run programs as root on the hosts "
                                      "(fio's exec_prerun, exec_postrun, ioengine=exec or external:).")
machine_option = click.option("--machine", "-m", "machines", multiple=True, metavar="NAME",
                              help="Only this machine or host of the profile (repeatable).")


def apply(f: Callable[..., Any], options: list[Callable[[Any], Any]]) -> Callable[..., Any]:
    for option in reversed(options):
        f = option(f)
    return f
