"""fio job files from Jinja templates: strict, deterministic, one reporting group per file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from . import __version__
from .model import PERCENTILES
from .plan import PlannedJob
from .resources import templates_dir

FIO_TEMPLATE = "fio-job.ini.j2"


def _fio_bool(value: Any) -> str:
    return "1" if value else "0"


def _fio_value(value: Any) -> str:
    if isinstance(value, bool):
        return _fio_bool(value)
    text = str(value)
    if "\n" in text:
        raise ValueError(f"fio option value {text!r} spans lines")
    return text


def environment(template_dir: Path | None = None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir or templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["fio_bool"] = _fio_bool
    env.filters["fio_value"] = _fio_value
    return env


def job_filename(job: PlannedJob) -> str:
    return f"{job.seq:02d}-{job.slug}.fio"


def render_fio(job: PlannedJob, directory: str, env: jinja2.Environment | None = None) -> str:
    """The job file for ``job`` writing in ``directory``; same input, same bytes."""
    env = env or environment()
    return env.get_template(FIO_TEMPLATE).render(
        version=__version__,
        profile=job.profile,
        workload=job.workload,
        target_label=job.target_label,
        directory=directory,
        filename=job_filename(job),
        percentile_list=":".join(f"{p:g}" for p in PERCENTILES),
    )
