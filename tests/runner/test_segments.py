"""A DiskSpd job with ``stop:`` end to end: segment after segment until the answer is known, each kept.

No machine here runs Windows, so DiskSpd is the one part played: a Windows host (an ``Executor``, as
tests/platforms/windows/test_shell.py plays PowerShell) whose ``diskspd`` checks each profile and
answers each run with a real DiskSpd output from the fixtures. Everything else is diskbench's own:
the plan of an Azure Windows machine, the DiskSpd engine rendering each segment's profile and
parsing what came back, the stop rule, the pipeline, and the store (SQLite, or memory). The oracle
of the merged result is what DiskSpd printed in those outputs.
"""

from __future__ import annotations

import gzip
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
import yaml

from diskbench import api, registry
from diskbench.attribution.attributor import Attributor
from diskbench.attribution.stop_rule import CONFIDENT, MAX_REACHED, NOT_STEADY
from diskbench.engines.base import Place
from diskbench.executors.base import Completed, Executor
from diskbench.plan import Unit
from diskbench.reports.formats import format_results
from diskbench.runner.one_machine import OneMachine
from diskbench.runner.options import RunOutcome
from diskbench.runner.pipeline import run_unit
from diskbench.runner.progress import NullProgress
from diskbench.runner.recorder import MemoryRecorder, Recorder, unit_dir
from diskbench.runner.segments import SegmentLog
from diskbench.runner.state import RunState
from diskbench.schemas import schema
from diskbench.store import Store

from ..conftest import plan_of
from ..engines.diskspd.helpers import FIXTURES, read, section_total

XML = read(FIXTURES / "windows" / "xml" / "virtualclient_Results_DiskSpd_Xml_v2.0.21a_L_D.xml")  # -L -D, 120 s
THREE = read(FIXTURES / "windows" / "text" / "ntjcbs_disk-test_README_v2.2_3runs.md")
RUNS = ["Command Line:" + part.split("\n## ")[0] for part in THREE.split("Command Line:")[1:]]
PROFILE = {
    "name": "segments",
    "defaults": {"size": "1G", "runtime": "60s", "ramp_time": "3s", "stop": {"within": "5%", "min": "10s"}},
    "workloads": [{"name": "mix", "rw": "randrw", "rwmixread": 70, "bs": "4k", "iodepth": 8}],
    "machines": [{"name": "win1", "region": "westeurope", "size": "Standard_D8ds_v4", "os": "windows",
                  "data_disks": [{"type": "Premium_LRS", "size_gb": 1024, "caching": "None"}],
                  "targets": {"data": {"lun": 0}}}],
}


class DiskspdHost(Executor):
    """A Windows host whose DiskSpd accepts every profile (``-Rpxml``) and answers each run with the next
    of ``outputs`` (round and round); ``during`` is told the number of each run before it answers."""

    name = "win1"
    platform = "windows"

    def __init__(self, outputs: list[str], during: Callable[[int], int | None] = lambda _n: None) -> None:
        self.outputs, self.during = outputs, during
        self.files: dict[str, str] = {}
        self.profiles: list[ET.Element] = []

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        ok = argv[:2] == ["diskspd", "-Rpxml"] and argv[2][2:] in self.files
        return Completed(argv, 0 if ok else 1, "<Results>\n" if ok else "", "" if ok else "not scripted")

    def stream(self, argv: list[str], *, on_output: Callable[[str], None], timeout: float, stdout_path: Path,
               stderr_path: Path, privileged: bool = False, workdir: str | None = None) -> int:
        assert argv[:2] == ["diskspd", "-Rxml"], argv
        self.profiles.append(ET.fromstring(self.files[argv[2][2:]]))
        stderr_path.write_text("")
        rc = self.during(len(self.profiles))
        if rc is not None:  # stopped while it ran: DiskSpd wrote nothing
            stdout_path.write_text("")
            return rc
        text = self.outputs[(len(self.profiles) - 1) % len(self.outputs)]
        stdout_path.write_text(text)
        on_output(text)
        return 0

    def write_text(self, path: str, text: str) -> None:
        self.files[path] = text

    def fetch(self, path: str, dest: Path) -> bool:
        return Path(path) == dest and dest.exists()  # the workspace is the unit's folder

    def workspace(self, local_dir: Path) -> str:
        return str(local_dir)

    def spans(self) -> list[tuple[str | None, str | None]]:
        """(Duration, Warmup) of each profile DiskSpd was given."""
        return [(p.findtext("TimeSpans/TimeSpan/Duration"), p.findtext("TimeSpans/TimeSpan/Warmup"))
                for p in self.profiles]


def _unit(**stop: str) -> Unit:
    doc = {**PROFILE, "defaults": {**PROFILE["defaults"], "stop": {**PROFILE["defaults"]["stop"], **stop}}}
    (unit,) = plan_of(yaml.safe_dump(doc)).units
    assert unit.engine == "diskspd" and unit.platform == "windows"
    return unit


def _state(store: Recorder, unit: Unit, run_id: str | None = None) -> RunState:
    if run_id is None:
        run_id = store.create_run(profile="segments", profile_path=None, profile_text=None, options={})
        store.add_jobs(run_id, [{"key": unit.key, "workload": unit.workload.name, "target": unit.target_label,
                                 "host": unit.machine, "base_key": unit.base_key, "repeat": unit.repeat,
                                 "params": unit.params()}])
    return RunState(run_id, store, NullProgress(), 1, RunOutcome(run_id, "running"), {})


def _run(state: RunState, unit: Unit, host: DiskspdHost, lines: list[str]) -> bool:
    """The unit through the pipeline on ``host``, its target's file laid out already (no prefill pass)."""
    drive = OneMachine(host, registry.engines.get("diskspd"), "2.2.0",
                       [Place(unit.workload, unit.target_label, "F:/diskbench")], Attributor(lambda _t: []), {},
                       {unit.target_label}, lines.append, lambda: state.stopped, lambda _u: None,
                       segment_log=SegmentLog(state.store, state.run_id))
    return run_unit(state, unit, drive)


def _xml_count(tag: str) -> int:
    return sum(int(e.text or "0") for e in ET.fromstring(XML).iterfind("./TimeSpan/Thread/Target/" + tag))


@pytest.fixture(params=["sqlite", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Recorder:
    return Store(tmp_path / "db.sqlite") if request.param == "sqlite" else MemoryRecorder(tmp_path / "memory")


def test_a_steady_job_stops_once_known_each_segment_kept_and_merged_exactly(store: Recorder) -> None:
    unit, host, lines = _unit(), DiskspdHost([XML]), []
    state = _state(store, unit)
    assert _run(state, unit, host, lines)
    # five segments (the rule's five batches) of 5 s each, of the 60 s allowed; only the first warms up
    assert host.spans() == [("5", "3"), ("5", "0"), ("5", "0"), ("5", "0"), ("5", "0")]
    results = {r.result.direction: r for r in store.get_results(state.run_id)}
    assert set(results) == {"read", "write", "total"}
    read_ = results["read"]
    assert read_.stop is not None and read_.stop["reason"] == CONFIDENT and read_.stop["reached"] == 0
    assert read_.result.ios == 5 * _xml_count("ReadCount")
    assert results["write"].result.ios == 5 * _xml_count("WriteCount")
    assert read_.result.io_bytes == 5 * _xml_count("ReadBytes")
    seconds = float(ET.fromstring(XML).findtext("./TimeSpan/TestTimeSeconds") or "nan")
    assert read_.result.runtime_s == pytest.approx(5 * seconds) and read_.stop["seconds"] == pytest.approx(5 * seconds)
    assert read_.result.clat is not None and read_.result.clat.exact  # five equal runs: their bracket is a point
    assert any(n.startswith("adaptive stop: confident after") for n in read_.notes)
    assert any(n.startswith("5 DiskSpd runs merged") for n in read_.notes)
    # each segment stored as parsed, its raw output and profile kept in its own folder
    kept = store.segments(state.run_id, unit.key)
    assert [s["number"] for s in kept] == [1, 2, 3, 4, 5] and all(s["seconds"] == 5 for s in kept)
    art = unit_dir(store, state.run_id, unit)
    for n in range(1, 6):
        assert gzip.decompress((art / f"segment-{n:02d}" / "stdout.txt.gz").read_bytes()).decode() == XML
        assert (art / f"segment-{n:02d}" / "job.xml").exists()
    assert store.get_jobs(state.run_id)[0]["status"] == "done"
    assert any("segment 5 (5 s)" in line for line in lines)


def test_a_job_never_known_runs_its_maximum_and_its_percentiles_are_bounds(store: Recorder) -> None:
    """Three real runs of very different disks in turn: never known within 5%, so every segment of the
    maximum runs; the merge sums what each printed, and its p99 is bracketed by theirs."""
    unit, host = _unit(max="30s"), DiskspdHost(RUNS)
    state = _state(store, unit)
    assert _run(state, unit, host, [])
    assert host.spans() == [("5", "3")] + [("5", "0")] * 5
    results = {r.result.direction: r for r in store.get_results(state.run_id)}
    total = results["total"]
    assert total.stop is not None and total.stop["reason"] in (MAX_REACHED, NOT_STEADY)
    printed = [section_total(r, "Total IO") for r in RUNS]
    assert total.result.ios == 2 * sum(int(p["I/Os"]) for p in printed)
    clat = results["read"].result.clat
    assert clat is not None and not clat.exact and clat.bounds is not None
    assert clat.bounds["p99"] == (219.0, 1806.0) and clat.percentiles["p99"] == 1806.0  # printed 0.219 .. 1.806 ms
    assert len(store.segments(state.run_id, unit.key)) == 6
    if isinstance(store, Store):  # what `show --format json` says of it: the bracket, both ends
        found = api.results(state.run_id, store=store)
        text = format_results("json", found.run, found.stored)
        assert isinstance(text, str)
        doc = json.loads(text)
        jsonschema.validate(doc, schema("results"), cls=jsonschema.Draft202012Validator)
        (shown,) = [r for r in doc["results"] if r["direction"] == "read"]
        assert shown["clat_us"]["percentile_bounds"]["p99"] == [219.0, 1806.0] and shown["clat_us"]["p99"] == 1806.0
        assert shown["clat_us"]["percentiles_exact"] is False and shown["stop"]["reason"] in (MAX_REACHED, NOT_STEADY)


def test_an_interrupted_job_goes_on_from_its_stored_segments(store: Recorder) -> None:
    """Ctrl-C during the third segment: the unit is interrupted with two segments stored; run again
    (as resume does), it measures only what is still needed and the result holds all of them."""
    unit = _unit()
    state = _state(store, unit)

    def ctrl_c(n: int) -> int | None:
        if n == 3:
            state.interrupt()
            return 130
        return None

    first = DiskspdHost([XML], ctrl_c)
    assert not _run(state, unit, first, [])
    assert store.get_jobs(state.run_id)[0]["status"] == "interrupted" and not store.get_results(state.run_id)
    assert [s["number"] for s in store.segments(state.run_id, unit.key)] == [1, 2]
    art = unit_dir(store, state.run_id, unit)
    art.rename(art.with_name(art.name + ".attempt-1"))  # what resume does with an earlier attempt's folder
    again, lines = DiskspdHost([XML]), []
    assert _run(_state(store, unit, state.run_id), unit, again, lines)
    assert again.spans() == [("5", "3"), ("5", "0"), ("5", "0")]  # the new attempt warms up once
    assert any("going on from 2 segment(s)" in line for line in lines)
    (read_,) = [r for r in store.get_results(state.run_id) if r.result.direction == "read"]
    assert read_.result.ios == 5 * _xml_count("ReadCount") and read_.stop and read_.stop["reason"] == CONFIDENT
    assert [s["number"] for s in store.segments(state.run_id, unit.key)] == [1, 2, 3, 4, 5]
    assert (art / "segment-03" / "stdout.txt.gz").exists()


def test_plan_counts_every_segment_a_job_may_take() -> None:
    from diskbench.engines.segments import START_S

    unit, fixed = _unit(), plan_of(yaml.safe_dump({**PROFILE, "defaults": {
        k: v for k, v in PROFILE["defaults"].items() if k != "stop"}})).units[0]
    assert unit.expected_s == pytest.approx(fixed.expected_s + 11 * START_S)  # 12 segments of 5 s in 60 s
