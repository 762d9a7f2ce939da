"""fio's per-second interval logs -> Series: real fio runs, and the arithmetic on written logs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from diskbench.engines.fio.logs import attach_series, log_files, read_series
from diskbench.engines.fio.parse import parse_fio_output
from diskbench.engines.fio.render import render_fio
from diskbench.expand import build_plan
from diskbench.profile import load_profile

from ...conftest import needs_fio


def test_log_files_name_every_job_of_every_section() -> None:
    rendered = "[a]\nnumjobs=2\nwrite_iops_log=a\n[b]\nnumjobs=1\nwrite_iops_log=b\n"
    files = log_files(rendered)
    assert "a_iops.3.log" in files and "b_clat.1.log" in files and "a_bw.2.log" in files
    assert len(files) == 2 * 3 * 3


def test_jobs_are_summed_and_latency_weighted(tmp_path: Path) -> None:
    (tmp_path / "w_iops.1.log").write_text("1000, 100, 1, 0, 0\n2000, 100, 1, 0, 0\n")
    (tmp_path / "w_iops.2.log").write_text("1000, 300, 1, 0, 0\n2000, 100, 1, 0, 0\ncut")
    (tmp_path / "w_bw.1.log").write_text("1000, 400, 1, 0, 0\n2000, 400, 1, 0, 0\n")
    (tmp_path / "w_bw.2.log").write_text("1000, 1200, 1, 0, 0\n2000, 400, 1, 0, 0\n")
    (tmp_path / "w_clat.1.log").write_text("1000, 1000000, 1, 0, 0\n2000, 1000000, 1, 0, 0\n")
    (tmp_path / "w_clat.2.log").write_text("1000, 3000000, 1, 0, 0\n2000, 1000000, 1, 0, 0\n")
    s = read_series(tmp_path, "w")["write"]
    assert s.iops == [400, 200]
    assert s.bw_bytes_per_s == [1600 * 1024, 800 * 1024]
    assert s.lat_mean_us == [2500.0, 1000.0]  # (100 x 1 ms + 300 x 3 ms) / 400


@needs_fio
def test_a_measured_run_records_its_series(tmp_path: Path) -> None:
    plan = build_plan(load_profile("local"), target_dir=str(tmp_path))
    job = next(j for j in plan.units if j.workload.name == "randread-4k")
    w = job.workload.model_copy(update={"size": "8M", "runtime": "3s", "ramp_time": None, "time_based": True,
                                        "numjobs": 2, "ioengine": "psync"})
    from dataclasses import replace

    job = replace(job, workload=w)
    text = render_fio(job, str(tmp_path), logs=True)
    assert "log_avg_msec=1000" in text and "write_iops_log=randread-4k" in text
    assert "log_avg_msec" not in render_fio(job, str(tmp_path))
    (tmp_path / "job.fio").write_text(text)
    out = subprocess.run(["fio", "--output-format=json+", "--output=out.json", "job.fio"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    groups = parse_fio_output((tmp_path / "out.json").read_text())
    attach_series(tmp_path, groups)
    (read,) = groups[0].directions
    assert read.series is not None and 2 <= len(read.series.iops) <= 3  # fio samples late on a busy machine
    assert groups[0].cpu_pct is not None
    # fio's own per-second figures add up to about its total
    assert abs(sum(read.series.iops[:2]) / 2 - read.iops) < 0.5 * read.iops
