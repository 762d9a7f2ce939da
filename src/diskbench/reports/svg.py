"""Charts as static SVG and HTML, drawn here rather than by a script in the page.

A chart that needs a hover to show its numbers hides them from a screenshot, a printout and a
reviewer skimming a CI artifact; so every chart carries an HTML legend with the values, scales
with the page (no fixed pixel width, no horizontal overflow at 800 px), and draws with
JavaScript off. Axis labels are placed so none is clipped: the plot area leaves room for them.
Each figure carries "save as SVG / PNG" links, hidden until the page's one small script shows
them (without JavaScript there is no dead link); the script draws title, chart and legend into
one standalone image.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

from ..units import latency, sig3

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
W, H = 560, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 12, 44
DASHES = ("", "6 3", "2 3", "8 3 2 3")  # solid, dashed, dotted, dash-dot: one per repetition of a line


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def num(v: float) -> str:
    """A count for axes and legends: 16,734; 1.2M for axis ticks only where space is short."""
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return sig3(v) if v else "0"


def short(v: float) -> str:
    """Axis tick text: 20k, 1.5M, 250."""
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:g}{unit}"
    return f"{v:g}"


def nines(p: float) -> float:
    """Percentile -> x on a "nines" axis: p90 -> 1, p99 -> 2, p99.9 -> 3 (HdrHistogram style)."""
    return -math.log10(max(1e-9, 1 - p / 100))


def linear_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if step * m >= raw)
    start = math.ceil(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step + 1e-9) + 1)]


def log_ticks(lo: float, hi: float) -> list[float]:
    lo, hi = max(lo, 1e-3), max(hi, lo * 1.0001)
    out: list[float] = []
    for exp in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0**exp
            if lo <= v <= hi:
                out.append(v)
    if len(out) > 7:  # wide: 1 and 5 of each decade, or only the 1s
        fives = [v for v in out if f"{v:e}"[0] in "15"]
        out = fives if len(fives) <= 7 else [v for v in out if f"{v:e}".startswith("1")]
    if len(out) < 3 and hi / lo < 4:  # a narrow range: plain steps read better than one lonely mark
        out = [t for t in linear_ticks(lo, hi, 5) if lo <= t <= hi]
    return out or [lo, hi]


@dataclass
class Axis:
    lo: float
    hi: float
    log: bool = False
    ticks: list[float] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def pos(self, v: float, a: float, b: float) -> float:
        if self.log:
            lo, hi, v = math.log10(self.lo), math.log10(self.hi), math.log10(max(v, self.lo))
        else:
            lo, hi = self.lo, self.hi
        return a + (b - a) * ((v - lo) / (hi - lo) if hi > lo else 0.5)


@dataclass
class Series:
    label: str
    points: list[tuple[float, float]]
    tips: list[str] = field(default_factory=list)
    legend: str = ""  # values shown next to the label
    step: bool = False
    dashed: bool = False
    color: str | None = None  # None: the palette's colour for the series' place in the chart
    dash: str = ""  # an SVG dash pattern (``DASHES``); overrides ``dashed``
    marks: list[str] = field(default_factory=list)  # a short text beside each point: which one it is

    def stroke(self, i: int) -> tuple[str, str]:
        """(colour, dash pattern) of the series drawn ``i``-th: its own, or the palette's."""
        return self.color or color(i), self.dash or ("4 3" if self.dashed else "")


def _frame(x: Axis, y: Axis, x_title: str, y_title: str) -> list[str]:
    x0, x1, y0, y1 = LEFT, W - RIGHT, H - BOTTOM, TOP
    out = [f'<rect x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}" fill="#fff" stroke="#ccc"/>']
    for v, text in zip(y.ticks, y.labels, strict=True):
        py = y.pos(v, y0, y1)
        out.append(f'<line x1="{x0}" x2="{x1}" y1="{py:.1f}" y2="{py:.1f}" stroke="#eee"/>'
                   f'<text x="{x0 - 4}" y="{py + 4:.1f}" text-anchor="end">{escape(text)}</text>')
    for v, text in zip(x.ticks, x.labels, strict=True):
        px = x.pos(v, x0, x1)
        anchor = "start" if px - x0 < 20 else "end" if x1 - px < 20 else "middle"
        out.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{y0}" y2="{y1}" stroke="#f2f2f2"/>'
                   f'<text x="{px:.1f}" y="{y0 + 16}" text-anchor="{anchor}">{escape(text)}</text>')
    out.append(f'<text x="{(x0 + x1) / 2:.0f}" y="{H - 6}" text-anchor="middle" class="t">{escape(x_title)}</text>')
    out.append(f'<text x="12" y="{(y0 + y1) / 2:.0f}" text-anchor="middle" class="t" '
               f'transform="rotate(-90 12 {(y0 + y1) / 2:.0f})">{escape(y_title)}</text>')
    return out


def _series(x: Axis, y: Axis, series: Sequence[Series]) -> list[str]:
    x0, x1, y0, y1 = LEFT, W - RIGHT, H - BOTTOM, TOP
    out = []
    for i, s in enumerate(series):
        c, dash = s.stroke(i)
        pts = [(x.pos(a, x0, x1), y.pos(b, y0, y1)) for a, b in s.points]
        if s.step and pts:
            path = [f"M{pts[0][0]:.1f},{y0}"]
            for (ax, ay), nxt in zip(pts, [*pts[1:], None], strict=True):
                end = nxt[0] if nxt else ax + 6
                path.append(f"L{ax:.1f},{ay:.1f}L{end:.1f},{ay:.1f}")
            path.append(f"L{pts[-1][0] + 6:.1f},{y0}")
            out.append(f'<path d="{"".join(path)}" fill="{c}" fill-opacity="0.12" '
                       f'stroke="{c}" stroke-width="1.5"/>')
            continue
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.8"{dashed} points="'
                   + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
        for j, (a, b) in enumerate(pts if s.tips else ()):  # markers where there is something to hover
            tip = f"<title>{escape(s.tips[j])}</title>" if j < len(s.tips) else ""
            out.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{c}">{tip}</circle>')
        out += _marks(pts, s.marks, c, x1)
    return out


def _marks(pts: Sequence[tuple[float, float]], marks: Sequence[str], c: str, right: float) -> list[str]:
    """Each point's own label (its read %, its queue depth) beside it: the legend cannot say which
    point of a curve is which when x is not the parameter."""
    out = []
    for (a, b), text in zip(pts, marks, strict=False):
        if not text:
            continue
        anchor, dx = ("end", -5) if right - a < 40 else ("start", 5)
        out.append(f'<text x="{a + dx:.1f}" y="{b - 5:.1f}" text-anchor="{anchor}" class="m" '
                   f'fill="{c}">{escape(text)}</text>')
    return out


def _swatch(c: str, dash: str = "") -> str:
    """A legend's colour key: a filled square, or a short line drawn as the series is (dashed)."""
    if dash:
        style = "dotted" if dash.startswith("2 ") else "dashed"
        return f'<span class="sw ln" style="border-top-color:{c};border-top-style:{style}"></span>'
    return f'<span class="sw" style="background:{c}"></span>'


def legend(items: Sequence[tuple[str, str, str]], dashes: Sequence[str] = ()) -> str:
    """HTML legend: (colour, label, values) per entry; always visible, wraps with the page."""
    rows = "".join(f'<li>{_swatch(c, dashes[i] if i < len(dashes) else "")}<b>{escape(label)}</b>'
                   f'{" " + escape(values) if values else ""}</li>' for i, (c, label, values) in enumerate(items))
    return f'<ul class="legend">{rows}</ul>'


def slug(title: str) -> str:
    """A file name for a saved chart: its title in lower case, words joined by dashes."""
    return re.sub(r"[^a-z0-9.]+", "-", title.lower()).strip("-.")[:80] or "chart"


def _open(title: str) -> str:
    """A figure's start: its caption, and the file name its saved image takes."""
    return f'<figure class="chart" data-name="{escape(slug(title))}"><figcaption>{escape(title)}</figcaption>'


SAVE_LINKS = ('<p class="save" hidden>save as <a href="#" data-save="svg" title="the chart with its legend, '
              'as an SVG file">SVG</a> · <a href="#" data-save="png" title="the chart with its legend, as a '
              'PNG image">PNG</a></p>')


def figure(title: str, svg_body: Sequence[str], legend_html: str, note: str = "") -> str:
    body = "".join(svg_body)
    note_html = f'<p class="note">{escape(note)}</p>' if note else ""
    return (f'{_open(title)}<svg viewBox="0 0 {W} {H}" role="img" aria-label="{escape(title)}">{body}</svg>'
            f"{legend_html}{note_html}{SAVE_LINKS}</figure>")


def line_chart(title: str, series: Sequence[Series], x: Axis, y: Axis, x_title: str, y_title: str,
               extra: Callable[[Axis, Axis], list[str]] | None = None, note: str = "",
               extra_legend: Sequence[tuple[str, str, str]] = ()) -> str:
    body = _frame(x, y, x_title, y_title)
    if extra:
        body += extra(x, y)
    body += _series(x, y, series)
    strokes = [s.stroke(i) for i, s in enumerate(series)]
    items = [(c, s.label, s.legend) for (c, _), s in zip(strokes, series, strict=True)] + list(extra_legend)
    return figure(title, body, legend(items, [d for _, d in strokes]), note)


def band(lo: float, hi: float, mid: float, label: str) -> Callable[[Axis, Axis], list[str]]:
    """A shaded horizontal band (the gate's limits) with a dashed line at its median."""

    def draw(x: Axis, y: Axis) -> list[str]:
        x0, x1, y0, y1 = LEFT, W - RIGHT, H - BOTTOM, TOP
        top, bottom = y.pos(min(max(hi, y.lo), y.hi), y0, y1), y.pos(min(max(lo, y.lo), y.hi), y0, y1)
        ym = y.pos(mid, y0, y1)
        return [f'<rect x="{x0}" y="{top:.1f}" width="{x1 - x0}" height="{max(bottom - top, 1):.1f}" '
                f'fill="#2ca02c" fill-opacity="0.12"><title>{escape(label)}</title></rect>',
                f'<line x1="{x0}" x2="{x1}" y1="{ym:.1f}" y2="{ym:.1f}" stroke="#2ca02c" stroke-dasharray="5 4"/>']

    return draw


def value_axis(values: Sequence[float], log: bool = False, fmt: Callable[[float], str] = short,
               zero: bool = True) -> Axis:
    vals = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]
    if not vals:
        vals = [1.0]
    lo, hi = min(vals), max(vals)
    if log:
        lo, hi = lo / 1.3, hi * 1.3
        ticks = log_ticks(lo, hi)
    else:
        lo = 0.0 if zero else lo - (hi - lo) * 0.1
        hi = hi * 1.1 if hi > 0 else 1.0
        ticks = [t for t in linear_ticks(lo, hi) if lo <= t <= hi]
    return Axis(lo, hi, log, ticks, [fmt(t) for t in ticks])


def latency_axis(values: Sequence[float]) -> Axis:
    axis = value_axis(values, log=True)
    axis.labels = [latency(t) for t in axis.ticks]
    return axis


@dataclass
class Bar:
    label: str
    value: float
    lo: float | None = None  # whisker: the smallest repetition
    hi: float | None = None  # ... and the largest
    text: str = ""  # the value as shown, with secondary figures


def bar_chart(title: str, bars: Sequence[Bar], unit: str, note: str = "") -> str:
    """Horizontal bars in HTML: labels wrap, values sit in text next to each bar, whiskers show
    the spread of repetitions (min to max), and it narrows with the page."""
    top = max([b.hi or b.value for b in bars] + [1e-9])
    rows = []
    for i, b in enumerate(bars):
        width = 100 * b.value / top
        whisker = ""
        if b.lo is not None and b.hi is not None and b.hi > b.lo:
            whisker = (f'<span class="wh" style="left:{100 * b.lo / top:.2f}%;'
                       f'width:{100 * (b.hi - b.lo) / top:.2f}%" title="repeats {num(b.lo)} to {num(b.hi)} {unit}">'
                       "</span>")
        rows.append(f'<div class="bar"><span class="bl">{escape(b.label)}</span><span class="bt">'
                    f'<span class="bf" style="width:{width:.2f}%;background:{color(i)}"></span>{whisker}</span>'
                    f'<span class="bv">{escape(b.text or num(b.value))}</span></div>')
    key = legend([("#444", "bar", f"median {unit}"), ("#000", "whisker", "smallest to largest repetition")]) \
        if any(b.lo is not None and b.hi is not None and b.hi > b.lo for b in bars) else ""
    note_html = f'<p class="note">{escape(note)}</p>' if note else ""
    return f'{_open(title)}<div class="bars">{"".join(rows)}</div>{key}{note_html}{SAVE_LINKS}</figure>'
