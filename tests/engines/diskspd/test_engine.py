"""The DiskSpd engine in diskbench: registered like fio, picked by import, run from profiles."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from diskbench import registry
from diskbench.engines.base import Place
from diskbench.errors import ProfileError
from diskbench.expand import build_plan
from diskbench.profile import LoadedProfile, load_profile, parse_profile

from ...conftest import diskbench

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "diskspd"


@pytest.mark.parametrize("name", ["windows/xml/virtualclient_Results_DiskSpd_Xml_v2.0.21a_L_D.xml",
                                  "windows/text/virtualclient_Results_DiskSpd_Text_v2.0.21a_L_D.txt",
                                  "linux/diskspd-for-linux_randrw70-30_4K_t2_o4_L_D_Sh.txt"])
def test_import_recognises_diskspd(name: str, tmp_path: Path) -> None:
    out = diskbench("import", str(FIXTURES / name), "--format", "json", db=tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {r["engine"] for r in doc["results"]} <= {"diskspd", "diskspd-for-linux"}
    assert {r["direction"] for r in doc["results"]} >= {"read", "write", "total"}
    assert all(r["iops"] > 0 for r in doc["results"])


def test_no_latency_is_said_not_invented(tmp_path: Path) -> None:
    out = diskbench("import", str(FIXTURES / "windows/xml/perfkitbenchmarker_diskspd_result_v2.0.21a_noL.xml"),
                    "--per-target", "--format", "json", db=tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    assert results and all(r["clat_us"] is None for r in results)
    assert any("-L" in note for r in results for note in r["notes"])


def _seed_job(name: str) -> tuple[str, ET.Element, ET.Element]:
    plan = build_plan(load_profile("d8ds-premium-windows"))
    (job,) = [j for j in plan.units if j.workload.name == name]
    engine = registry.engines.get(job.engine)
    place = Place(job.workload, job.target_label, "F:/diskbench")
    measured = ET.fromstring(engine.render(job, [place]).split("\n", 1)[1])
    prefill = ET.fromstring(engine.render(job, [Place(engine.precondition(job.workload), "x", "F:/diskbench")],
                                          purpose="precondition").split("\n", 1)[1])
    return job.engine, measured, prefill


def test_the_seeds_diskspd_lines_as_rendered_by_the_engine() -> None:
    # diskspd -c200G -w100 -b8K -F4 -r -o128 -W30 -d30 -Sh testfile.dat
    engine, measured, prefill = _seed_job("max-write")
    assert engine == "diskspd"
    span, target = measured.find("TimeSpans/TimeSpan"), measured.find("TimeSpans/TimeSpan/Targets/Target")
    assert span is not None and target is not None
    assert (span.findtext("Duration"), span.findtext("Warmup"), span.findtext("ThreadCount")) == ("30", "30", "4")
    assert span.findtext("MeasureLatency") == "true" and span.findtext("IoBucketDuration") == "1000"  # -L -D
    assert (target.findtext("BlockSize"), target.findtext("WriteRatio"), target.findtext("RequestCount")) == (
        "8192", "100", "128")
    assert target.findtext("Random") == "8192"  # -r
    assert (target.findtext("DisableOSCache"), target.findtext("WriteThrough")) == ("true", "true")  # -Sh
    assert target.findtext("FileSize") is None  # measured runs reuse the file ...
    pre = prefill.find("TimeSpans/TimeSpan/Targets/Target")
    assert pre is not None and pre.findtext("FileSize") == str(200 * 1024**3)  # ... the prefill makes it (-c200G)


def test_the_engine_validates_profiles_on_the_host_first() -> None:
    engine = registry.engines.get("diskspd")
    assert engine.check_command("C:/w/job.xml") == ["diskspd", "-Rpxml", "-XC:/w/job.xml"]
    assert engine.command("C:/w/job.xml", "ignored") == ["diskspd", "-Rxml", "-XC:/w/job.xml"]


def test_options_without_a_diskspd_meaning_are_profile_errors_naming_the_key() -> None:
    text = ("name: w\nworkloads:\n  - {name: t, engine: diskspd, rw: trim, bs: 4k}\n"
            "  - {name: e, engine: diskspd, rw: read, bs: 4k, extra: {norandommap: 1}}\n"
            "machines:\n  - {name: m, region: westeurope, size: Standard_D8ds_v4, os: windows, target: temp}\n")
    with pytest.raises(ProfileError, match="cannot run with diskspd: rw: "):
        build_plan(LoadedProfile(profile=parse_profile(text), path="w.yaml", text=text), workloads=["t"])
    with pytest.raises(ProfileError, match="extra"):
        build_plan(LoadedProfile(profile=parse_profile(text), path="w.yaml", text=text), workloads=["e"])


def test_render_command_writes_diskspd_profiles(tmp_path: Path) -> None:
    out = diskbench("render", "--profile", "premium-cache-windows", "--out", str(tmp_path / "jobs"),
                    db=tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    files = sorted(p.name for p in (tmp_path / "jobs").iterdir())
    assert len(files) == 20 and all(f.endswith(".xml") for f in files)
