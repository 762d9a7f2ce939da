"""Find the templates and bundled profiles, in a wheel or in a source checkout.

Each user of templates has a folder of its own under templates/ (an engine's job files, the HTML
report) and gets a strict Jinja environment over it here, the one place that knows where
templates/ is.
"""

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


def environment(folder: str | Path, *, escape: bool = False) -> jinja2.Environment:
    """Strict templates (an undefined name is an error) from ``templates/FOLDER`` (a Path: that folder
    itself); ``escape`` for HTML and XML (paths and names may hold & < > ' "), else verbatim."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder if isinstance(folder, Path) else templates_dir() / folder)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=escape,
    )
