"""fio job files from Jinja templates: strict, deterministic, one reporting group per job.

A unit with one job renders as before: its target in ``[global]`` and one job section. A unit
with several jobs (sections) gives each its own ``directory=`` and its own reporting group
(``new_group``), so fio reports every job, and diskbench can merge them exactly from the bins.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

import jinja2

from ...errors import ProfileError
from ...model import PERCENTILES
from ...resources import environment
from ...text import control_char, printable, shown
from ...version import __version__
from ..base import BY_HAND_TARGET, Place

if TYPE_CHECKING:
    from ...plan import Unit

FIO_TEMPLATE = "job.ini.j2"  # in templates/fio/


def _fio_bool(value: Any) -> str:
    return "1" if value else "0"


def _fio_value(value: Any) -> str:
    """An option's value as one line of a job file (profiles refuse control characters already;
    this is the last guard before fio reads the file as root)."""
    if isinstance(value, bool):
        return _fio_bool(value)
    text = str(value)
    bad = control_char(text)
    if bad:
        raise ProfileError(f"the fio option value {shown(text)} contains {bad}; a job file takes one line per option")
    if "${" in text:
        raise ProfileError(f"the fio option value {shown(text)} holds ${{...}}, which fio would replace with an "
                           "environment variable (a path with it would send I/O elsewhere)",
                           hint="rename the folder, or give the value without ${")
    return text


def _fio_path(value: Any) -> str:
    """A file or directory for ``filename=`` / ``directory=``: fio splits these at ':' (several
    files), so a colon in a path is escaped as fio asks (``\\:``)."""
    if value == BY_HAND_TARGET:  # the one ${...} diskbench writes: `render` for running by hand
        return BY_HAND_TARGET
    return _fio_value(value).replace(":", "\\:")


def _fio_comment(value: Any) -> str:
    """Free text (a description) as comment lines: every line of it starts with ``; ``."""
    return "\n; ".join(printable(line) for line in str(value).splitlines())


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """One environment per process: it compiles the template once, not once per job file (a
    scale-out unit renders one per client: 32 compiles cost the controller 0.3 s per job)."""
    return _with_filters(environment("fio"))


def _with_filters(env: jinja2.Environment) -> jinja2.Environment:
    from .logs import log_prefix

    env.filters.update(fio_bool=_fio_bool, fio_value=_fio_value, fio_path=_fio_path, fio_comment=_fio_comment,
                       log_prefix=log_prefix)
    return env


def job_filename(job: Unit) -> str:
    return f"{job.seq:02d}-{job.slug}.fio"


def render_fio(job: Unit, places: list[Place] | str | None, env: jinja2.Environment | None = None, *,
               filename: str | None = None, by_hand: bool = False, logs: bool = False) -> str:
    """The job file for ``job`` on its prepared ``places`` (a directory for a one-job unit works too).

    Same input, same bytes. A place's workload may differ from the job's own (preparation
    passes touch the very files the measured job uses). ``logs``: per-second interval logs (the measured run).
    """
    if places is None or isinstance(places, str):
        places = [Place(job.workload, job.target_label, places, filename)]
    env = _environment() if env is None else _with_filters(env)
    return env.get_template(FIO_TEMPLATE).render(
        version=__version__,
        profile=job.profile,
        workload=places[0].workload if len(places) == 1 else job.workload,
        target_label=job.target_label,
        places=places,
        jobfile=job_filename(job),
        percentile_list=":".join(f"{p:g}" for p in PERCENTILES),
        by_hand=by_hand, env_target=any(p.directory == BY_HAND_TARGET for p in places),
        logs=logs,
    )
