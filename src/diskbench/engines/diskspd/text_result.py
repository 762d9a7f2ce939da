"""DiskSpd text results (Windows ``-Rtext`` 2.0 to 2.2, and diskspd-for-linux) -> RunData.

Text is read by its headers, not by fixed positions: the optional columns (AvgLat, IopsStdDev,
LatStdDev) come in a different order on Linux, and both the 2.0/2.1 (``total:``) and the 2.2
(``Total latency distribution:``) chart headings occur. Every number must have the exact form
DiskSpd prints (``%.2f`` rates, ``%.3f`` latencies), so a file cut in the middle of a figure is
an error rather than a smaller figure. Several runs in one file (pasted outputs) are read in turn.

Every figure is also checked as a number (finite, within DiskSpd's 64-bit counters) and against
its neighbours: a thread's 'Total IO' row is its read and write rows added, a latency table
rises from 'min' to 'max', and each printed rate ('I/O per s', 'MiB/s') is its count over the
printed test time, within the rounding of both. IOPS are DiskSpd's own printed figures (the
test time it prints is rounded to 10 ms, so recomputing them from it would differ).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from diskbench.errors import ParseError

from .results import ENGINE, LINUX_ENGINE, NO_SERIES, TEXT_NO_SERIES, DirLatency, Row, RunData, pooled
from .values import LARGEST, count, digits, ms_to_us, number, percentile_key, rate_bounds

RESULTS_RE = re.compile(r"^\s*Results for (timespan|job) (\d+):\s*$")
_RUN_START = re.compile(r"^\s*(Command Line:|Input parameters:|System info(rmation)?:|Results for (timespan|job) )")
_SECTIONS = ("Total IO", "Read IO", "Write IO")
_COLUMNS = {"thread": "thread", "bytes": "bytes", "I/Os": "ios", "MiB/s": "mibps", "MB/s": "mibps",
            "I/O per s": "iops", "AvgLat": "avg_lat", "AvgLat(ms)": "avg_lat", "IopsStdDev": "iops_stddev",
            "LatStdDev": "lat_stddev", "file": "file"}
_FORMATS = {name: re.compile(pattern) for name, pattern in {
    "thread": r"\d+", "bytes": r"\d+", "ios": r"\d+", "mibps": r"\d+\.\d\d", "iops": r"\d+\.\d\d",
    "avg_lat": r"\d+\.\d{3}", "iops_stddev": r"\d+\.\d\d", "lat_stddev": r"\d+\.\d{3}|N/A"}.items()}
_CHART_HEADER = re.compile(r"^\s*%-ile\s*\|")
_CHART_ROW = re.compile(r"^\s*(min|\d+th|\d-nines|max)\s*\|(.*)$")
_LAT_CELL = re.compile(r"^(\d+\.\d{3}|N/A)$")
_DASHES = re.compile(r"^-{10,}\s*$")
_FILE_CELL = re.compile(r"^(.*) \(([^()]*)\)$")
_HEADER_FACTS = {key: re.compile(pattern, re.IGNORECASE) for key, pattern in {
    "command_line": r"Command Line: (.*)", "duration_s": r"duration: (\d+)s", "warmup_s": r"warm up time: (\d+)s",
    "cooldown_s": r"cool down time: (\d+)s", "iops_interval_ms": r"gathering IOPS at intervals of (\d+)ms",
    "rand_seed": r"random seed: (\d+)", "computer_name": r"computer name: (.*)", "start_time": r"start time: (.*)",
    "processors": r"(?:cpu|processor) count:\s*(\d+)", "cores": r"core count:\s*(\d+)",
    "processor_groups": r"group count:\s*(\d+)", "numa_nodes": r"node count:\s*(\d+)",
    "sockets": r"socket count:\s*(\d+)", "heterogeneous_cores": r"heterogeneous cores:\s*(\S+)",
    "power_scheme": r"active power scheme:\s*(.*)",
}.items()}
_UNITS = {"B": 1, "": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}
_COUNTS = ("thread", "bytes", "ios")
_DIRECTION_SECTIONS = {"read": "Read IO", "write": "Write IO", "total": "Total IO"}
# How far a printed rate may be from its count over the printed test time. Within the rounding
# of the two (time to 10 ms on Windows; diskspd-for-linux divides by the whole seconds it prints,
# exactly; rates to 0.01) the file is as DiskSpd wrote it: every complete real output here
# (tests/fixtures/diskspd) is. Beyond the rounding but within this share, the printed figures
# are kept with a note: the largest such deviation is 0.16% beyond the rounding (0.26% from the
# count over the printed 5.00 s: IOPS of VirtualClient's DiskSpdExample-WriteOnly-v2.2.0-
# MultiNumaMultiGroup_TRIMMED.txt, which its publishers cut down by hand). Beyond 1% the
# figures contradict each other: an error.
_RATE_SLACK = 0.01
RATES_NOTE = ("DiskSpd's printed rates differ from its I/O counts over its printed test time by more than "
              "their rounding (up to {worst:.2%}): the file may have been edited; the printed IOPS are kept")


@dataclass
class _Section:
    columns: list[str]
    rows: list[dict[str, str]]  # per thread row: column -> cell text
    total: dict[str, str]


@dataclass
class _Header:
    facts: dict[str, Any] = field(default_factory=dict)
    targets: list[str] = field(default_factory=list)
    block_sizes: dict[str, int] = field(default_factory=dict)
    sizes_with_units: bool = False  # 2.1+ print "4KiB", 2.0 printed "4096"


def _header(lines: list[str]) -> _Header:
    head = _Header()
    for raw in lines:
        line = raw.strip()
        for key, pattern in _HEADER_FACTS.items():
            m = pattern.fullmatch(line)
            if m and key not in head.facts:
                value = m.group(1).strip()
                head.facts[key] = int(value) if digits(value) else value
        if line == "measuring latency":
            head.facts["measure_latency"] = True
        if m := re.fullmatch(r"path: '(.*)'", line):
            head.targets.append(m.group(1))
        elif (m := re.fullmatch(r"block size: (\d+)\s*(B|KiB|MiB|GiB|TiB)?", line)) and head.targets:
            size = count(m.group(1), "'block size'") * _UNITS[m.group(2) or ""]
            if size > LARGEST:
                raise ParseError(f"'block size: {m.group(1)[:30]}' is larger than any DiskSpd block")
            head.block_sizes[head.targets[-1]] = size
            head.sizes_with_units = head.sizes_with_units or m.group(2) is not None
    return head


def _cells(text: str, names: list[str], where: str) -> dict[str, str]:
    values = [c.strip() for c in text.split("|", len(names) - 1)]
    if len(values) != len(names):
        raise ParseError(f"{where}: a row has {len(values)} columns, the header {len(names)} (truncated?)")
    out = dict(zip(names, values, strict=True))
    for name, value in out.items():
        fmt = _FORMATS.get(name)
        if fmt and not fmt.fullmatch(value):
            raise ParseError(f"{where}: {value[:30]!r} is not a DiskSpd {name} figure (truncated?)")
        if name in _COUNTS:
            count(value, f"{where}: {name}")
        elif fmt and value != "N/A":
            number(value, f"{where}: {name}")
    return out


def _section(lines: list[str], start: int, name: str) -> _Section:
    where = f"'{name}' section"
    if start + 2 >= len(lines) or "|" not in lines[start + 1]:
        raise ParseError(f"{where} has no column header (truncated?)")
    try:
        columns = [_COLUMNS[c.strip()] for c in lines[start + 1].split("|")]
    except KeyError as exc:
        raise ParseError(f"{where}: unknown column {exc.args[0]!r}") from None
    if columns[0] != "thread" or columns[-1] != "file":
        raise ParseError(f"{where}: the header does not start with 'thread' and end with 'file'")
    rows, i = [], start + 3
    while i < len(lines) and not _DASHES.match(lines[i]):
        if not lines[i].strip():
            raise ParseError(f"{where} ends before its total row (truncated?)")
        rows.append(_cells(lines[i], columns, where))
        i += 1
    if i + 1 >= len(lines) or not lines[i + 1].lstrip().startswith("total:"):
        raise ParseError(f"{where} has no total row (truncated?)")
    total = _cells(lines[i + 1].lstrip()[len("total:"):], columns[1:-1], f"{where} total row")
    return _Section(columns, rows, total)


def _nines(label: str) -> str:
    if label.endswith("th"):
        return label[:-2]
    return "99." + "9" * (int(label[0]) - 2)


def _chart(lines: list[str], start: int) -> dict[str, dict[str, float]]:
    """Chart rows from the ``%-ile`` header at ``start``: direction -> label -> µs."""
    out: dict[str, dict[str, float]] = {"read": {}, "write": {}, "total": {}}
    i, labels = start + 2, []
    while i < len(lines) and (m := _CHART_ROW.match(lines[i])):
        cells = [c.strip() for c in m.group(2).split("|")]
        if len(cells) != 3 or not all(_LAT_CELL.match(c) for c in cells):
            raise ParseError(f"latency distribution row {lines[i].strip()!r} is incomplete (truncated?)")
        labels.append(m.group(1))
        for d, cell in zip(("read", "write", "total"), cells, strict=True):
            if cell != "N/A":
                value = ms_to_us(number(cell, f"latency distribution row {m.group(1)!r}"))
                if out[d] and value < max(out[d].values()):
                    raise ParseError(f"latency distribution row {m.group(1)!r}: {cell} ms is below the row above "
                                     "(DiskSpd's percentiles rise)")
                out[d][m.group(1)] = value
        i += 1
    if not labels or labels[0] != "min" or labels[-1] != "max":
        raise ParseError("a latency distribution table ends before its 'max' row (truncated?)")
    return out


def _chart_owner(lines: list[str], start: int) -> str | None:
    """None for the whole run's chart, else the target path its heading names."""
    j = start - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    heading = lines[j].strip() if j >= 0 else ""
    if m := re.fullmatch(r"Latency distribution: (.+)", heading):
        return m.group(1).strip()
    if heading in ("Total latency distribution:", "total:") or heading.startswith("total:") or "|" in heading:
        return None
    return heading or None  # 2.0/2.1: a bare path line before each per-target chart


def _dir_latency(points: dict[str, float], mean: str | None, stdev: str | None) -> DirLatency | None:
    if not points or mean is None or stdev in (None, "N/A"):
        return None
    pct = {percentile_key(_nines(k)): v for k, v in points.items() if k not in ("min", "max")}
    return DirLatency(mean=ms_to_us(float(mean)), stdev=ms_to_us(float(stdev or 0)), min=points.get("min"),
                      max=points.get("max"), percentiles=pct)


def _row_path(cell: str) -> str:
    m = _FILE_CELL.match(cell)
    return m.group(1) if m else cell


def _rows(sections: dict[str, _Section]) -> list[Row]:
    reads, writes, totals = sections["Read IO"].rows, sections["Write IO"].rows, sections["Total IO"].rows
    if not len(reads) == len(writes) == len(totals):
        raise ParseError("the 'Total IO', 'Read IO' and 'Write IO' sections have different numbers of rows")
    for t, r, w in zip(totals, reads, writes, strict=True):
        _check_sum(t, r, w, f"thread {t['thread']} of the 'Total IO' section")
    _check_sum(sections["Total IO"].total, sections["Read IO"].total, sections["Write IO"].total,
               "the 'Total IO' total row")
    return [Row(int(r["thread"]), _row_path(r["file"]), int(r["ios"]), int(r["bytes"]), int(w["ios"]),
                int(w["bytes"]), rates={"read": float(r["iops"]), "write": float(w["iops"]), "total": float(t["iops"])})
            for t, r, w in zip(totals, reads, writes, strict=True)]


def _check_sum(total: dict[str, str], read: dict[str, str], write: dict[str, str], where: str) -> None:
    for key in ("ios", "bytes"):
        if int(total[key]) != int(read[key]) + int(write[key]):
            raise ParseError(f"{where}: {key} {total[key]} is not the read and write rows' {read[key]} + {write[key]}")


def _rate_deviation(sections: dict[str, _Section], seconds: float, linux: bool) -> float:
    """How far, beyond their rounding, the printed rates are from their counts over the printed
    time (0: not at all); an error beyond ``_RATE_SLACK``."""
    time_step = 0.0 if linux else 0.01
    worst = 0.0
    for name, section in sections.items():
        for row in [*section.rows, section.total]:
            for key, events in (("iops", int(row["ios"])), ("mibps", int(row["bytes"]) / 2**20)):
                low, high = rate_bounds(events, seconds, time_step, 0.01)
                printed = float(row[key])
                off = max(low - printed, printed - high, 0.0) / max(printed, low, 1e-9)
                if off > _RATE_SLACK:
                    raise ParseError(f"'{name}' section, thread {row.get('thread', 'total')}: {key} {row[key]} is "
                                     f"not its count over the test time ({low:.2f}..{high:.2f})")
                worst = max(worst, off)
    return worst


def _target_mean(sections: dict[str, _Section], path: str, name: str) -> tuple[str, str] | None:
    rows = [r for r in sections[name].rows if _row_path(r["file"]) == path and r.get("lat_stddev") not in (None, "N/A")]
    if not rows:
        return None
    mean, sd = pooled([(int(r["ios"]), float(r["avg_lat"]), float(r["lat_stddev"])) for r in rows])
    return f"{mean:.3f}", f"{sd:.3f}"


def _latencies(lines: list[str], sections: dict[str, _Section]) -> tuple[dict[str, DirLatency],
                                                                        dict[str, dict[str, DirLatency]]]:
    charts = {_chart_owner(lines, i): _chart(lines, i) for i, ln in enumerate(lines) if _CHART_HEADER.match(ln)}
    if None not in charts:
        raise ParseError("latency was measured but the latency distribution table is missing (truncated?)")
    names = {"read": "Read IO", "write": "Write IO", "total": "Total IO"}
    run = {d: lat for d, name in names.items()
           if (lat := _dir_latency(charts[None][d], sections[name].total.get("avg_lat"),
                                   sections[name].total.get("lat_stddev"))) is not None}
    per_target: dict[str, dict[str, DirLatency]] = {}
    for path, chart in charts.items():
        if path is None:
            continue
        for d, name in names.items():
            figures = _target_mean(sections, path, name)
            if figures and (lat := _dir_latency(chart[d], *figures)) is not None:
                per_target.setdefault(path, {})[d] = lat
    return run, per_target


def _find(lines: list[str], title: str) -> int:
    for i, line in enumerate(lines):
        if line.strip() == title:
            return i
    raise ParseError(f"no '{title}' section (truncated?)")


def _seconds(lines: list[str], linux: bool) -> float:
    pattern = r"test time:\s*(\d+)s" if linux else r"actual test time:\s*(\d+\.\d\d)s"
    for line in lines:
        if m := re.fullmatch(pattern, line.strip()):
            return number(m.group(1), "the test time")
    raise ParseError(f"no '{'test time' if linux else 'actual test time'}' line (truncated?)")


def _cpu_usage(lines: list[str]) -> float | None:
    for line in lines:
        if re.match(r"^\s*avg[.:]", line) and (m := re.search(r"(\d+\.\d\d)%", line)):
            return number(m.group(1), "the CPU 'avg.' row")
    return None


def _run(block: list[str], head: _Header, linux: bool) -> tuple[RunData, dict[str, Any]]:
    seconds = _seconds(block, linux)
    if seconds <= 0:
        raise ParseError("the test time is 0 s: nothing was measured")
    sections = {name: _section(block, _find(block, name), name) for name in _SECTIONS}
    rows = _rows(sections)
    worst = _rate_deviation(sections, seconds, linux)
    totals = {d: (int(sections[n].total["ios"]), int(sections[n].total["bytes"]))
              for d, n in (("read", "Read IO"), ("write", "Write IO"))}
    has_lat = "avg_lat" in sections["Total IO"].columns
    has_d = "iops_stddev" in sections["Total IO"].columns or "iops_interval_ms" in head.facts
    run = RunData(engine=LINUX_ENGINE if linux else ENGINE, version="unknown", seconds=seconds, rows=rows,
                  totals=totals, block_sizes=dict(head.block_sizes),
                  hosts=[head.facts["computer_name"]] if head.facts.get("computer_name") else [],
                  series_note=TEXT_NO_SERIES if has_d else NO_SERIES,
                  total_rates={d: float(sections[n].total["iops"]) for d, n in _DIRECTION_SECTIONS.items()})
    if worst > 0:
        run.notes.append(RATES_NOTE.format(worst=worst))
    if has_lat:
        run.latency, run.target_latency = _latencies(block, sections)
    if linux:
        run.notes.append("diskspd-for-linux divides by the requested duration ('test time'), not a measured one")
        if has_lat and len(rows) > 1:
            run.total_percentiles_exact = False
            run.notes.append("diskspd-for-linux over-counts earlier threads in its 'Total' percentiles when "
                             "several threads ran; read and write percentiles are right")
    facts = {**head.facts, "format": "text", "layout": _layout(block, head, linux), "test_time_seconds": seconds,
             "targets": head.targets or run.paths(), "block_sizes": run.block_sizes,
             "thread_count": len({r.thread for r in rows}), "cpu_usage_percent": _cpu_usage(block)}
    return run, facts


def _layout(block: list[str], head: _Header, linux: bool) -> str:
    """A guess at DiskSpd's version: text output carries none."""
    if linux:
        return "diskspd-for-linux"
    if "power_scheme" in head.facts or any(ln.strip() == "Total latency distribution:" for ln in block):
        return "windows 2.2"
    if head.sizes_with_units:
        return "windows 2.1"
    return "windows 2.0/2.1"


def _blocks(lines: list[str]) -> list[tuple[list[str], list[str], bool]]:
    """(header lines, results lines, linux?) for each 'Results for' heading."""
    heads = [i for i, ln in enumerate(lines) if RESULTS_RE.match(ln)]
    out, prev_end = [], 0
    for h in heads:
        end = h + 1
        while end < len(lines) and not _RUN_START.match(lines[end]):
            end += 1
        m = RESULTS_RE.match(lines[h])
        out.append((lines[prev_end:h], lines[h + 1:end], bool(m and m.group(1) == "job")))
        prev_end = end
    if heads and prev_end < len(lines):
        raise ParseError(f"the DiskSpd run starting at line {prev_end + 1} has no results (truncated?)")
    return out


def parse_text(text: str) -> tuple[list[RunData], dict[str, Any]]:
    """Runs and facts of DiskSpd text output (one run per 'Results for' section)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks = _blocks(lines)
    if not blocks:
        if any(ln.strip() == "Input parameters:" for ln in lines):
            raise ParseError("the DiskSpd text has its input parameters but no 'Results for' section "
                             "(the run did not finish, or the file is truncated)")
        raise ParseError("no DiskSpd 'Results for timespan' section found")
    runs, all_facts, head = [], [], _Header()
    for header_lines, block, linux in blocks:
        if any(_RUN_START.match(ln) for ln in header_lines):
            head = _header(header_lines)
        run, facts = _run(block, head, linux)
        runs.append(run)
        all_facts.append(facts)
    facts = dict(all_facts[0])
    if len(all_facts) > 1:
        facts["runs"] = all_facts
    return runs, facts
