"""The report's cases in headless Chromium at 1400 and 800 px: the verdict box comes first, every
table cell fits the window, runs share their charts, history ticks differ, and every chart can be
saved as SVG and PNG (the page's own script, offline). Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

import html as htmllib
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from diskbench.reports.html import build_report
from diskbench.store import Store

from .report_cases import FOUR, add_series_run, failed, regressed
from .test_html import ARTIFACTS, CHROMIUM, FLAGS

# Appended to a copy of the report in the test only: it measures the page once it has loaded and
# writes what it found into the DOM, which --dump-dom brings back.
PROBE = """<script>
window.addEventListener("load", function () {
  var all = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };
  var vw = document.documentElement.clientWidth;
  var figs = all("figure.chart");
  var caption = function (f) { return f.querySelector("figcaption").textContent; };
  var probe = {
    first: document.querySelector("h1").nextElementSibling.id,
    verdictOnTop: all("h2").every(function (h) {
      return h.getBoundingClientRect().top >= document.getElementById("verdict").getBoundingClientRect().top; }),
    verdict: document.getElementById("verdict").innerText,
    outside: all("td, th").filter(function (c) { return c.getBoundingClientRect().right > vw + 0.5; })
      .map(function (c) { return c.textContent.slice(0, 40); }),
    overflow: document.documentElement.scrollWidth > vw,
    captions: figs.map(caption),
    unsaved: figs.filter(function (f) {
      var p = f.querySelector("p.save");
      return !p || p.hidden || !p.offsetParent || all("a[data-save]", p).length !== 2; }).map(caption),
    history: figs.filter(function (f) { return / by date$/.test(caption(f)); }).map(function (f) {
      return all("svg text[y='272']", f).map(function (t) { return t.textContent; }); })
  };
  if (!figs.length) {  // a run without results has no chart to save
    document.body.setAttribute("data-probe", JSON.stringify(probe));
    document.body.setAttribute("data-png", "none 0");
    return;
  }
  var doc = new DOMParser().parseFromString(window.diskbenchCharts.svg(figs[0]), "image/svg+xml");
  probe.svg = {ok: !doc.querySelector("parsererror"), texts: doc.querySelectorAll("text").length,
               height: Number(doc.documentElement.getAttribute("height"))};
  document.body.setAttribute("data-probe", JSON.stringify(probe));
  window.diskbenchCharts.png(figs[figs.length - 1]).then(function (blob) {
    document.body.setAttribute("data-png", blob.type + " " + blob.size);
  }, function (err) { document.body.setAttribute("data-png", "error " + err); });
});
</script>"""


def _two_runs(store: Store) -> tuple[list[str], bool]:
    return [add_series_run(store, day, {name: [5000.0 * (i + 1) + 300 * day] for i, name in enumerate(FOUR)})
            for day in (1, 2)], False


def _repeats(store: Store) -> tuple[list[str], bool]:
    reps = {name: [5000.0 * (i + 1) * f for f in (1.0, 1.06, 0.95)] for i, name in enumerate(FOUR)}
    return [add_series_run(store, 1, reps)], False


CASES: dict[str, Callable[[Store], tuple[list[str], bool]]] = {
    "failed": lambda store: ([failed(store)], True),
    "regressed": lambda store: ([regressed(store)], True),
    "repeats": _repeats,
    "two-runs": _two_runs,
    "failed-and-regressed": lambda store: ([regressed(store), failed(store, partial=True)], True),
}


def _chromium(tmp_path: Path, page: Path, width: int, *args: str,
              height: int = 1000) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on ``page`` with a profile folder of its own (no state shared between runs)."""
    assert CHROMIUM is not None
    profile = tmp_path / f"chromium-{width}-{len(list(tmp_path.iterdir()))}"
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                           "--virtual-time-budget=5000", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=180)


def _probe(tmp_path: Path, html: str, width: int) -> tuple[dict[str, Any], str]:
    """What PROBE found in the page at this width, and the PNG export's type and size."""
    page = tmp_path / f"probe-{width}.html"
    page.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = _chromium(tmp_path, page, width, "--dump-dom")
    console = [ln for ln in dom.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert not console, console
    found = re.search(r'data-probe="([^"]*)"', dom.stdout)
    png = re.search(r'data-png="([^"]*)"', dom.stdout)
    assert found and png, dom.stdout[-2000:]
    return json.loads(htmllib.unescape(found.group(1))), png.group(1)


def _check(case: str, probe: dict[str, Any]) -> None:
    """What each case must show, besides what every page must."""
    verdict = probe["verdict"]
    if case in ("failed", "failed-and-regressed"):
        assert "Permission denied" in verdict and "what to do:" in verdict, verdict
    if case in ("regressed", "failed-and-regressed"):
        for text in ("REGRESSED", "a read IOPS", "1,005 IOPS", "800 IOPS", "▼ -20.4%", "904 IOPS"):
            assert text in verdict, (text, verdict)
        assert probe["history"] and all(len(set(ticks)) == len(ticks) >= 2 for ticks in probe["history"])
    if case == "repeats":
        over_time = [c for c in probe["captions"] if c.endswith("over time")]
        assert len(over_time) == len(FOUR) * 3, over_time
    if case == "two-runs":  # one chart per job and metric (6 kinds), not one per run
        assert len(probe["captions"]) == len(FOUR) * 6 == len(set(probe["captions"])), probe["captions"]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("width", [1400, 800])
@pytest.mark.parametrize("case", list(CASES))
def test_report_case_in_chromium(db: Path, tmp_path: Path, case: str, width: int) -> None:
    store = Store(db)
    ids, with_history = CASES[case](store)
    html = build_report(store, ids, with_history=with_history)
    probe, png = _probe(tmp_path, html, width)
    assert probe["first"] == "verdict" and probe["verdictOnTop"], probe
    assert probe["outside"] == [] and not probe["overflow"], probe["outside"]
    assert probe["unsaved"] == [], probe["unsaved"]
    if case != "failed":  # a run without results has no chart
        assert probe["svg"]["ok"] and probe["svg"]["texts"] > 5 and probe["svg"]["height"] > 300, probe["svg"]
        kind, size = png.split()
        assert kind == "image/png" and int(size) > 10_000, png
    _check(case, probe)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"report-{case}-{width}.png"
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    _chromium(tmp_path, page, width, f"--screenshot={shot}", height=1600)
    assert shot.stat().st_size > 20_000
