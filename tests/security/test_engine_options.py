"""A profile decides what is measured, never where I/O lands or what runs as root (issue 24, 1-3).

Every attack goes through the CLI as a user would type it; the victim is a real loop device
whose write counter and file system are read from the kernel before and after.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ..conftest import diskbench, needs_fio
from .conftest import fs_type, writes_of

pytestmark = needs_fio
DEFAULTS = {"size": "4M", "runtime": "1s", "ramp_time": "0s", "ioengine": "psync"}


def write(path: Path, workloads: list[dict[str, object]], **extra: object) -> Path:
    path.write_text(yaml.safe_dump({"name": "attack", "defaults": DEFAULTS, "workloads": workloads, **extra}))
    return path


def test_extra_cannot_send_io_to_a_device(loop: str, tmp_path: Path, db: Path) -> None:
    import subprocess

    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True)
    work = tmp_path / "work"
    work.mkdir()
    writes = writes_of(loop)
    attacks = [{"directory": "/dev", "filename": Path(loop).name}, {"filename": loop}, {"filename_format": loop},
               {"opendir": "/dev"}, {"read_iolog": str(tmp_path / "log")}, {"replay_redirect": loop},
               {"allow_mounted_write": 1}, {"iomem": f"mmapshared:{loop}"}]
    for extra in attacks:
        profile = write(tmp_path / "p.yaml", [{"name": "w", "rw": "randwrite", "extra": extra}],
                        target={"dir": str(work)})
        for command in ("plan", "run"):
            out = diskbench(command, "--profile", str(profile), db=db)
            assert out.returncode == 2, (extra, out.stderr)
            key = next(iter(extra))
            assert f"extra.{key}" in out.stderr and "comes from the target alone" in out.stderr, out.stderr
    # the same through --set, on a harmless profile
    ok = write(tmp_path / "ok.yaml", [{"name": "w", "rw": "randwrite"}], target={"dir": str(work)})
    out = diskbench("run", "--profile", str(ok), "--set", f"workloads[0].extra={{filename: {loop}}}", db=db)
    assert out.returncode == 2 and "extra.filename" in out.stderr
    assert writes_of(loop) == writes and fs_type(loop) == "ext4"  # not one write reached the device


@pytest.mark.parametrize(("setting", "why"), [
    ({"extra": {"exec_prerun": "touch {marker}"}}, "runs a command before the job"),
    ({"extra": {"exec_postrun": "touch {marker}"}}, "runs a command after the job"),
    ({"ioengine": "exec", "extra": {"program": "/bin/touch", "arguments": "{marker}"}}, "runs a program"),
    ({"ioengine": "external:{marker}.so"}, "runs a program or loads code"),
])
def test_options_that_run_programs_need_allow_exec(setting: dict[str, object], why: str, tmp_path: Path,
                                                   db: Path) -> None:
    marker = tmp_path / "PWNED"
    text = yaml.safe_dump(setting).replace("{marker}", str(marker))
    workload = {"name": "w", "rw": "randread", **yaml.safe_load(text)}
    profile = write(tmp_path / "p.yaml", [workload])
    for command in ("plan", "run", "render"):
        extra = ["--out", str(tmp_path / "jobs")] if command == "render" else []
        out = diskbench(command, "--profile", str(profile), "--target", str(tmp_path), *extra, db=db)
        assert out.returncode == 2 and why in out.stderr and "--allow-exec" in out.stderr, out.stderr
    # a profile (or --set) cannot turn it on: only the person at the command line
    out = diskbench("run", "--profile", str(profile), "--set", "allow_exec=true", "--target", str(tmp_path), db=db)
    assert out.returncode == 2 and not marker.exists()
    if "exec_prerun" in text:
        out = diskbench("run", "--profile", str(profile), "--target", str(tmp_path), "--allow-exec", db=db)
        assert out.returncode == 0, out.stderr
        assert marker.exists()  # allowed, it ran


def test_ioengines_that_reach_other_storage_are_refused(tmp_path: Path, db: Path) -> None:
    for engine in ("sg", "rbd", "nbd", "http", "libiscsi", "io_uring_cmd", "net"):
        profile = write(tmp_path / "p.yaml", [{"name": "w", "rw": "randwrite", "ioengine": engine}])
        out = diskbench("plan", "--profile", str(profile), db=db)
        assert out.returncode == 2 and f"{engine} does its I/O elsewhere" in out.stderr, out.stderr


def test_control_characters_never_reach_a_job_file_or_a_command(tmp_path: Path, db: Path) -> None:
    marker = tmp_path / "PWNNL"
    inject = f"\n[global]\nexec_prerun=touch {marker}"
    work = tmp_path / "work"
    work.mkdir()
    profile = write(tmp_path / "p.yaml", [{"name": "w", "rw": "randread"}])
    attempts = [
        ("run", "--profile", str(profile), "--target", f"{work}{inject}"),
        ("run", "--profile", str(profile), "--target", str(work), "--set", f"name=x{inject}"),
        ("run", "--profile", str(profile), "--target", str(work), "--set", f"defaults.size=4M{inject}"),
        ("run", "--profile", str(profile), "--target", str(work), "--set", f"workloads[0].extra.x=1{inject}"),
        ("run", "--profile", f"local{inject}"),
        ("run", "--profile", str(profile), "--host", f"root@198.18.0.1{inject}"),
        ("latency", f"root@198.18.0.1{inject}"),
        ("run", "--profile", str(profile), "--target", str(work), "--destroy-data-on", f"/dev/x{inject}"),
        ("run", "--profile", str(profile), "--target", str(work), "--set", "name=esc\x1b[31m"),
    ]
    for args in attempts:
        out = diskbench(*args, db=db)
        assert out.returncode == 2, (args, out.stderr)
        assert "newline" in out.stderr or "escape" in out.stderr or "not a" in out.stderr, (args, out.stderr)
    for path, line in ((tmp_path / "h.yaml", "hosts"), (tmp_path / "t.yaml", "target")):
        doc = {"name": "p", "defaults": DEFAULTS, "workloads": [{"name": "w", "rw": "randread"}]}
        doc.update({"hosts": [{"name": "h", "address": f"10.0.0.1{inject}"}]} if line == "hosts"
                   else {"target": {"dir": f"{work}{inject}"}})
        path.write_text(yaml.safe_dump(doc))
        out = diskbench("plan", "--profile", str(path), db=db)
        assert out.returncode == 2 and "newline" in out.stderr or "address" in out.stderr, out.stderr
    assert not marker.exists()


def test_a_description_stays_comment_lines(tmp_path: Path, db: Path) -> None:
    marker = tmp_path / "PWND"
    work = tmp_path / "work"
    work.mkdir()
    profile = write(tmp_path / "p.yaml", [{"name": "w", "rw": "randread",
                                           "description": f"two lines\n[global]\nexec_prerun=touch {marker}"}],
                    description=f"profile\nexec_postrun=touch {marker}")
    rendered = diskbench("render", "--profile", str(profile), "--target", str(work), "--out", str(tmp_path / "j"),
                         db=db)
    assert rendered.returncode == 0, rendered.stderr
    (job,) = (tmp_path / "j").iterdir()
    text = job.read_text()
    assert "; exec_prerun=touch" in text and "\nexec_prerun" not in text and "\n[global]\n[global]" not in text
    out = diskbench("run", "--profile", str(profile), "--target", str(work), db=db)
    assert out.returncode == 0, out.stderr
    assert not marker.exists()


def test_a_colon_in_a_target_path_is_one_folder(tmp_path: Path, db: Path) -> None:
    """fio splits directory= at ':' (several folders): the path is escaped as fio asks, so the
    files land in the folder named and nowhere else."""
    work = tmp_path / "a:b"
    work.mkdir()
    profile = write(tmp_path / "p.yaml", [{"name": "w", "rw": "randwrite"}])
    out = diskbench("run", "--profile", str(profile), "--target", str(work), "--keep-files", db=db)
    assert out.returncode == 0, out.stderr
    assert [p.name for p in work.iterdir()] == ["w.0.0"]
    assert not (tmp_path / "a").exists() and not Path("b").exists()


def test_fio_directives_and_expansions_cannot_come_in(tmp_path: Path, db: Path) -> None:
    """fio reads ``include=FILE`` as its include directive and replaces ``${NAME}`` with the host's
    environment: neither may reach a job file from a profile or a target path."""
    marker = tmp_path / "PWNINC"
    included = tmp_path / "inc.fio"
    included.write_text(f"exec_prerun=touch {marker}\n")
    work = tmp_path / "work"
    work.mkdir()
    profile = write(tmp_path / "p.yaml", [{"name": "w", "rw": "randwrite", "extra": {"include": str(included)}}])
    out = diskbench("run", "--profile", str(profile), "--target", str(work), db=db)
    assert out.returncode == 2 and "extra.include" in out.stderr and not marker.exists()
    expanded = write(tmp_path / "e.yaml", [{"name": "w", "rw": "randwrite", "extra": {"nrfiles": "${HOME}"}}])
    out = diskbench("plan", "--profile", str(expanded), db=db)
    assert out.returncode == 2 and "holds ${...}" in out.stderr
    odd = tmp_path / "${HOME}"  # a real folder with that name: fio would write to $HOME/ instead
    odd.mkdir()
    ok = write(tmp_path / "ok.yaml", [{"name": "w", "rw": "randwrite"}])
    out = diskbench("run", "--profile", str(ok), "--target", str(odd), db=db)
    assert out.returncode != 0 and "would replace with an environment variable" in out.stderr, out.stderr
    assert not any(Path.home().glob("w.0.*"))
