"""The files fio lays out for a job section (engines/fio/files.py), by name and size: what the free-space
check before a target's first job counts (runner/space.py). Sizes written from fio's documentation of
size, nrfiles, filesize, offset and offset_increment (checked against fio 3.33)."""

from __future__ import annotations

import pytest

from diskbench.engines.base import UnknownLayout
from diskbench.engines.fio.files import fio_files
from diskbench.profile import Workload

MIB = 1 << 20


def test_numjobs_jobs_of_nrfiles_files_share_the_size() -> None:
    files = fio_files(Workload(name="w", size="8M", numjobs=2, extra={"nrfiles": 4}))
    assert files == {f"w.{j}.{n}": 2 * MIB for j in (0, 1) for n in range(4)}


def test_filesize_takes_the_top_of_its_range_and_a_plain_offset_adds_to_each_file() -> None:
    assert fio_files(Workload(name="w", size="8M", extra={"nrfiles": 2, "filesize": "1M-3M"})) == \
        {"w.0.0": 3 * MIB, "w.0.1": 3 * MIB}  # fio picks each size within the range
    assert fio_files(Workload(name="w", size="4M", extra={"offset": "2M"})) == {"w.0.0": 6 * MIB}
    assert fio_files(Workload(name="w", size="4M", extra={"offset": "25%"})) == {"w.0.0": 4 * MIB}
    assert fio_files(Workload(name="w", size="4M", numjobs=2, extra={"offset_increment": "1M"})) == \
        {"w.0.0": 4 * MIB, "w.1.0": 5 * MIB}


def test_a_diskless_ioengine_lays_out_nothing() -> None:
    assert fio_files(Workload(name="w", size="8M", ioengine="null")) == {}


@pytest.mark.parametrize("extra", [{"fill_fs": 1}, {"file_append": "true"}, {"nrfiles": "many"},
                                   {"filesize": "big"}, {"offset": "far"}])
def test_a_layout_that_cannot_be_told_beforehand_is_said(extra: dict[str, object]) -> None:
    with pytest.raises(UnknownLayout, match="workload w"):
        fio_files(Workload(name="w", size="8M", extra=extra))
