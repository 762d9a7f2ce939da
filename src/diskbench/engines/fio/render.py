"""fio job files from Jinja templates: strict, deterministic, one reporting group per file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from . import __version__
from .model import PERCENTILES
from .plan import PlannedJob
from .profile import Workload
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


def environment(template_dir: Path | None = None, *, html: bool = False) -> jinja2.Environment:
    """Strict templates; fio job files verbatim, HTML escaped."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir or templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=html,
    )
    env.filters["fio_bool"] = _fio_bool
    env.filters["fio_value"] = _fio_value
    return env


def precondition_workload(w: Workload) -> Workload:
    """Write the whole working set once, sequentially in large blocks (same job name and files)."""
    return w.model_copy(update={"rw": "write", "bs": "1M", "iodepth": 32, "ioengine": "libaio",
                                "time_based": False, "runtime": None, "ramp_time": None,
                                "rate_iops": None, "rwmixread": None, "extra": {}})


def warmup_workload(w: Workload, seconds: float) -> Workload:
    """Read the working set for ``seconds`` to fill a host read cache (same files)."""
    return w.model_copy(update={"rw": "read", "bs": "256k", "iodepth": 32, "ioengine": "libaio",
                                "time_based": True, "runtime": f"{seconds:g}s", "ramp_time": None,
                                "rate_iops": None, "rwmixread": None, "extra": {}})


def job_filename(job: PlannedJob) -> str:
    return f"{job.seq:02d}-{job.slug}.fio"


def render_fio(job: PlannedJob, directory: str | None, env: jinja2.Environment | None = None, *,
               filename: str | None = None, workload: Workload | None = None) -> str:
    """The job file for ``job`` in ``directory`` (or on the raw device ``filename``).

    Same input, same bytes. ``workload`` replaces the job's own, for preparation passes that
    must touch the very files the measured job uses.
    """
    env = env or environment()
    return env.get_template(FIO_TEMPLATE).render(
        version=__version__,
        profile=job.profile,
        workload=workload or job.workload,
        target_label=job.target_label,
        directory=directory,
        filename=filename,
        jobfile=job_filename(job),
        percentile_list=":".join(f"{p:g}" for p in PERCENTILES),
    )
