"""Paths of the vendored DiskSpd fixtures, and a DiskSpd 2.2 XML writer for cases no real file covers.

No public DiskSpd 2.2 ``-Rxml`` output exists (fixtures/diskspd/README.md); fixtures/diskspd-wine holds
real ones made here (DiskSpd 2.2.0 built from Microsoft's source, run under Wine: its README). None of
the real files has several targets; :func:`xml_2_2` writes documents in the 2.2 layout described in
fixtures/diskspd/SCHEMA-2.2.md (2-space indent, ``<Latency>`` bucket-count attributes,
Socket/Node/Core per CPU) from given counters.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "diskspd"
SHARED_CANDIDATES = (REPO.parent / "shared" / "fixtures" / "diskspd", Path("/work/shared/fixtures/diskspd"))

WINE = REPO / "tests" / "fixtures" / "diskspd-wine"  # real DiskSpd 2.2.0 -Rxml, the segments of one job
WINE_FILES = sorted(WINE.glob("*.xml"))
XML_FILES = sorted([*(FIXTURES / "windows" / "xml").glob("*.xml"), *WINE_FILES])
TEXT_FILES = sorted([*(FIXTURES / "windows" / "text").glob("*"), *(FIXTURES / "linux").glob("*")])
ALL_FILES = [*XML_FILES, *TEXT_FILES]


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def elementtree(text: str) -> ET.Element:
    """A DiskSpd XML result as ElementTree reads it, the oracle's reader: DiskSpd 2.2 writes the
    power scheme it cannot read as ``Name="<unknown>"``, unescaped (its Common.h; the Wine files),
    which this one literal replacement mends and nothing else touches."""
    return ET.fromstring(text.replace('<PowerScheme Name="<unknown>"', '<PowerScheme Name="&lt;unknown&gt;"'))


@dataclass
class Counters:
    thread: int
    path: str
    reads: int
    writes: int
    block: int = 4096
    read_ms: tuple[float, float] = (0.5, 0.1)  # average, stdev
    write_ms: tuple[float, float] = (1.0, 0.2)
    buckets: list[tuple[int, int]] = field(default_factory=list)  # per-second (read, write) IOPS


def _target_xml(c: Counters, latency: bool, pad: str) -> str:
    lines = [f"{pad}<Target>", f"{pad}  <Path>{c.path}</Path>",
             f"{pad}  <BytesCount>{(c.reads + c.writes) * c.block}</BytesCount>",
             f"{pad}  <FileSize>1073741824</FileSize>", f"{pad}  <IOCount>{c.reads + c.writes}</IOCount>",
             f"{pad}  <ReadBytes>{c.reads * c.block}</ReadBytes>", f"{pad}  <ReadCount>{c.reads}</ReadCount>",
             f"{pad}  <WriteBytes>{c.writes * c.block}</WriteBytes>", f"{pad}  <WriteCount>{c.writes}</WriteCount>"]
    if latency:
        if c.reads:
            lines += [f"{pad}  <AverageReadLatencyMilliseconds>{c.read_ms[0]:.3f}</AverageReadLatencyMilliseconds>",
                      f"{pad}  <ReadLatencyStdev>{c.read_ms[1]:.3f}</ReadLatencyStdev>"]
        if c.writes:
            lines += [f"{pad}  <AverageWriteLatencyMilliseconds>{c.write_ms[0]:.3f}</AverageWriteLatencyMilliseconds>",
                      f"{pad}  <WriteLatencyStdev>{c.write_ms[1]:.3f}</WriteLatencyStdev>"]
    if c.buckets:
        lines += [f"{pad}  <Iops>", *_buckets_xml(c.buckets, latency, c, pad + "    "), f"{pad}  </Iops>"]
    return "\n".join([*lines, f"{pad}</Target>"])


def _buckets_xml(buckets: list[tuple[int, int]], latency: bool, c: Counters | None, pad: str) -> list[str]:
    out = []
    for i, (r, w) in enumerate(buckets):
        rl = (c.read_ms[0] if c else 0.5) if latency and r else 0.0
        wl = (c.write_ms[0] if c else 1.0) if latency and w else 0.0
        out.append(f'{pad}<Bucket SampleMillisecond="{1000 * (i + 1)}" Read="{r}" Write="{w}" Total="{r + w}" '
                   f'ReadMinLatencyMilliseconds="{rl / 2:.3f}" ReadMaxLatencyMilliseconds="{rl * 3:.3f}" '
                   f'ReadAvgLatencyMilliseconds="{rl:.3f}" ReadLatencyStdDev="0.000" '
                   f'WriteMinLatencyMilliseconds="{wl / 2:.3f}" WriteMaxLatencyMilliseconds="{wl * 3:.3f}" '
                   f'WriteAvgLatencyMilliseconds="{wl:.3f}" WriteLatencyStdDev="0.000"/>')
    return out


def _latency_xml(percentiles: dict[str, tuple[float, float, float]]) -> list[str]:
    out = ['    <Latency ReadHistoBuckets="120" WriteHistoBuckets="80" TotalHistoBuckets="150">',
           "      <AverageReadMilliseconds>0.500</AverageReadMilliseconds>",
           "      <ReadLatencyStdev>0.100</ReadLatencyStdev>",
           "      <AverageWriteMilliseconds>1.000</AverageWriteMilliseconds>",
           "      <WriteLatencyStdev>0.200</WriteLatencyStdev>",
           "      <AverageTotalMilliseconds>0.700</AverageTotalMilliseconds>",
           "      <LatencyStdev>0.300</LatencyStdev>"]
    for label, (r, w, t) in percentiles.items():
        out += ["      <Bucket>", f"        <Percentile>{label}</Percentile>",
                f"        <ReadMilliseconds>{r:.3f}</ReadMilliseconds>",
                f"        <WriteMilliseconds>{w:.3f}</WriteMilliseconds>",
                f"        <TotalMilliseconds>{t:.3f}</TotalMilliseconds>", "      </Bucket>"]
    return [*out, "    </Latency>"]


def default_percentiles() -> dict[str, tuple[float, float, float]]:
    labels = ["0", *[str(p) for p in range(1, 100)], "99.9", "99.99", "99.999", "99.9999", "99.99999",
              "99.999999", "99.9999999", "100"]
    return {label: (0.1 + i / 100, 0.2 + i / 50, 0.1 + i / 60) for i, label in enumerate(labels)}


def xml_2_2(rows: list[Counters], *, seconds: float = 10.0, latency: bool = True, iops: bool = True,
            block_sizes: dict[str, int] | None = None, computer: str = "WIN-BENCH") -> str:
    """A DiskSpd 2.2 XML result document with these per-thread, per-target counters."""
    paths = list(dict.fromkeys(r.path for r in rows))
    sizes = block_sizes or {p: next(r.block for r in rows if r.path == p) for p in paths}
    profile_targets = "\n".join(
        f"          <Target>\n            <Path>{p}</Path>\n            <BlockSize>{sizes[p]}</BlockSize>\n"
        f"            <Random>{sizes[p]}</Random>\n            <RequestCount>32</RequestCount>\n"
        f"            <WriteRatio>30</WriteRatio>\n          </Target>" for p in paths)
    head = f"""<Results>
  <System>
    <ComputerName>{computer}</ComputerName>
    <Tool>
      <Version>2.2.0</Version>
      <VersionDate>2024/6/3</VersionDate>
    </Tool>
    <RunTime>2026/11/22 10:00:00 UTC</RunTime>
    <PowerScheme Name="Balanced" Guid="381b4222-f694-41f0-9685-ff5bb260df2e"/>
    <ProcessorTopology Heterogeneous="false">
      <Group Group="0" MaximumProcessors="4" ActiveProcessors="4" ActiveProcessorMask="0xf"/>
      <Node Node="0">
        <Group Group="0" Mask="0xf"/>
      </Node>
      <Socket Socket="0">
        <Group Group="0" Mask="0xf"/>
      </Socket>
      <Core Group="0" Core="0" Mask="0x3" EfficiencyClass="0"/>
      <Core Group="0" Core="1" Mask="0xc" EfficiencyClass="0"/>
    </ProcessorTopology>
  </System>
  <Profile>
    <Progress>0</Progress>
    <ResultFormat>xml</ResultFormat>
    <Verbose>false</Verbose>
    <TimeSpans>
      <TimeSpan>
        <CompletionRoutines>false</CompletionRoutines>
        <MeasureLatency>{str(latency).lower()}</MeasureLatency>
        <CalculateIopsStdDev>{str(iops).lower()}</CalculateIopsStdDev>
        <DisableAffinity>false</DisableAffinity>
        <Duration>10</Duration>
        <Warmup>5</Warmup>
        <Cooldown>0</Cooldown>
        <ThreadCount>0</ThreadCount>
        <RequestCount>0</RequestCount>
        <IoBucketDuration>1000</IoBucketDuration>
        <RandSeed>0</RandSeed>
        <Targets>
{profile_targets}
        </Targets>
      </TimeSpan>
    </TimeSpans>
  </Profile>
  <TimeSpan>
    <TestTimeSeconds>{seconds:.2f}</TestTimeSeconds>
    <ThreadCount>{len({r.thread for r in rows})}</ThreadCount>
    <RequestCount>0</RequestCount>
    <ProcCount>4</ProcCount>
    <CpuUtilization>
      <CPU>
        <Socket>0</Socket>
        <Node>0</Node>
        <Group>0</Group>
        <Core>0</Core>
        <EfficiencyClass>0</EfficiencyClass>
        <Id>0</Id>
        <UsagePercent>10.00</UsagePercent>
        <UserPercent>2.00</UserPercent>
        <KernelPercent>8.00</KernelPercent>
        <IdlePercent>90.00</IdlePercent>
      </CPU>
      <Average>
        <UsagePercent>10.00</UsagePercent>
        <UserPercent>2.00</UserPercent>
        <KernelPercent>8.00</KernelPercent>
        <IdlePercent>90.00</IdlePercent>
      </Average>
    </CpuUtilization>"""
    body = [head]
    if latency:
        body += _latency_xml(default_percentiles())
    if iops:
        width = max(len(r.buckets) for r in rows)
        total = [(sum(r.buckets[i][0] for r in rows if i < len(r.buckets)),
                  sum(r.buckets[i][1] for r in rows if i < len(r.buckets))) for i in range(width)]
        body += ["    <Iops>", "      <IopsStdDev>1.000</IopsStdDev>", *_buckets_xml(total, latency, None, "      "),
                 "    </Iops>"]
    for tid in dict.fromkeys(r.thread for r in rows):
        body += ["    <Thread>", f"      <Id>{tid}</Id>",
                 *[_target_xml(r, latency, "      ") for r in rows if r.thread == tid], "    </Thread>"]
    body += ["  </TimeSpan>", "</Results>", ""]
    return "\n".join(body)


def section_total(text: str, title: str) -> dict[str, float]:
    """The 'total:' row after ``title`` (Total IO, Read IO, Write IO), read with its header."""
    lines = text.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.strip() == title)
    names = [c.strip() for c in lines[i + 1].split("|")][1:-1]
    j = next(k for k in range(i + 2, len(lines)) if lines[k].lstrip().startswith("total:"))
    cells = [c.strip() for c in lines[j].lstrip()[len("total:"):].split("|")]
    return {n: float(c) if c != "N/A" else float("nan") for n, c in zip(names, cells, strict=True)}


def chart_row(text: str, label: str) -> tuple[float | None, float | None, float]:
    """(read, write, total) ms of the last chart row called ``label`` in ``text``."""
    rows = re.findall(rf"^\s*{re.escape(label)} \|\s*(\S+) \|\s*(\S+) \|\s*(\S+)\s*$", text, re.MULTILINE)
    r, w, t = rows[-1]
    return (None if r == "N/A" else float(r), None if w == "N/A" else float(w), float(t))
