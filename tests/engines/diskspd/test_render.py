"""DiskSpd XML profiles: the seed's command lines as workloads, switch by switch, and schema conformance.

The schema knowledge below was written from DiskSpd's XmlProfileParser/diskspd.xsd (v2.2) and the
order in which DiskSpd itself writes a profile (Common.cpp, Profile/TimeSpan/Target::GetXml).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from diskbench.engines.diskspd import DiskspdTarget, UnsupportedOptions, check_workload, command, render_profile
from diskbench.errors import ProfileError

UINT = r"\d+"
BOOL = r"true|false"
# element -> ordered (child, value pattern or None for a parent element)
ORDER: dict[str, list[tuple[str, str | None]]] = {
    "Profile": [("Progress", UINT), ("ExperimentFlags", UINT), ("ResultFormat", "text|xml"), ("Verbose", BOOL),
                ("VerboseStats", BOOL), ("PrecreateFiles", None), ("ETW", None), ("TimeSpans", None)],
    "TimeSpans": [("TimeSpan", None)],
    "TimeSpan": [("CompletionRoutines", BOOL), ("MeasureLatency", BOOL), ("CalculateIopsStdDev", BOOL),
                 ("DisableAffinity", BOOL), ("Duration", UINT), ("Warmup", UINT), ("Cooldown", UINT),
                 ("ThreadCount", UINT), ("RequestCount", UINT), ("IoBucketDuration", UINT), ("RandSeed", UINT),
                 ("RandomWriteData", BOOL), ("Affinity", None), ("Targets", None)],
    "Targets": [("Target", None)],
    "Target": [("Path", r".+"), ("BlockSize", UINT), ("BaseFileOffset", UINT), ("SequentialScan", BOOL),
               ("RandomAccess", BOOL), ("TemporaryFile", BOOL), ("UseLargePages", BOOL), ("DisableLocalCache", BOOL),
               ("DisableOSCache", BOOL), ("WriteThrough", BOOL), ("MemoryMappedIo", BOOL), ("FlushType", None),
               ("WriteBufferContent", None), ("ParallelAsyncIO", BOOL), ("BurstSize", UINT), ("ThinkTime", UINT),
               ("FileSize", UINT), ("Random", UINT), ("RandomRatio", UINT), ("Distribution", None),
               ("StrideSize", UINT), ("InterlockedSequential", BOOL), ("ThreadStride", UINT), ("MaxFileSize", UINT),
               ("RequestCount", UINT), ("WriteRatio", UINT), ("Throughput", UINT), ("ThreadsPerFile", UINT),
               ("IOPriority", UINT), ("Weight", UINT), ("ThreadTargets", None)],
    "WriteBufferContent": [("Pattern", "sequential|zero|random"), ("RandomDataSource", None)],
    "RandomDataSource": [("SizeInBytes", UINT), ("FilePath", r".+")],
}
REQUIRED = {"Profile": {"TimeSpans"}, "TimeSpans": {"TimeSpan"}, "TimeSpan": {"Targets"}, "Targets": {"Target"},
            "Target": {"Path"}, "WriteBufferContent": {"Pattern"}, "RandomDataSource": {"SizeInBytes"}}
REPEATS = {"TimeSpan", "Target"}


def conform(el: ET.Element) -> None:
    """Assert ``el`` and its children follow DiskSpd's profile schema and DiskSpd's own element order."""
    order = ORDER[el.tag]
    names = [name for name, _ in order]
    positions = []
    for child in el:
        assert child.tag in names, f"<{child.tag}> is not allowed in <{el.tag}>"
        positions.append(names.index(child.tag))
        pattern = dict(order)[child.tag]
        if pattern is None:
            conform(child)
        else:
            assert len(child) == 0 and re.fullmatch(pattern, child.text or ""), f"<{child.tag}>{child.text}"
    assert positions == sorted(positions), f"children of <{el.tag}> out of DiskSpd's order"
    tags = [c.tag for c in el]
    assert all(tags.count(t) == 1 for t in tags if t not in REPEATS), f"repeated element in <{el.tag}>"
    assert REQUIRED.get(el.tag, set()) <= set(tags)
    if el.tag == "Target":
        assert ("Random" in tags) != ("StrideSize" in tags), "exactly one of <Random> and <StrideSize>"
        assert 0 <= int(el.findtext("WriteRatio") or 0) <= 100
        t = el.find("Throughput")
        assert t is None or t.get("unit", "BPMS") in ("IOPS", "BPMS")
    if el.tag == "TimeSpan":
        assert not ("ThreadCount" in tags and any(int(x.text or 0) > 1 for x in el.iter("ThreadsPerFile"))), \
            "-F and -t cannot be used together"


def profile(workload: dict[str, Any], targets: list[DiskspdTarget | str] | None = None) -> ET.Element:
    text = render_profile(workload, targets or ["testfile.dat"])
    assert text.startswith('<?xml version="1.0" encoding="utf-8"?>\n')
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "Profile"
    conform(root)
    return root


def leaves(el: ET.Element) -> dict[str, str]:
    return {c.tag: (c.text or "") for c in el if len(c) == 0}


# diskspd -c200G -w100 -b8K -F4 -r -o128 -W30 -d30 -Sh testfile.dat   (seed 001, max write IOPS)
SEED_WRITE = {"rw": "randwrite", "bs": "8K", "numjobs": 4, "iodepth": 128, "ramp_time": "30s", "runtime": "30s",
              "diskspd": {"threads": "total", "caching": "h"}}
# diskspd -c200G -b4K -F4 -r -o128 -W7200 -d30 -Sh   (seed 001, max read IOPS on the read cache)
SEED_READ = {"rw": "randread", "bs": "4K", "numjobs": 4, "iodepth": 128, "ramp_time": "7200s", "runtime": "30s",
             "diskspd": {"threads": "total", "caching": "h"}}


@pytest.mark.parametrize(("workload", "bs", "write", "warmup"), [(SEED_WRITE, 8192, "100", "30"),
                                                                 (SEED_READ, 4096, "0", "7200")])
def test_seed_command_lines_render_switch_by_switch(workload: dict[str, Any], bs: int, write: str,
                                                    warmup: str) -> None:
    root = profile(workload, [DiskspdTarget("testfile.dat", create_size="200G")])
    ts = root.find("TimeSpans/TimeSpan")
    assert ts is not None
    spans = leaves(ts)
    assert spans["MeasureLatency"] == "true" and spans["CalculateIopsStdDev"] == "true"  # always -L -D
    assert spans["IoBucketDuration"] == "1000"
    assert spans["Duration"] == "30"  # -d30
    assert spans["Warmup"] == warmup  # -W30 / -W7200
    assert spans["ThreadCount"] == "4"  # -F4
    (target,) = ts.findall("Targets/Target")
    t = leaves(target)
    assert t["Path"] == "testfile.dat"
    assert t["FileSize"] == str(200 * 2**30)  # -c200G
    assert t["BlockSize"] == str(bs)  # -b8K / -b4K
    assert t["Random"] == str(bs)  # -r: aligned to the block size
    assert "StrideSize" not in t
    assert t["RequestCount"] == "128"  # -o128
    assert t["WriteRatio"] == write  # -w100 / no -w
    assert t["DisableOSCache"] == "true" and t["WriteThrough"] == "true"  # -Sh = -Suw
    assert "ThreadsPerFile" not in t  # -F, not -t
    assert root.findtext("ResultFormat") == "xml" and root.findtext("Progress") == "0"


def test_rendering_is_deterministic_and_commands_ask_for_xml() -> None:
    assert render_profile(SEED_WRITE, ["a.dat"]) == render_profile(dict(SEED_WRITE), ["a.dat"])
    assert command(r"C:\bench\p.xml", validate=False) == ["diskspd", "-Rxml", r"-XC:\bench\p.xml"]
    assert command("p.xml", validate=True, exe="diskspd.exe") == ["diskspd.exe", "-Rpxml", "-Xp.xml"]
    with pytest.raises(ProfileError):
        command("p.xml\n-w100", validate=False)


@pytest.mark.parametrize(("workload", "expected"), [
    ({"rw": "randrw", "rwmixread": 70, "bs": "4k"}, {"WriteRatio": "30", "Random": "4096"}),
    ({"rw": "rw"}, {"WriteRatio": "50", "StrideSize": "65536", "InterlockedSequential": "false"}),
    ({"rw": "read", "diskspd": {"interlocked": True}, "bs": "64k"}, {"InterlockedSequential": "true"}),
    ({"rw": "randread", "bs": "4k", "diskspd": {"random_align": "512"}}, {"Random": "512"}),
    ({"numjobs": 3}, {"ThreadsPerFile": "3"}),
    ({"direct": True}, {"DisableOSCache": "true"}),
    ({"diskspd": {"caching": "w"}}, {"WriteThrough": "true"}),
    ({"diskspd": {"caching": "rw"}}, {"DisableLocalCache": "true", "WriteThrough": "true"}),
    ({"rate_iops": 500}, {"Throughput": "500"}),
    ({"diskspd": {"throughput": 2048}}, {"Throughput": "2048"}),
    ({"size": "1G", "diskspd": {"base_offset": "1M"}},
     {"BaseFileOffset": str(2**20), "MaxFileSize": str(2**30 + 2**20)}),
    ({"iodepth": 7}, {"RequestCount": "7"}),
])
def test_workload_keys_become_target_elements(workload: dict[str, Any], expected: dict[str, str]) -> None:
    target = profile(workload).find("TimeSpans/TimeSpan/Targets/Target")
    assert target is not None
    assert {k: leaves(target).get(k) for k in expected} == expected
    if "rate_iops" in workload:
        assert target.find("Throughput").get("unit") == "IOPS"  # type: ignore[union-attr]


@pytest.mark.parametrize(("workload", "expected"), [
    ({"diskspd": {"cooldown": "1m"}}, {"Cooldown": "60"}),
    ({"diskspd": {"seed": 42}}, {"RandSeed": "42"}),
    ({"diskspd": {"write_buffer": "random"}}, {"RandomWriteData": "true"}),
    ({"runtime": "2m", "ramp_time": 5}, {"Duration": "120", "Warmup": "5"}),
])
def test_workload_keys_become_timespan_elements(workload: dict[str, Any], expected: dict[str, str]) -> None:
    ts = profile(workload).find("TimeSpans/TimeSpan")
    assert ts is not None and {k: leaves(ts).get(k) for k in expected} == expected


def test_write_buffers() -> None:
    zero = profile({"diskspd": {"write_buffer": "zero"}})
    assert zero.findtext("TimeSpans/TimeSpan/Targets/Target/WriteBufferContent/Pattern") == "zero"
    sized = profile({"diskspd": {"write_buffer": "20M"}})
    content = sized.find("TimeSpans/TimeSpan/Targets/Target/WriteBufferContent")
    assert content is not None and content.findtext("Pattern") == "random"
    assert content.findtext("RandomDataSource/SizeInBytes") == str(20 * 2**20)


def test_targets_hostile_paths_and_prefill_once() -> None:
    hostile = r"D:\R&D <new> 'q' \"x\".dat"
    root = profile({"rw": "write"}, [DiskspdTarget(hostile), DiskspdTarget("#1", create_size="10G"), "E:"])
    targets = root.findall("TimeSpans/TimeSpan/Targets/Target")
    assert [t.findtext("Path") for t in targets] == [hostile, "#1", "E:"]
    assert [t.findtext("FileSize") for t in targets] == [None, str(10 * 2**30), None]
    for bad in ("", " x.dat", "a\nb", "a\x00b"):
        with pytest.raises(ProfileError):
            render_profile({}, [bad])
    with pytest.raises(ProfileError, match="create_size"):
        render_profile({}, [DiskspdTarget("x.dat", create_size="lots")])
    with pytest.raises(ProfileError, match="at least one target"):
        render_profile({}, [])


def test_comment_cannot_break_the_xml() -> None:
    text = render_profile({"name": "a--b-->c"}, ["x.dat"])
    ET.fromstring(text.encode("utf-8"))
    assert "a- -b- ->c" in text


@pytest.mark.parametrize(("workload", "key"), [
    ({"rw": "randtrim"}, "rw"),
    ({"rw": "sideways"}, "rw"),
    ({"ioengine": "libaio"}, "ioengine"),
    ({"extra": {"norandommap": True}}, "extra.norandommap"),
    ({"time_based": False}, "time_based"),
    ({"runtime": "1.5s"}, "runtime"),
    ({"ramp_time": "soon"}, "ramp_time"),
    ({"bs": "7q"}, "bs"),
    ({"iodepth": 0}, "iodepth"),
    ({"numjobs": True}, "numjobs"),
    ({"rw": "randrw", "rwmixread": 101}, "rwmixread"),
    ({"direct": False, "diskspd": {"caching": "h"}}, "direct"),
    ({"direct": True, "diskspd": {"caching": "b"}}, "direct"),
    ({"diskspd": {"caching": "bu"}}, "diskspd.caching"),
    ({"diskspd": {"caching": "m"}}, "diskspd.caching"),
    ({"diskspd": {"threads": "many"}}, "diskspd.threads"),
    ({"diskspd": {"warp": 9}}, "diskspd.warp"),
    ({"diskspd": "fast"}, "diskspd"),
    ({"rw": "read", "diskspd": {"random_align": "4k"}}, "diskspd.random_align"),
    ({"rw": "randread", "diskspd": {"interlocked": True}}, "diskspd.interlocked"),
    ({"rate_iops": 10, "diskspd": {"throughput": 10}}, "diskspd.throughput"),
    ({"diskspd": {"seed": -1}}, "diskspd.seed"),
    ({"diskspd": {"cooldown": "0.5s"}}, "diskspd.cooldown"),
    ({"sweep": {"bs": ["4k", "8k"]}}, "sweep"),
    ({"norandommap": 1}, "norandommap"),
])
def test_check_workload_names_every_key_diskspd_cannot_honour(workload: dict[str, Any], key: str) -> None:
    problems = check_workload(workload)
    assert key in [k for k, _ in problems], problems
    with pytest.raises(UnsupportedOptions) as info:
        render_profile({"name": "w1", **workload}, ["x.dat"])
    assert info.value.problems == problems and str(info.value).startswith("w1: DiskSpd cannot run this: ")


def test_check_workload_accepts_the_vocabulary() -> None:
    full = {"name": "all", "description": "d", "rw": "randrw", "bs": "8k", "iodepth": 16, "numjobs": 2,
            "rwmixread": 70, "size": "1G", "runtime": "30s", "ramp_time": "2s", "rate_iops": 100, "direct": True,
            "time_based": True, "ioengine": None, "extra": {},
            "diskspd": {"threads": "per_target", "caching": "h", "random_align": "4k", "cooldown": "5s",
                        "write_buffer": "20M", "seed": 7, "base_offset": 0}}
    assert check_workload(full) == []
    profile(full)
    assert check_workload({"ioengine": "windowsaio"}) == [] and check_workload({}) == []
