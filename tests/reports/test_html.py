"""The HTML report: self-contained, every chart with a legend and values, and it fits 1400 and
800 px in headless Chromium with no console error. (The verdict box, overlays, history labels
and save links: test_report_cases.py and test_report_browser.py.)"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from diskbench.reports.html import build_report
from diskbench.reports.svg import nines
from diskbench.store import Store

from ..conftest import REPO, diskbench
from ..synth import add_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = REPO / "test-artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]
# Appended to a copy of the report in the test only: the page's own script only saves charts.
PROBE = """<script>
window.addEventListener("load", function () {
  var figs = Array.prototype.slice.call(document.querySelectorAll("figure.chart"));
  var bad = figs.filter(function (f) {
    var legend = f.querySelector("ul.legend li, .bv");
    return !legend || !/\\d/.test(legend.textContent);
  }).map(function (f) { return f.querySelector("figcaption").textContent; });
  var wide = document.documentElement.scrollWidth > window.innerWidth;
  document.body.setAttribute("data-probe", JSON.stringify({charts: figs.length, unlabelled: bad,
    overflow: wide, width: window.innerWidth, scroll: document.documentElement.scrollWidth}));
});
</script>"""


def _runs(store: Store) -> list[str]:
    sweep = {f"mix-rwmixread{v}": {"param": "rwmixread", "value": v, "base": "mix"} for v in (100, 50, 0)}
    ids = []
    for day in range(4):
        jobs = {"sync": [20000 + day * 100], "async": [90000.0, 91000.0, 86000.0 + day],
                **{name: [50000 + 300 * int(s["value"])] for name, s in sweep.items()}}  # type: ignore[call-overload]
        ids.append(add_run(store, day, jobs, sweep=sweep))
    return ids


def test_nines_axis() -> None:
    assert [round(nines(p), 6) for p in (90, 99, 99.9, 99.99)] == [1, 2, 3, 4]


def test_report_is_self_contained_and_leaves_out_empty_sections(db: Path, tmp_path: Path) -> None:
    store = Store(db)
    ids = _runs(store)
    html = build_report(store, ids[-1:])
    assert html.count("<script") == 1 and "<script>" in html and "<link" not in html  # inline: save links only
    assert not re.search(r"""(src|href)=["']?https?://""", html), "nothing may load from the network"
    assert not re.search(r"fetch\(|XMLHttpRequest|import\(|https?://(?!www\.w3\.org/2000/svg)", html)
    for section in ('id="summary"', 'id="latency"', 'id="throughput"', 'id="sweeps"', 'id="mixes"',
                    'id="history"',
                    'id="metadata"', "<details><summary>profile</summary>", "rw=randread"):
        assert section in html, section
    assert "drawn" not in html and ">0.00<" not in html
    assert "400 µs" in html and "gate band" in html and 'class="wh"' in html  # units, band, whiskers
    plain = add_run(store, 9, {"solo": [100.0]}, testbed="other")
    lonely = build_report(store, [plain], with_history=False)
    assert 'id="sweeps"' not in lonely and 'id="history"' not in lonely and 'id="histogram"' not in lonely
    out = diskbench("report", *ids, "--html", str(tmp_path / "r.html"), db=db)
    assert out.returncode == 0 and "wrote" in out.stderr
    assert (tmp_path / "r.html").read_text().count("<tr>") > 3 * 5


def test_histogram_from_json_plus_bins(db: Path, fio_fixtures: Path) -> None:
    out = diskbench("import", str(fio_fixtures / "randread-4k-numjobs4-group-reporting.jsonplus.json"),
                    "--format", "json", db=db)
    run_id = __import__("json").loads(out.stdout)["run"]["id"]
    html = build_report(Store(db), [run_id])
    assert 'id="histogram"' in html and "latency histogram" in html and "I/Os, most at" in html


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("width", [1400, 800])
def test_report_fits_and_every_chart_has_values_in_chromium(db: Path, tmp_path: Path, fio_fixtures: Path,
                                                            width: int) -> None:
    import json

    store = Store(db)
    ids = _runs(store)
    imported = json.loads(diskbench("import", str(fio_fixtures / "randread-4k-numjobs4-group-reporting.jsonplus.json"),
                                    "--format", "json", db=db).stdout)["run"]["id"]
    html = build_report(store, [*ids[-3:], imported])
    page = tmp_path / "report.html"
    page.write_text(html.replace("</body>", PROBE + "</body>"))
    assert CHROMIUM is not None
    profile_dir = ["--user-data-dir=" + str(tmp_path / "chromium")]
    dom = subprocess.run([CHROMIUM, *FLAGS, *profile_dir, f"--window-size={width},1000", "--dump-dom",
                          page.as_uri()], capture_output=True, text=True, timeout=120)
    console = [ln for ln in dom.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert not console, console
    found = re.search(r"data-probe=\"([^\"]*)\"", dom.stdout)
    assert found, dom.stdout[-2000:]
    probe = json.loads(found.group(1).replace("&quot;", '"'))
    # latency: 5 jobs + 1 import; histogram: the import; bars: 6; sweeps: 2 and mixes: 3, every run on
    # each; history: 2 per job
    assert probe["charts"] >= 6 + 1 + 6 + 2 + 3 + 10, probe
    assert probe["unlabelled"] == [], probe
    assert not probe["overflow"], probe
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"report-{width}.png"
    subprocess.run([CHROMIUM, *FLAGS, *profile_dir, f"--window-size={width},2400", f"--screenshot={shot}",
                    (tmp_path / "report.html").as_uri()], capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 30_000


def test_time_series_charts_when_the_engine_logged_them() -> None:
    from diskbench.model import DirectionResult, Series
    from diskbench.reports.timeline import series_charts
    from diskbench.store import StoredResult

    series = Series(1.0, [1000.0, 1200.0, 900.0, 1100.0], [4096e3, 4915e3, 3686e3, 4505e3],
                    [250.0, 210.0, None, 230.0], "fio iops log")
    d = DirectionResult("read", 1050, 4.3e6, 4200, 4200 * 4096, 4.0, None, series)
    raw = [StoredResult("r", "local/scratch/a", "a", "scratch", "local", "fio", "3.33", 1, d)]
    charts = series_charts([{"id": "r"}], {"r": raw})
    assert len(charts) == 3 and "IOPS over time" in charts[0] and "min 900, max 1,200" in charts[0]
    assert "MiB/s over time" in charts[1] and "mean latency" in charts[2] and "250 µs" in charts[2]


def test_log_axis_ticks_never_crowd() -> None:
    from diskbench.reports.svg import log_ticks

    assert log_ticks(15, 8000) == [50, 100, 500, 1000, 5000]  # decades: 1 and 5
    assert log_ticks(340, 460) == [350, 375, 400, 425, 450]  # narrow: plain steps
    assert all(3 <= len(log_ticks(lo, lo * f)) <= 7 for lo in (0.7, 12, 300) for f in (2, 10, 100, 1e4))
