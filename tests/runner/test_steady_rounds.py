"""``protocol: steady_state``: rounds of real fio until the SNIA PTS rule holds, the last one the result.

A rate-capped job is as steady as a job gets, so five one-second rounds make the first window;
every earlier round's raw output is kept under ``round-NN/``. The rule's arithmetic (and the
trending and never-steady cases) is tested in tests/attribution/test_steady_state.py; here the
verdict that goes with a result is checked on both sides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from diskbench.attribution.steady_state import steady_state
from diskbench.errors import ProfileError
from diskbench.model import DirectionResult, GroupResult
from diskbench.profile import parse_profile
from diskbench.runner.one_machine import steady_verdict as _steady_verdict
from diskbench.store import Store

from ..conftest import diskbench, needs_fio, plan_of, run_profile

PROFILE = {"name": "pts", "defaults": {"size": "4M", "runtime": "1s", "ramp_time": "0s", "ioengine": "psync",
                                       "direct": False, "bs": "4k"},
           "workloads": [{"name": "rr", "rw": "randread", "rate_iops": 300, "protocol": "steady_state",
                          "max_rounds": 6}]}


@needs_fio
def test_rounds_until_steady_and_the_last_is_the_result(db: Path, tmp_path: Path) -> None:
    out = run_profile(PROFILE, tmp_path, db)
    assert out.returncode == 0, out.stderr
    rounds = [ln for ln in out.stderr.splitlines() if ": round " in ln]
    assert len(rounds) == 5, out.stderr  # the first window of five qualifies
    assert "steady state achieved: rounds 1-5" in rounds[-1]
    (result,) = json.loads(out.stdout)["results"]
    assert result["iops"] == pytest.approx(300, rel=0.05)
    assert any(n.startswith("steady state achieved: rounds 1-5") for n in result["notes"]), result["notes"]
    assert not [w for w in result["warnings"] if "steady state" in w]
    art = Path(Store(db).get_run("last")["artifacts_dir"])
    (unit,) = [d for d in art.iterdir() if d.is_dir()]
    assert sorted(d.name for d in unit.glob("round-*")) == ["round-01", "round-02", "round-03", "round-04"]
    assert all((d / "output.json").exists() for d in unit.glob("round-*"))  # every round's raw output kept


def test_the_plan_counts_every_round_it_may_take(tmp_path: Path) -> None:
    text = yaml.safe_dump(PROFILE)
    (tmp_path / "pts.yaml").write_text(text)
    out = diskbench("plan", "--profile", str(tmp_path / "pts.yaml"), "--target", str(tmp_path))
    assert out.returncode == 0 and " 1s x6 " in out.stdout, out.stdout + out.stderr
    one, six = plan_of(text.replace("max_rounds: 6", "max_rounds: 5")), plan_of(text)
    assert six.units[0].expected_s == pytest.approx(one.units[0].expected_s / 5 * 6, rel=0.05)


def test_max_rounds_needs_the_protocol() -> None:
    doc = {**PROFILE, "workloads": [{"name": "rr", "rw": "randread", "max_rounds": 6}]}
    with pytest.raises(ProfileError, match="max_rounds is for protocol: steady_state"):
        parse_profile(yaml.safe_dump(doc))


def test_not_achieved_warns_on_every_figure() -> None:
    group = GroupResult(name="rr", job_names=["rr"], jobs=1, engine="fio", engine_version="3.33",
                        directions=[DirectionResult(direction="read", iops=1.0, bw_bytes_per_s=4096.0, ios=1,
                                                    io_bytes=4096, runtime_s=1.0, clat=None)])
    state = steady_state([100, 200, 300, 400, 500], max_rounds=5)
    _steady_verdict([group], state)
    assert group.notes == [state.text()] and state.text().startswith("steady state not achieved")
    assert group.directions[0].warnings == [f"{state.text()}; precondition the target, or run longer rounds"]
