"""MkDocs hooks: the command reference, generated from the click command tree, and CONTRIBUTING.md as a page.

``docs/commands.md`` holds the hand-written parts; the line ``<!-- command reference -->`` in it
is replaced by every command of ``diskbench.cli:cli`` (the core commands and those providers
add, such as ``sizes``), each with its usage, arguments and every option as ``--help`` shows it.
``CONTRIBUTING.md`` at the top of the repository becomes the page ``contributing.md``, its links
into ``docs/`` pointing at the pages.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

MARKER = "<!-- command reference -->"
ROOT = Path(__file__).resolve().parents[2]


def command_tree(prog: str = "diskbench") -> Iterator[tuple[str, click.Command, click.Context]]:
    """(``diskbench run``, its command, its context) for the group and every command below it, in
    the order ``--help`` lists them."""
    from diskbench.cli import cli

    def walk(command: click.Command, ctx: click.Context, path: str) -> Iterator[tuple[str, click.Command,
                                                                                   click.Context]]:
        if command.hidden:
            return
        yield path, command, ctx
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None:
                    sub_ctx = click.Context(sub, info_name=name, parent=ctx, **sub.context_settings)
                    yield from walk(sub, sub_ctx, f"{path} {name}")

    yield from walk(cli, click.Context(cli, info_name=prog, **cli.context_settings), prog)


def _text(s: str) -> str:
    """Help text as Markdown: ``<`` and ``>`` escaped outside code spans (``Standard_<FAMILY>``)."""
    parts = s.split("`")
    return "`".join(html.escape(p, quote=False) if i % 2 == 0 else p for i, p in enumerate(parts))


def _code(s: str) -> str:
    return f"``{s}``" if "`" in s else f"`{s}`"


def reference() -> str:
    """The reference in Markdown: one section per command."""
    out: list[str] = []
    for path, command, ctx in command_tree():
        top = " " not in path
        out.append(f"### {'Global options' if top else path}\n")
        help_text = (command.help or "").split("\f")[0]
        out.append(_text(re_wrap(help_text)) + "\n")
        pieces = " ".join(command.collect_usage_pieces(ctx))
        out.append(f"```text\nUsage: {ctx.command_path} {pieces}\n```\n")
        arguments = [p for p in command.params if isinstance(p, click.Argument)]
        if arguments:
            out.append("Arguments: " + ", ".join(
                _code(p.human_readable_name) + ("" if p.required else " (optional)")
                for p in arguments) + ".\n")
        options = [r for p in command.get_params(ctx)
                   if isinstance(p, click.Option) and (r := p.get_help_record(ctx)) is not None]
        if options:
            out.append("Options:\n")
            out.extend(f"- {_code(opts)}: {_text(help_) if help_ else ''}".rstrip() for opts, help_ in options)
            out.append("")
        if isinstance(command, click.Group) and not top:
            names = command.list_commands(ctx)
            out.append("Subcommands: " + ", ".join(f"`{path} {n}`" for n in names) + ".\n")
    return "\n".join(out)


def re_wrap(text: str) -> str:
    """click's help paragraphs joined into lines (``\\b`` paragraphs kept as they are)."""
    import inspect

    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p.replace("\b\n", "") if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


# --- the hooks ------------------------------------------------------------------------------------
def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    files.append(File.generated(config, "contributing.md", content=(ROOT / "CONTRIBUTING.md").read_text()))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri == "commands.md":
        if MARKER not in markdown:
            raise ValueError(f"docs/commands.md lost its {MARKER!r} line")
        return markdown.replace(MARKER, reference())
    if page.file.src_uri == "contributing.md":
        return re.sub(r"\]\(docs/", "](", markdown)
    return markdown
