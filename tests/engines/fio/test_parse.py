"""Parser tests on every real fio output in shared/fixtures/fio (and the fixtures diskbench made,
which tests/fixtures/fio/README.md lists), plus real fio runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from diskbench.engines.fio.parse import NO_IOS_NOTE, extract_fio_document, parse_fio_output
from diskbench.errors import ParseError

from ...conftest import needs_fio

OUTPUTS = [
    "client-server-2servers-group-reporting.jsonplus.stdout.txt",
    "client-server-2servers-numjobs2.json.stdout.txt",
    "client-server-one-server-unreachable-rc0.stdout.txt",
    "fio-2.21-randread-4k-qd16.json",
    "fio-3.42-randread-4k-qd16.json",
    "invalid-control-char-in-description.json",
    "job-error-rc1.stdout.json",
    "multi-job-numjobs2-two-groups.json",
    "normal-plus-json.stdout.txt",
    "output-file-thread-note-invalid.json.txt",
    "percentile-list-lat-slat-percentiles.json",
    "randread-4k-numjobs4-group-reporting.jsonplus.json",
    "randread-4k-qd16.json",
    "randrw-70-30-8k.json",
    "randrw-70-30-unified-rw-reporting-both.json",
    "sigint-partial-rc128.stdout.txt",
    "stdout-note-before-json.txt",
    "steadystate-iops-slope-attained.json",
    "steadystate-iops-slope.json",
    "histlog/randread-4k-qd8-numjobs2-histlog.jsonplus.json",
    "sigint-output-file-time-based-rc128.json",
    "derived-sigint-time-based-no-signal-line.json",
    "derived-fio-2.20-io_bytes-in-kib.json",
    "derived-fio-2.1.11-no-total_ios.json",
]
MEASURED_NOTHING = ["ramp-time-eats-the-whole-size-bytes-without-ios.json"]  # real, and no I/O was measured


def _parse(fio_fixtures: Path, name: str, **kw: bool):  # type: ignore[no-untyped-def]
    return parse_fio_output((fio_fixtures / name).read_text(), source=name, **kw)


def test_every_fixture_is_listed(fio_fixtures: Path) -> None:
    on_disk = {str(p.relative_to(fio_fixtures)) for p in fio_fixtures.rglob("*")
               if p.suffix in (".json", ".txt") and "stderr" not in p.name}
    assert on_disk == set(OUTPUTS + MEASURED_NOTHING)


@pytest.mark.parametrize("name", OUTPUTS)
def test_every_fixture_parses_to_sane_numbers(fio_fixtures: Path, name: str) -> None:
    groups = _parse(fio_fixtures, name)
    assert groups
    for g in groups:
        assert g.engine == "fio"
        for d in g.directions:
            assert d.iops > 0 and d.bw_bytes_per_s > 0 and (d.ios > 0 or NO_IOS_NOTE in g.notes)
            assert d.clat is not None
            assert 0 < d.clat.min <= d.clat.mean <= d.clat.max
            pct = list(d.clat.percentiles.values())
            assert pct == sorted(pct), "percentiles must not decrease"
            assert "p50" in d.clat.percentiles and "p99.99" in d.clat.percentiles or name.startswith(
                "percentile-list")


def test_single_job_numbers_match_fio(fio_fixtures: Path) -> None:
    doc = json.loads((fio_fixtures / "randread-4k-qd16.json").read_text())
    raw = doc["jobs"][0]["read"]
    (g,) = _parse(fio_fixtures, "randread-4k-qd16.json")
    (d,) = g.directions
    assert d.direction == "read"
    assert d.iops == raw["iops"]
    assert d.bw_bytes_per_s == raw["bw_bytes"]
    assert d.ios == raw["total_ios"]
    assert d.runtime_s == raw["runtime"] / 1000
    assert d.clat is not None
    assert d.clat.min == raw["clat_ns"]["min"] / 1000
    assert d.clat.percentiles["p99.99"] == raw["clat_ns"]["percentile"]["99.990000"] / 1000
    assert d.clat.exact


def test_group_reporting_bins_reproduce_fios_percentiles(fio_fixtures: Path) -> None:
    name = "randread-4k-numjobs4-group-reporting.jsonplus.json"
    raw = json.loads((fio_fixtures / name).read_text())["jobs"][0]["read"]["clat_ns"]
    (g,) = _parse(fio_fixtures, name)
    clat = g.directions[0].clat
    assert clat is not None and clat.exact and clat.samples == 142015
    for key, value in raw["percentile"].items():
        assert clat.percentiles[f"p{float(key):g}"] == value / 1000, key


def test_fio2_units_and_padding_keys(fio_fixtures: Path) -> None:
    (g,) = _parse(fio_fixtures, "fio-2.21-randread-4k-qd16.json")
    assert g.engine_version == "2.21"
    d = g.directions[0]
    assert d.bw_bytes_per_s == 172883 * 1024  # fio 2.x: KiB/s
    assert d.clat is not None
    assert d.clat.min == 223 and d.clat.percentiles["p1"] == 274  # already µs
    assert "p0" not in d.clat.percentiles  # the "0.00" padding is not a percentile
    assert len(d.clat.percentiles) == 17


def test_client_server_excludes_all_clients_and_merges_bins(fio_fixtures: Path) -> None:
    (g,) = _parse(fio_fixtures, "client-server-2servers-group-reporting.jsonplus.stdout.txt")
    assert g.hosts == ["127.0.0.1", "127.0.0.2"]
    assert g.jobs == 4  # each server's one group_reporting entry stands for its numjobs=2 jobs
    doc = extract_fio_document(
        (fio_fixtures / "client-server-2servers-group-reporting.jsonplus.stdout.txt").read_text())
    entries = [e for e in doc["client_stats"] if e["jobname"] != "All clients"]
    assert g.directions[0].iops == pytest.approx(sum(e["read"]["iops"] for e in entries))
    assert g.directions[0].clat is not None and g.directions[0].clat.exact


def test_plain_json_multi_job_percentiles_are_flagged_inexact(fio_fixtures: Path) -> None:
    (g,) = _parse(fio_fixtures, "client-server-2servers-numjobs2.json.stdout.txt")
    assert g.jobs == 4
    clat = g.directions[0].clat
    assert clat is not None and not clat.exact
    assert any("not merged exactly" in n for n in g.notes)


def test_job_error_keeps_the_good_job(fio_fixtures: Path) -> None:
    (g,) = _parse(fio_fixtures, "job-error-rc1.stdout.json")
    assert g.errors == ["job 'bad' failed: error 22 (Invalid argument)"]
    assert g.directions[0].ios > 0
    per_job = _parse(fio_fixtures, "job-error-rc1.stdout.json", per_job=True)
    assert [p.name for p in per_job] == ["ok", "bad"]
    assert per_job[1].errors and not per_job[1].directions


def test_reporting_groups_and_per_job(fio_fixtures: Path) -> None:
    groups = _parse(fio_fixtures, "multi-job-numjobs2-two-groups.json")
    assert [(g.name, g.jobs) for g in groups] == [("seqread-128k", 2), ("randwrite-4k", 2)]
    assert [d.direction for d in groups[1].directions] == ["write"]


def test_mixed_workload_reports_total(fio_fixtures: Path) -> None:
    (g,) = _parse(fio_fixtures, "randrw-70-30-8k.json")
    read, write, total = g.directions
    assert (read.direction, write.direction, total.direction) == ("read", "write", "total")
    assert total.iops == pytest.approx(read.iops + write.iops)
    assert total.ios == read.ios + write.ios
    (u,) = _parse(fio_fixtures, "randrw-70-30-unified-rw-reporting-both.json")
    assert [d.direction for d in u.directions] == ["read", "write", "total"]
    assert u.directions[2].clat is not None and u.directions[2].clat.exact  # fio's own "mixed"


def test_noise_around_json(fio_fixtures: Path) -> None:
    for name in ("stdout-note-before-json.txt", "output-file-thread-note-invalid.json.txt",
                 "normal-plus-json.stdout.txt", "sigint-partial-rc128.stdout.txt",
                 "invalid-control-char-in-description.json"):
        assert _parse(fio_fixtures, name)[0].directions


def test_concatenated_documents_use_the_last() -> None:
    first = {"fio version": "fio-3.33", "jobs": [_job(100.0)]}
    last = {"fio version": "fio-3.33", "jobs": [_job(200.0)]}
    text = "noise\n" + json.dumps(first, indent=1) + "\n" + json.dumps(last, indent=1) + "\ntrailer\n"
    (g,) = parse_fio_output(text)
    assert g.directions[0].iops == 200.0


def _job(iops: float) -> dict[str, object]:
    """A job whose figures agree with each other as fio's do (iops = total_ios * 1000 / runtime)."""
    ios = int(iops)
    lat = {"min": 1000, "max": 3000, "mean": 2000.0, "stddev": 10.0, "N": ios,
           "percentile": {"50.000000": 2008}}  # 2008: the midpoint of fio's bucket for 2000 ns
    return {"jobname": "j", "groupid": 0, "error": 0,
            "read": {"iops": iops, "bw_bytes": 4096 * ios, "io_bytes": 4096 * ios, "io_kbytes": 4 * ios,
                     "total_ios": ios, "runtime": 1000, "clat_ns": lat}}


@pytest.mark.parametrize("text", ["", "not json at all", "{\"a\": 1}", "fio: failed to open\n{ broken"])
def test_garbage_is_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_fio_output(text, source="x.json")
    assert str(info.value).startswith("x.json: no fio JSON document found")
    assert "\n" not in str(info.value)


@needs_fio
def test_status_interval_output_from_real_fio(tmp_path: Path) -> None:
    out = subprocess.run(
        ["fio", "--output-format=json", "--status-interval=1", f"--directory={tmp_path}",
         "--name=si", "--size=8M", "--rw=randread", "--bs=4k", "--ioengine=psync",
         "--runtime=2", "--time_based"], capture_output=True, text=True, check=True).stdout
    assert out.count('"fio version"') >= 2  # several documents, the last one is final
    (g,) = parse_fio_output(out)
    final = json.loads(out[out.rindex('{\n  "fio version"'):])
    assert g.directions[0].ios == final["jobs"][0]["read"]["total_ios"]


def test_a_job_that_did_its_size_during_ramp_time_measured_nothing(fio_fixtures: Path) -> None:
    """fio's own output: bytes but no I/Os after the ramp. The figures stay fio's; a warning says
    nothing was measured (a 6.6 GB/s 'result' from 10 ms would mislead)."""
    text = (fio_fixtures / "ramp-time-eats-the-whole-size-bytes-without-ios.json").read_text()
    (group,) = parse_fio_output(text)
    (write,) = group.directions
    assert (write.ios, write.io_bytes, write.iops) == (0, 4 * 16646144, 0.0)
    assert any("did its whole size during ramp_time" in w for w in write.warnings)
