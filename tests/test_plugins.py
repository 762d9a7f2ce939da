"""A third-party engine is one folder plus one entry-point line, and runs a profile end to end.

The engine here drives ``dd`` (tests only): it is installed the way any package is, as a
folder on the path with its distribution metadata naming an entry point in
``diskbench.engines``; diskbench finds it without being told.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from .conftest import diskbench

DD_ENGINE = r'''
"""A dd-based engine: sequential direct writes, timed by the shell."""
from __future__ import annotations

import json

from diskbench.engines.base import Engine, Parsed
from diskbench.model import DirectionResult, GroupResult
from diskbench.units import parse_size


class DdEngine(Engine):
    name = "dd"
    job_suffix = ".sh"
    output_name = "dd.json"

    def check_workload(self, workload):
        bad = [("rw", "dd writes sequentially")] if workload.rw != "write" else []
        return bad + ([("iodepth", "dd does one I/O at a time")] if (workload.iodepth or 1) > 1 else [])

    def render(self, job, places, *, purpose=""):
        w, place = places[0].workload, places[0]
        bs, count = parse_size(w.bs), parse_size(w.size) // parse_size(w.bs)
        return ("start=$(date +%s%N)\n"
                f"dd if=/dev/zero of={place.directory}/dd.bin bs={bs} count={count} oflag=direct status=none\n"
                "end=$(date +%s%N)\n"
                f"printf '{{\"dd_bytes\": %d, \"ios\": %d, \"ns\": %d}}' {bs * count} {count} $((end - start))"
                ' > "$1"\n')

    def command(self, jobfile, output):
        return ["sh", jobfile, output]

    def version(self, ex):
        out = ex.run(["dd", "--version"])
        return out.stdout.splitlines()[0].split()[-1] if out.returncode == 0 else None

    def sniff(self, text):
        return '"dd_bytes"' in text

    def parse(self, text, *, source, per_job=False):
        doc = json.loads(text)
        seconds = doc["ns"] / 1e9
        d = DirectionResult("write", doc["ios"] / seconds, doc["dd_bytes"] / seconds, doc["ios"],
                            doc["dd_bytes"], seconds, None)
        return Parsed([GroupResult("dd", ["dd"], 1, "dd", "coreutils", [d])])
'''

PROFILE = """\
name: dd-profile
workloads:
  - {name: seq-write, engine: dd, rw: write, bs: 64k, size: 4M, iodepth: 1}
"""


@pytest.fixture
def plugin_path(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "tinydd").mkdir(parents=True)
    (site / "tinydd" / "__init__.py").write_text(DD_ENGINE)
    meta = site / "tinydd-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: tinydd\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text("[diskbench.engines]\ndd = tinydd:DdEngine\n")  # the one line
    return site


@pytest.mark.skipif(shutil.which("dd") is None, reason="dd is not installed")
def test_a_third_party_engine_runs_a_profile(plugin_path: Path, tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(PROFILE)
    target = tmp_path / "target"
    target.mkdir()
    env = {"PYTHONPATH": os.pathsep.join([str(plugin_path), os.environ.get("PYTHONPATH", "")])}
    out = diskbench("run", "--profile", str(tmp_path / "p.yaml"), "--target", str(target), "--format", "json",
                    db=tmp_path / "db.sqlite", env=env)
    assert out.returncode == 0, out.stderr
    (result,) = json.loads(out.stdout)["results"]
    assert (result["engine"], result["direction"], result["ios"]) == ("dd", "write", 64)
    assert result["io_bytes"] == 4 * 1024 * 1024 and result["iops"] > 0
    # the engine's own vocabulary check names the key it cannot honour
    (tmp_path / "bad.yaml").write_text(PROFILE.replace("iodepth: 1", "iodepth: 8"))
    bad = diskbench("plan", "--profile", str(tmp_path / "bad.yaml"), db=tmp_path / "db.sqlite", env=env)
    assert bad.returncode == 2 and "iodepth: dd does one I/O at a time" in bad.stderr, bad.stderr
    # without the plugin on the path, the engine is simply not installed
    missing = diskbench("plan", "--profile", str(tmp_path / "p.yaml"), db=tmp_path / "db.sqlite")
    assert missing.returncode == 5 and "no engine named 'dd' is installed" in missing.stderr


def test_entry_points_are_read_as_importlib_metadata_reads_them(plugin_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """registry.declared reads entry_points.txt itself (importlib.metadata costs a third of --help):
    the same names and values, the first on sys.path winning, extras and comments as the format has them."""
    from importlib.metadata import entry_points

    from diskbench import registry

    (plugin_path / "tinydd-0.1.dist-info" / "entry_points.txt").write_text(
        "# a comment\n[console_scripts]\ndd = elsewhere:main\n\n[diskbench.engines]\n"
        "dd = tinydd:DdEngine [fast]\nfio = tinydd:DdEngine\n")
    monkeypatch.syspath_prepend(str(plugin_path))
    for group in ("diskbench.engines", "diskbench.providers", "diskbench.platforms"):
        expected: dict[str, str] = {}
        for point in entry_points(group=group):
            expected.setdefault(point.name, point.value)
        assert registry.declared(group) == expected
    engines = registry.declared("diskbench.engines")
    assert engines["fio"] == "tinydd:DdEngine"  # first on sys.path, as importlib.metadata has it
    assert registry._load(engines["dd"]).__name__ == "DdEngine"
