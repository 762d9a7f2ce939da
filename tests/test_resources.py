"""Templates and profiles ship inside the wheel, and an installed wheel finds them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from .conftest import REPO


def test_wheel_carries_templates_and_profiles(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path), str(REPO)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("diskbench-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for path in ("diskbench/templates/fio/job.ini.j2", "diskbench/profiles/local.yaml",
                 "diskbench/profiles/e8-family.yaml"):
        assert path in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from diskbench import resources, profile; "
            "print(resources.templates_dir()); print(sorted(profile.bundled_profiles()))")
    out = subprocess.run([sys.executable, "-c", code, str(site)], capture_output=True, text=True, check=True)
    templates, profiles = out.stdout.splitlines()
    assert templates == str(site / "diskbench" / "templates")
    assert "'local'" in profiles
