"""The command line: a thin click layer over the library; commands are loaded when asked for.

``diskbench --help`` imports click and the small command modules only; providers add their own
commands (``sizes``) and ``run`` options (``--subscription``) without the CLI naming them.
"""

from __future__ import annotations

import errno
import importlib
import logging
import os
import sys
from typing import Any

import click

from ..version import __version__
from .app import App

# command name -> (module, attribute), in the order --help lists them
CORE: dict[str, tuple[str, str]] = {
    "run": ("run", "run"), "plan": ("run", "plan"), "render": ("run", "render_cmd"),
    "resume": ("run", "resume"), "latency": ("run", "latency"), "cleanup": ("cleanup", "cleanup"),
    "runs": ("results", "runs"), "show": ("results", "show"), "import": ("results", "import_cmd"),
    "profiles": ("results", "profiles"), "profile-schema": ("results", "profile_schema"),
    "doctor": ("results", "doctor"), "explain": ("explain", "explain"),
    "report": ("reports", "report"), "compare": ("reports", "compare_cmd"), "history": ("reports", "history_cmd"),
    "gate": ("reports", "gate_cmd"), "accept": ("reports", "accept"), "store": ("store", "store"),
}


def _provider_commands() -> dict[str, click.Command]:
    from .. import registry

    out: dict[str, click.Command] = {}
    for provider in registry.providers.all():
        for command in provider.commands():
            out[command.name or ""] = command
    return out


class LazyGroup(click.Group):
    """Imports a command's module only when the command is listed or run; every command takes
    ``-q`` too (``diskbench run -q`` as well as ``diskbench -q run``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*CORE, *(n for n in _provider_commands() if n not in CORE)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in CORE:
            module, attr = CORE[name]
            command: click.Command | None = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
        else:
            command = _provider_commands().get(name)
        if command is not None:
            _with_quiet(command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command's whole first sentence, wrapped under it (click cuts them at 45 characters)."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=1000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _quiet(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.ensure_object(App).quiet = True


def _with_quiet(command: click.Command) -> None:
    """``-q/--quiet`` on ``command`` (and a group's subcommands), once."""
    for sub in command.commands.values() if isinstance(command, click.Group) else ():
        _with_quiet(sub)
    if not any(p.name == "quiet" for p in command.params):
        command.params.append(click.Option(["--quiet", "-q"], is_flag=True, expose_value=False, callback=_quiet,
                                           help="No progress lines (as diskbench -q)."))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="diskbench")
@click.option("--db", envvar="DISKBENCH_DB", metavar="PATH",
              help="Result store (SQLite). Default: the user data dir; env DISKBENCH_DB.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@click.pass_context
def cli(ctx: click.Context, db: str | None, quiet: bool) -> None:
    """Benchmark storage: profile -> plan -> run -> parse -> store -> report."""
    ctx.obj = App(db, quiet)


# The machine's state, not a bug: a full or read-only disk, permissions, too many open files.
ENVIRONMENT_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO,
                      errno.EMFILE, errno.ENFILE)


def _red(text: str) -> str:
    """``text`` in red on a terminal that wants colour (not with NO_COLOR, not in CI or a pipe)."""
    from ..ui import color

    return click.style(text, fg="red", bold=True) if color(sys.stderr) else text


def _internal(exc: BaseException, debug: bool) -> None:
    """A bug in diskbench: the traceback with DISKBENCH_DEBUG=1, else one line and exit 70."""
    from ..errors import Exit

    if debug:
        raise exc
    click.echo(f"error: internal error: {type(exc).__name__}: {exc} "
               "(set DISKBENCH_DEBUG=1 to see the traceback, and please report it)", err=True)
    sys.exit(Exit.SOFTWARE)


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors as one line, tracebacks only with DISKBENCH_DEBUG=1."""
    from ..errors import DiskbenchError, Exit

    debug = os.environ.get("DISKBENCH_DEBUG") == "1"
    if not debug:  # the clouds' SDKs log their own retries and credential chains: diskbench says what matters
        logging.getLogger().setLevel(logging.CRITICAL)  # every library logger that set no level of its own
    try:
        rv: Any = cli.main(args=argv, prog_name="diskbench", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("error: aborted", err=True)
        sys.exit(Exit.INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except DiskbenchError as exc:
        if debug:
            raise
        from ..text import printable

        click.echo(f"{_red('error:')} {printable(str(exc), keep_newlines=True)}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        sys.exit(Exit.INTERRUPTED)
    except OSError as exc:
        if debug or exc.errno not in ENVIRONMENT_ERRNOS:
            _internal(exc, debug)
        where = f": {exc.filename}" if exc.filename else ""
        click.echo(f"error: {exc.strerror}{where} (free space or fix the permissions there, then try again; "
                   "`diskbench resume RUN` finishes an interrupted run)", err=True)
        sys.exit(Exit.FAILED)
    except Exception as exc:  # noqa: BLE001 - the last line of defence for users
        _internal(exc, debug)
    sys.exit(rv if isinstance(rv, int) else 0)
