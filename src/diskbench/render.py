"""A profile's job files, written to read or to run by hand (``diskbench render``).

Each unit's job file as its engine renders it for a run, with the target's folder where the
profile names one, and ``${DISKBENCH_TARGET}`` where only the run would know it (a scratch folder,
a device diskbench would prepare): the file's first comment says how to run it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import registry
from .engines.base import BY_HAND_TARGET, Place
from .errors import UsageError
from .plan import Plan


@dataclass
class Rendered:
    files: list[Path]
    placeholder: bool  # some file needs DISKBENCH_TARGET set to a folder on the disk to measure


def render_by_hand(plan: Plan, folder: Path) -> Rendered:
    """Write every unit's job file into ``folder`` (made if need be)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {folder}: cannot create the folder: {exc.strerror}",
                         hint="name a folder you can write to") from None
    written: list[Path] = []
    placeholder = False
    for unit in plan.units:
        engine = registry.engines.get(unit.engine)
        places = []
        for job in unit.jobs:
            directory = getattr(job.target, "dir", None)
            placeholder |= directory is None
            places.append(Place(job.workload, job.target_label, directory or BY_HAND_TARGET))
        path = folder / f"{unit.seq:02d}-{unit.slug}{engine.job_suffix}"
        try:
            path.write_text(engine.render(unit, places, purpose="by-hand"), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--out {folder}: cannot write {path.name}: {exc.strerror}") from None
        written.append(path)
    return Rendered(written, placeholder)
