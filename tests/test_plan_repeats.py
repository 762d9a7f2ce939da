"""``plan --repeats N|auto[:MAX]``: the time, VM-minutes and money of repeated jobs, from the real CLI.

Two oracles: the product's own plan without ``--repeats`` (the single run's job time, which plan prints)
with the documented rule (docs/reports-and-gate.md, "What repeats cost": N repeats take N times the
jobs' time, and a machine's VM-minutes are its provisioning allowance plus its jobs' time), and a
total worked out by hand for a profile whose runtimes are written here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from diskbench.schemas import schema

from .conftest import diskbench

# OpenStack prices come from the profile (no price API), so the money below is the test's own
PRICE = 3.0  # USD per hour
PROFILE = f"""\
name: tiny
defaults: {{size: 200M, runtime: 60s, ramp_time: 0s}}
workloads:
  - {{name: rr, rw: randread, bs: 4k}}
  - {{name: rw, rw: randwrite, bs: 4k, runtime: 30s}}
machines:
  - name: vm1
    provider: openstack
    flavor: b2-7
    image: Debian 12
    network: Ext-Net
    price_per_hour: {PRICE}
    target: {{dir: /var/tmp}}
"""
# By hand, per job: 1 s to start the engine, the runtime, and laying out 200 MiB at the cautious
# 200 MiB/s diskbench assumes (1 s): rr 62 s, rw 32 s, so one round is 94 s. OpenStack allows each
# server 5 minutes to be created, boot and go.
ROUND_S = (1 + 60 + 1) + (1 + 30 + 1)
ALLOWANCE_MIN = 5.0


def _plan(tmp_path: Path, *args: str) -> dict[str, Any]:
    """``plan --format json`` of PROFILE, its document checked against its schema."""
    path = tmp_path / "tiny.yaml"
    path.write_text(PROFILE)
    out = diskbench("plan", "--profile", str(path), "--format", "json", *args)
    assert out.returncode == 0, out.stderr
    doc: dict[str, Any] = json.loads(out.stdout)
    jsonschema.validate(doc, schema("plan"), cls=jsonschema.Draft202012Validator)
    return doc


def _table(tmp_path: Path, *args: str) -> list[str]:
    path = tmp_path / "tiny.yaml"
    path.write_text(PROFILE)
    out = diskbench("plan", "--profile", str(path), *args)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_two_repeats_take_twice_the_single_runs_job_time(tmp_path: Path) -> None:
    once, twice = _plan(tmp_path), _plan(tmp_path, "--repeats", "2")
    assert twice["expected_s"] == pytest.approx(2 * once["expected_s"])
    assert [u["repeat"] for u in twice["units"]] == [1, 1, 2, 2]
    one, two = once["costs"][0], twice["costs"][0]
    # the allowance is paid once: the second repeat adds exactly the single run's job time
    assert two["vm_minutes"] - one["vm_minutes"] == pytest.approx(once["expected_s"] / 60)
    assert two["usd"] == pytest.approx(two["vm_minutes"] / 60 * PRICE)
    assert two["repeats"] == {"min": 2, "max": 2, "min_vm_minutes": two["vm_minutes"], "min_usd": two["usd"],
                              "max_vm_minutes": two["vm_minutes"], "max_usd": two["usd"]}
    assert twice["repeats"]["rule"] == 2 and once["repeats"]["rule"] == 1


def test_the_totals_are_what_the_runtimes_give_by_hand(tmp_path: Path) -> None:
    doc = _plan(tmp_path, "--repeats", "2")
    assert doc["expected_s"] == pytest.approx(2 * ROUND_S)
    minutes = ALLOWANCE_MIN + 2 * ROUND_S / 60  # 5 + 188 s = 8.133 VM-minutes
    assert doc["costs"][0]["vm_minutes"] == pytest.approx(minutes)
    assert doc["costs"][0]["usd"] == pytest.approx(minutes / 60 * PRICE)  # $0.41
    lines = _table(tmp_path, "--repeats", "2")
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[1:4] == ["8", "0.41", "2"] and total.endswith("2 repeats of each job"), lines
    assert "each job runs 2 times, interleaved (all jobs once, then all again)" in lines
    assert all(len(line) <= 80 for line in lines if not line.startswith("prices:")), lines


def test_auto_runs_from_three_repeats_to_its_limit(tmp_path: Path) -> None:
    doc = _plan(tmp_path, "--repeats", "auto:7")
    assert doc["repeats"] == {"rule": "auto:7", "min": 3, "max": 7, "min_expected_s": pytest.approx(3 * ROUND_S),
                              "max_expected_s": pytest.approx(7 * ROUND_S)}
    cost = doc["costs"][0]["repeats"]
    assert (cost["min"], cost["max"]) == (3, 7)
    assert cost["min_vm_minutes"] == pytest.approx(ALLOWANCE_MIN + 3 * ROUND_S / 60)  # 9.7
    assert cost["max_vm_minutes"] == pytest.approx(ALLOWANCE_MIN + 7 * ROUND_S / 60)  # 15.97
    assert cost["max_usd"] == pytest.approx((ALLOWANCE_MIN + 7 * ROUND_S / 60) / 60 * PRICE)  # $0.80
    lines = _table(tmp_path, "--repeats", "auto:7")
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.startswith(("total", "auto:7 max"))}
    assert rows["total"][:2] == ["10", "0.48"] and rows["auto:7"][1:3] == ["16", "0.80"], lines
    assert any(line.startswith("--repeats auto:7: the 3 first rounds above") for line in lines), lines
    # auto alone: MAX is 10
    assert _plan(tmp_path, "--repeats", "auto")["repeats"]["max"] == 10


def test_auto_beside_the_adaptive_range(tmp_path: Path) -> None:
    """A stop: block keeps its own rows: the adaptive range of the plan's first rounds."""
    path = tmp_path / "tiny.yaml"
    path.write_text(PROFILE.replace("runtime: 30s}", "runtime: 30s, stop: {min: 10s}}"))
    out = diskbench("plan", "--profile", str(path), "--repeats", "auto")
    labels = [line.split("  ")[0] for line in out.stdout.splitlines()]
    assert [x for x in labels if x in ("total", "auto:10 max", "adaptive max", "adaptive min")] == [
        "total", "auto:10 max", "adaptive max", "adaptive min"], out.stdout


@pytest.mark.parametrize(("value", "names"), [
    ("auto:0", ["--repeats", "auto:0", "3", "100"]),
    ("foo", ["--repeats", "foo", "auto"]),
    ("0", ["--repeats"]),
    ("101", ["--repeats", "101"]),
])
def test_a_wrong_repeats_is_one_line_naming_the_option(tmp_path: Path, value: str, names: list[str]) -> None:
    path = tmp_path / "tiny.yaml"
    path.write_text(PROFILE)
    out = diskbench("plan", "--profile", str(path), "--repeats", value)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: "), out.stderr
    assert all(n in out.stderr for n in names), out.stderr
