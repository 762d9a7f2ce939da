"""Find the templates and bundled profiles, in a wheel or in a source checkout."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

_PKG = Path(__file__).resolve().parent


def _locate(name: str) -> Path:
    # A wheel carries the folders inside the package; an editable install reads the
    # top-level folders of the checkout (src/diskbench -> ../../name).
    for candidate in (_PKG / name, _PKG.parent.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"diskbench installation is missing its {name}/ folder")


def templates_dir() -> Path:
    return _locate("templates")


def profiles_dir() -> Path:
    return _locate("profiles")


def environment(template_dir: Path | None = None, *, html: bool = False) -> jinja2.Environment:
    """Strict templates (an undefined name is an error): job files verbatim, HTML escaped."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir or templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=html,
    )
