"""DiskSpd ``-Rxml`` results (versions 2.0.21a, 2.1 and 2.2) -> RunData.

Elements are optional by design: ``<Latency>`` only with -L, ``<Iops>`` only with -D, and
read/write figures only for a direction that had samples. DiskSpd writes paths into the XML
without escaping, so a bare ``&`` in a path is repaired before parsing.

Every number is checked (``values.number``/``count``: finite, 0..2^64, whole where it counts),
and against its neighbours: ``IOCount``/``BytesCount`` are the sums of the read and write
figures, a direction has no bytes without I/Os, and the latency points of a direction
rise from the minimum (percentile 0) to the maximum (100) with the average between them.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from diskbench.errors import ParseError

from .results import ENGINE, DirLatency, DirSeries, Row, RunData, pooled
from .values import count, digits, ms_to_us, number, percentile_key

_BARE_AMP = re.compile(r"&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9A-Fa-f]+);)")
# DiskSpd 2.2 writes the power scheme's name into an attribute unescaped, and "<unknown>" when it
# cannot read one (Common.h: SystemInformation): seen from DiskSpd 2.2.0 under Wine, which has no
# power schemes, and possible on any Windows whose power service does not answer.
_POWER_NAME = re.compile(r'(<PowerScheme Name=")([^"\n]*)(" Guid=")')
_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
_XML_DIRS = {"read": "Read", "write": "Write", "total": "Total"}
MIN_SECONDS = 0.01  # DiskSpd prints the test time to 0.01 s: a measured one is never less
_ROUNDING_US = 1.0  # DiskSpd prints latencies in ms with 3 decimals: each figure is within 0.5 µs


def _text(el: ET.Element, tag: str) -> str | None:
    child = el.find(tag)
    return None if child is None or child.text is None else child.text.strip()


def _number(el: ET.Element, tag: str, where: str) -> float | None:
    value = _text(el, tag)
    return None if value is None else number(value, f"{where}: <{tag}>")


def _count(el: ET.Element, tag: str, where: str) -> int | None:
    value = _text(el, tag)
    return None if value is None else count(value, f"{where}: <{tag}>")


def _required(el: ET.Element, tag: str, where: str) -> float:
    value = _number(el, tag, where)
    if value is None:
        raise ParseError(f"{where}: <{tag}> is missing")
    return value


def _required_count(el: ET.Element, tag: str, where: str) -> int:
    value = _count(el, tag, where)
    if value is None:
        raise ParseError(f"{where}: <{tag}> is missing")
    return value


def _int_text(el: ET.Element, tag: str) -> int | str | None:
    value = _text(el, tag)
    return int(value) if value is not None and digits(value) else value


def _bool(el: ET.Element | None, tag: str) -> bool | None:
    value = None if el is None else _text(el, tag)
    return None if value is None else value.lower() == "true"


def document(text: str) -> ET.Element:
    """The ``<Results>`` element of ``text`` (notes: what was repaired or ignored)."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ParseError("DiskSpd XML never has a DOCTYPE or entities; refusing to parse this one")
    start = text.find("<Results")
    body = _DECL.sub("", text[start:] if start >= 0 else text)
    body = _POWER_NAME.sub(lambda m: m[1] + m[2].replace("<", "&lt;") + m[3], body)  # ">" is legal there
    body = _BARE_AMP.sub("&amp;", body)
    end = body.rfind("</Results>")
    if end >= 0:
        body = body[: end + len("</Results>")]
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise ParseError(f"not well-formed DiskSpd XML ({exc}); the file may be truncated") from None
    if root.tag != "Results":
        what = " (a DiskSpd profile, as -Rp prints it: it holds no results)" if root.tag == "Profile" else ""
        raise ParseError(f"the root element is <{root.tag}>, not DiskSpd's <Results>{what}")
    return root


@dataclass
class _ProfileSpan:
    latency: bool | None
    iops_stddev: bool | None
    bucket_ms: float
    block_sizes: list[tuple[str, int]]
    facts: dict[str, Any]


def _profile_spans(root: ET.Element) -> list[_ProfileSpan]:
    spans = []
    for ts in root.findall("Profile/TimeSpans/TimeSpan"):
        targets = [(_text(t, "Path") or "", _count(t, "BlockSize", "<Profile> <Target>") or 0)
                   for t in ts.findall("Targets/Target")]
        bucket = _number(ts, "IoBucketDuration", "<Profile>") or 1000.0
        facts = {k: _int_text(ts, tag) for k, tag in (("duration_s", "Duration"), ("warmup_s", "Warmup"),
                                                   ("cooldown_s", "Cooldown"), ("thread_count", "ThreadCount"),
                                                   ("rand_seed", "RandSeed"))}
        spans.append(_ProfileSpan(_bool(ts, "MeasureLatency"), _bool(ts, "CalculateIopsStdDev"),
                                  bucket, targets, facts))
    return spans


def _rows(ts: ET.Element, where: str) -> list[Row]:
    rows = []
    for thread in ts.findall("Thread"):
        tid = _required_count(thread, "Id", f"{where} <Thread>")
        for target in thread.findall("Target"):
            w = f"{where} thread {tid} <Target>"
            path = _text(target, "Path")
            if path is None:
                raise ParseError(f"{w}: <Path> is missing")
            row = Row(tid, path, _required_count(target, "ReadCount", w), _required_count(target, "ReadBytes", w),
                      _required_count(target, "WriteCount", w), _required_count(target, "WriteBytes", w))
            _check_counts(target, row, w)
            rows.append(row)
    if not rows:
        raise ParseError(f"{where}: no <Thread>/<Target> counters")
    return rows


def _check_counts(target: ET.Element, row: Row, where: str) -> None:
    """A target's counters agree as DiskSpd keeps them: totals are sums, and bytes come only from
    I/Os (not the converse: an I/O may complete with no bytes)."""
    for tag, ios, nbytes in (("Read", row.read_ios, row.read_bytes), ("Write", row.write_ios, row.write_bytes)):
        if ios == 0 and nbytes:
            raise ParseError(f"{where}: <{tag}Count> is 0 but <{tag}Bytes> is {nbytes}")
    for tag, parts in (("IOCount", (row.read_ios, row.write_ios)), ("BytesCount", (row.read_bytes, row.write_bytes))):
        total = _count(target, tag, where)
        if total is not None and total != sum(parts):
            raise ParseError(f"{where}: <{tag}> is {total}, not the sum of its read and write figures ({sum(parts)})")


def _latency(lat: ET.Element, where: str) -> dict[str, DirLatency]:
    points: dict[str, dict[str, float]] = {d: {} for d in _XML_DIRS}
    for bucket in lat.findall("Bucket"):
        label = _text(bucket, "Percentile")
        if label is None:
            raise ParseError(f"{where} <Latency>: a <Bucket> has no <Percentile>")
        if number(label, f"{where} <Latency> <Bucket>: <Percentile>") > 100:
            raise ParseError(f"{where} <Latency> <Bucket>: <Percentile> is {label}, above 100")
        for d, tag in _XML_DIRS.items():
            value = _number(bucket, f"{tag}Milliseconds", f"{where} <Latency>")
            if value is not None:
                points[d][label] = ms_to_us(value)
    averages = {"read": ("AverageReadMilliseconds", "ReadLatencyStdev"),
                "write": ("AverageWriteMilliseconds", "WriteLatencyStdev"),
                "total": ("AverageTotalMilliseconds", "LatencyStdev")}
    out = {}
    for d, (avg_tag, sd_tag) in averages.items():
        avg = _number(lat, avg_tag, f"{where} <Latency>")
        if avg is None:
            continue
        p = points[d]
        pct = {percentile_key(label): v for label, v in p.items() if 0.0 < float(label) < 100.0}
        out[d] = DirLatency(mean=ms_to_us(avg), stdev=ms_to_us(_number(lat, sd_tag, f"{where} <Latency>") or 0.0),
                            min=p.get("0"), max=p.get("100"), percentiles=pct)
        check_points(p, out[d].mean, f"{where} <Latency> {_XML_DIRS[d]}")
    return out


def check_points(points: dict[str, float], mean: float, where: str) -> None:
    """DiskSpd's latency points (µs, by percentile label) rise with the percentile, and the mean
    lies between the lowest and the highest (each printed to 1 µs: ``_ROUNDING_US`` either way)."""
    ordered = [points[k] for k in sorted(points, key=float)]
    for low, high in zip(ordered, ordered[1:], strict=False):
        if high < low:
            raise ParseError(f"{where}: the latency percentiles fall ({low:g} µs, then {high:g} µs)")
    if ordered and not ordered[0] - _ROUNDING_US <= mean <= ordered[-1] + _ROUNDING_US:
        raise ParseError(f"{where}: the average latency ({mean:g} µs) is outside its minimum and maximum "
                         f"({ordered[0]:g}..{ordered[-1]:g} µs)")


_Bucket = tuple[float, float | None, float | None, float | None]  # iops, avg, min, max latency (µs)


def _attribute(b: ET.Element, name: str) -> float:
    return number(b.get(name, "0"), f"<Iops> <Bucket> {name}")


def _buckets(iops: ET.Element, with_latency: bool) -> dict[str, list[_Bucket]]:
    out: dict[str, list[_Bucket]] = {"read": [], "write": [], "total": []}
    for b in iops.findall("Bucket"):
        parts: dict[str, _Bucket] = {}
        for d, tag in (("read", "Read"), ("write", "Write")):
            rate = _attribute(b, tag)
            if with_latency and rate > 0:
                avg, low, high = (ms_to_us(_attribute(b, f"{tag}{k}LatencyMilliseconds"))
                                  for k in ("Avg", "Min", "Max"))
                parts[d] = (rate, avg, low, high)
            else:
                parts[d] = (rate, None, None, None)
        out["read"].append(parts["read"])
        out["write"].append(parts["write"])
        out["total"].append(_merge_buckets([parts["read"], parts["write"]]))
    return out


def _merge_buckets(parts: list[_Bucket]) -> _Bucket:
    rate = sum(p[0] for p in parts)
    timed = [p for p in parts if p[0] > 0 and p[1] is not None]
    if not timed:
        return (rate, None, None, None)
    avg = sum(p[0] * (p[1] or 0.0) for p in timed) / sum(p[0] for p in timed)
    return (rate, round(avg, 3), min(p[2] or 0.0 for p in timed), max(p[3] or 0.0 for p in timed))


def _series(columns: list[list[_Bucket]]) -> DirSeries:
    """One direction's series, summed over several threads' bucket lists."""
    length = max((len(c) for c in columns), default=0)
    merged = [_merge_buckets([c[i] for c in columns if i < len(c)]) for i in range(length)]
    mins = [b[2] for b in merged if b[2] is not None]
    maxs = [b[3] for b in merged if b[3] is not None]
    lat = [b[1] for b in merged]
    return DirSeries(iops=[b[0] for b in merged], lat_mean_us=lat if any(v is not None for v in lat) else None,
                     lat_min_us=min(mins) if mins else None, lat_max_us=max(maxs) if maxs else None)


def _target_figures(ts: ET.Element, with_latency: bool) -> tuple[dict[str, dict[str, DirLatency]],
                                                                    dict[str, dict[str, DirSeries]]]:
    """Per-target mean/stdev latency (pooled over threads) and per-second series."""
    lat_parts: dict[str, dict[str, list[tuple[int, float, float]]]] = {}
    series_parts: dict[str, dict[str, list[list[_Bucket]]]] = {}
    tags = {"read": ("ReadCount", "AverageReadLatencyMilliseconds", "ReadLatencyStdev"),
            "write": ("WriteCount", "AverageWriteLatencyMilliseconds", "WriteLatencyStdev"),
            "total": ("IOCount", "AverageLatencyMilliseconds", "LatencyStdev")}
    for target in ts.findall("Thread/Target"):
        path = _text(target, "Path") or ""
        where = f"<Thread> <Target> {path[:60]!r}"
        for d, (count_tag, avg_tag, sd_tag) in tags.items():
            avg = _number(target, avg_tag, where)
            if avg is not None:
                ios = _count(target, count_tag, where) or 0
                sd = _number(target, sd_tag, where) or 0.0
                lat_parts.setdefault(path, {}).setdefault(d, []).append((ios, ms_to_us(avg), ms_to_us(sd)))
        iops = target.find("Iops")
        if iops is not None:
            for d, column in _buckets(iops, with_latency).items():
                series_parts.setdefault(path, {}).setdefault(d, []).append(column)
    lats = {path: {d: DirLatency(*pooled(parts)) for d, parts in by_dir.items()}
            for path, by_dir in lat_parts.items()}
    series = {path: {d: _series(cols) for d, cols in by_dir.items()} for path, by_dir in series_parts.items()}
    return lats, series


def _system_facts(root: ET.Element) -> dict[str, Any]:
    system = root.find("System")
    if system is None:
        return {}
    topo = system.find("ProcessorTopology")
    groups = [] if topo is None else topo.findall("Group")
    power = system.find("PowerScheme")
    return {
        "computer_name": _text(system, "ComputerName"),
        "version": _text(system, "Tool/Version"),
        "version_date": _text(system, "Tool/VersionDate"),
        "run_time": _text(system, "RunTime"),
        "power_scheme": None if power is None else power.get("Name"),
        "processors": sum(count(g.get("ActiveProcessors", "0"), "<ProcessorTopology> <Group> ActiveProcessors")
                          for g in groups) or None,
        "processor_groups": len(groups) or None,
        "heterogeneous_cores": None if topo is None else topo.get("Heterogeneous"),
    }


def _run(ts: ET.Element, index: int, span: _ProfileSpan | None, system: dict[str, Any]) -> RunData:
    where = f"<TimeSpan> {index + 1}"
    error = _text(ts, "Error")
    if error:
        raise ParseError(f"DiskSpd reported: {error}")
    seconds = _required(ts, "TestTimeSeconds", where)
    if seconds <= 0:
        raise ParseError(f"{where}: <TestTimeSeconds> is {seconds:g}: no measured time")
    if seconds < MIN_SECONDS:
        raise ParseError(f"{where}: <TestTimeSeconds> is {seconds:g}, less than DiskSpd's 0.01 s resolution")
    rows = _rows(ts, where)
    lat_el = ts.find("Latency")
    latency = None if lat_el is None else _latency(lat_el, where)
    with_latency = latency is not None
    iops_el = ts.find("Iops")
    target_lat, target_series = _target_figures(ts, with_latency)
    block_sizes: dict[str, int] = {}
    if span is not None:
        paths = list(dict.fromkeys(r.path for r in rows))
        sizes = [bs for _, bs in span.block_sizes]
        if len(sizes) == len(paths):  # template targets (*1) were substituted in order
            block_sizes = dict(zip(paths, sizes, strict=True))
    run = RunData(engine=ENGINE, version=system.get("version") or "unknown", seconds=seconds, rows=rows,
                  latency=latency, target_latency=target_lat, block_sizes=block_sizes,
                  interval_s=(span.bucket_ms if span else 1000.0) / 1000.0,
                  hosts=[system["computer_name"]] if system.get("computer_name") else [])
    if iops_el is not None:
        run.series = {d: _series([col]) for d, col in _buckets(iops_el, with_latency).items()}
        run.target_series = target_series
    return run


def parse_xml(text: str) -> tuple[list[RunData], dict[str, Any]]:
    """Runs (one per result timespan) and facts of a DiskSpd XML document."""
    root = document(text)
    system = _system_facts(root)
    spans = _profile_spans(root)
    timespans = root.findall("TimeSpan")
    if not timespans:
        raise ParseError("no <TimeSpan> results in the DiskSpd XML")
    runs = [_run(ts, i, spans[i] if i < len(spans) else None, system) for i, ts in enumerate(timespans)]
    profile = root.find("Profile")
    facts: dict[str, Any] = {"format": "xml", **system, "command_line": None,
                             "test_time_seconds": [r.seconds for r in runs],
                             "targets": runs[0].paths(), "block_sizes": runs[0].block_sizes}
    if spans:
        facts.update(spans[0].facts)
        facts["measure_latency"] = spans[0].latency
        facts["iops_interval_ms"] = int(spans[0].bucket_ms) if spans[0].iops_stddev else None
    usage = root.find("TimeSpan/CpuUtilization/Average/UsagePercent")
    facts["cpu_usage_percent"] = (number(usage.text, "<CpuUtilization> <Average> <UsagePercent>")
                                  if usage is not None and usage.text else None)
    facts["profile_xml"] = ET.tostring(profile, encoding="unicode") if profile is not None else None
    return runs, facts
