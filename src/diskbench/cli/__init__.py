"""The command line: a thin click layer over the library; commands are loaded when asked for.

``diskbench --help`` imports click and the small command modules only; providers add their own
commands (``sizes``) and ``run`` options (``--subscription``) without the CLI naming them.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from typing import Any

import click

from .. import __version__
from .app import App

# command name -> (module, attribute), in the order --help lists them
CORE: dict[str, tuple[str, str]] = {
    "run": ("run", "run"), "plan": ("run", "plan"), "render": ("run", "render_cmd"),
    "resume": ("run", "resume"), "latency": ("run", "latency"), "cleanup": ("cleanup", "cleanup"),
    "runs": ("results", "runs"), "show": ("results", "show"), "import": ("results", "import_cmd"),
    "profiles": ("results", "profiles"), "profile-schema": ("results", "profile_schema"),
    "doctor": ("results", "doctor"), "explain": ("explain", "explain"),
    "report": ("reports", "report"), "compare": ("reports", "compare_cmd"), "history": ("reports", "history_cmd"),
    "gate": ("reports", "gate_cmd"), "accept": ("reports", "accept"),
}


def _provider_commands() -> dict[str, click.Command]:
    from .. import registry

    out: dict[str, click.Command] = {}
    for provider in registry.providers.all():
        for command in provider.commands():
            out[command.name or ""] = command
    return out


class LazyGroup(click.Group):
    """Imports a command's module only when the command is listed or run."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*CORE, *(n for n in _provider_commands() if n not in CORE)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in CORE:
            module, attr = CORE[name]
            command: click.Command = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
            return command
        return _provider_commands().get(name)


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

        click.echo(f"error: {printable(str(exc), keep_newlines=True)}", err=True)
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
