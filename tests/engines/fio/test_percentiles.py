"""Percentiles from merged json+ bins, checked against fio itself and an independent recomputation."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from diskbench.engines.fio.parse import parse_fio_output
from diskbench.engines.fio.percentiles import merge_bins, percentiles_from_bins
from diskbench.model import PERCENTILES, pkey

from ...conftest import needs_fio
from .fio_arith import fio_rank

PLAT_BITS, PLAT_VAL, PLAT_NR = 6, 64, 29 * 64  # fio's FIO_IO_U_PLAT_* constants


def fio_bucket_value(ns: int) -> int:
    """fio's plat_val_to_idx followed by plat_idx_to_val, written from fio's stat.c independently."""
    msb = ns.bit_length() - 1 if ns else 0
    if msb <= PLAT_BITS:
        idx = ns
    else:
        error_bits = msb - PLAT_BITS
        idx = min((error_bits + 1) * PLAT_VAL + ((PLAT_VAL - 1) & (ns >> error_bits)), PLAT_NR - 1)
    if idx < (PLAT_VAL << 1):
        return idx
    error_bits = (idx >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    return int(base + ((idx % PLAT_VAL) + 0.5) * (1 << error_bits))


def percentile_of_sorted(values: list[int], p: float) -> int:
    """The smallest value whose rank reaches fio's threshold for p% of all samples."""
    return values[fio_rank(p, len(values)) - 1]


def test_rule_on_a_small_histogram() -> None:
    bins = {10: 1, 20: 1, 30: 1, 40: 1}
    got = percentiles_from_bins(bins, [1, 25, 50, 50.1, 75, 100])
    assert got == {1: 10, 25: 10, 50: 20, 50.1: 30, 75: 30, 100: 40}
    assert merge_bins([{1: 2}, {1: 3, 5: 1}]) == {1: 5, 5: 1}
    assert percentiles_from_bins({}, [50]) == {}


def test_every_fixture_with_bins_reproduces_fios_own_percentiles(fio_fixtures: Path) -> None:
    checked = 0
    for path in fio_fixtures.rglob("*json*"):
        text = path.read_text()
        if '"bins"' not in text:
            continue
        for job in json.loads(text[text.index("{"):text.rindex("}") + 1]).get("jobs", []):
            for ddir in ("read", "write"):
                clat = job.get(ddir, {}).get("clat_ns", {})
                if "bins" not in clat or "percentile" not in clat:
                    continue
                bins = {int(k): v for k, v in clat["bins"].items()}
                got = percentiles_from_bins(bins, list(clat["percentile"]))
                assert {float(k): v for k, v in clat["percentile"].items()} == got, path.name
                checked += 1
    assert checked >= 3


@needs_fio
def test_multi_job_merge_matches_independent_recomputation(tmp_path: Path) -> None:
    """Three jobs without group_reporting; per-IO latency logs give the truth."""
    out = tmp_path / "out.json"
    subprocess.run(
        ["fio", "--output-format=json+", f"--output={out}", f"--directory={tmp_path}", "--name=m",
         "--size=8M", "--rw=randread", "--bs=4k", "--ioengine=psync", "--runtime=1", "--time_based",
         "--numjobs=3", f"--write_lat_log={tmp_path}/lat", "--log_avg_msec=0",
         "--percentile_list=" + ":".join(f"{p:g}" for p in PERCENTILES)],
        check=True, capture_output=True)
    doc = json.loads(out.read_text())
    assert len(doc["jobs"]) == 3
    (group,) = parse_fio_output(out.read_text())
    clat = group.directions[0].clat
    assert clat is not None and clat.exact

    samples: list[int] = []
    for log in sorted(tmp_path.glob("lat_clat.*.log")):
        samples += [int(line.split(",")[1]) for line in log.read_text().splitlines()]
    assert len(samples) == clat.samples == sum(j["read"]["clat_ns"]["N"] for j in doc["jobs"])
    bucketed = sorted(fio_bucket_value(ns) for ns in samples)
    for p in PERCENTILES:
        assert clat.percentiles[pkey(p)] == pytest.approx(percentile_of_sorted(bucketed, p) / 1000), p
    assert clat.min == min(samples) / 1000 and clat.max == max(samples) / 1000
    assert clat.mean == pytest.approx(sum(samples) / len(samples) / 1000, rel=1e-6)
    mean = sum(samples) / len(samples)
    stdev = math.sqrt(sum((s - mean) ** 2 for s in samples) / (len(samples) - 1)) / 1000
    assert clat.stdev == pytest.approx(stdev, rel=1e-3)
    # Averaging the per-job percentiles would be a different (wrong) number in general;
    # the merged one must equal what fio itself reports with group_reporting on the same bins,
    # and so must the rate: all I/Os over the longest runtime (fio's sum_thread_stats).
    ios = sum(j["read"]["total_ios"] for j in doc["jobs"])
    assert group.directions[0].iops == 1000.0 * ios / max(j["read"]["runtime"] for j in doc["jobs"])
