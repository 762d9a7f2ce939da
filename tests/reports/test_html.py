"""The HTML report: self-contained, and its charts really draw in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from diskbench.reports.html import build_report
from diskbench.store import Store

from ..conftest import REPO, diskbench
from ..synth import add_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = REPO / "test-artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]


def _runs(store: Store) -> list[str]:
    sweep = {f"mix-rwmixread{v}": {"param": "rwmixread", "value": v, "base": "mix"} for v in (100, 50, 0)}
    ids = []
    for day in range(3):
        jobs = {"sync": [20000 + day * 100], "async": [90000.0, 91000.0],
                **{name: [50000 + 300 * int(s["value"])] for name, s in sweep.items()}}  # type: ignore[call-overload]
        ids.append(add_run(store, day, jobs, sweep=sweep))
    return ids


def test_report_is_self_contained(db: Path, tmp_path: Path) -> None:
    store = Store(db)
    ids = _runs(store)
    html = build_report(store, ids[-1:])
    assert "<script src=" not in html and "<link" not in html
    assert not re.search(r"""(src|href)=["']?https?://""", html), "nothing may load from the network"
    for section in ('id="summary"', 'id="latency"', 'id="throughput"', 'id="sweeps"', 'id="mixes"', 'id="history"',
                    'id="metadata"', "<details><summary>profile</summary>", "rw=randread"):
        assert section in html, section
    out = diskbench("report", *ids, "--html", str(tmp_path / "r.html"), db=db)
    assert out.returncode == 0 and "wrote" in out.stderr
    assert (tmp_path / "r.html").read_text().count("<tr>") > 3 * 5


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_charts_draw_in_headless_chromium(db: Path, tmp_path: Path) -> None:
    store = Store(db)
    ids = _runs(store)
    page = tmp_path / "report.html"
    page.write_text(build_report(store, ids[-1:]))
    assert CHROMIUM is not None
    profile_dir = ["--user-data-dir=" + str(tmp_path / "chromium")]
    dom = subprocess.run([CHROMIUM, *FLAGS, *profile_dir, "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    console = [ln for ln in dom.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert not console, console
    drawn = int(re.search(r'data-charts="(\d+)"', dom.stdout).group(1))  # type: ignore[union-attr]
    # latency: sync, async, 3 sweep jobs; bars: the same 5; sweeps: 2; read/write mix: IOPS, MiB/s and
    # latency vs IOPS of the one rwmixread line; history: 5 jobs over 3 runs
    assert drawn == 5 + 5 + 2 + 3 + 5
    assert dom.stdout.count('class="uplot') == drawn
    assert dom.stdout.count("<canvas") >= drawn
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    subprocess.run([CHROMIUM, *FLAGS, *profile_dir, "--window-size=1300,2400", f"--screenshot={shot}",
                    page.as_uri()], capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 50_000
