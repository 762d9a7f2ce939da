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

    @property
    def ui(self) -> UI:
        if self._ui is None:
            from ..ui import UI

            self._ui = UI(quiet=self.quiet)
        return self._ui

    def store(self) -> Store:
        from ..store import Store

        return Store(self.db)

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
profile_option = click.option("--profile", "-p", "profile", required=True, metavar="NAME|FILE",
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
