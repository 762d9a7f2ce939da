"""Data files fio lays out in a --target directory are removed after the run (only those)."""

from __future__ import annotations

from pathlib import Path

from ..conftest import diskbench, needs_fio


@needs_fio
def test_laid_out_files_are_removed_and_others_are_not(db: Path, tiny_profile: Path, workdir: Path) -> None:
    mine = workdir / "rr.0.0"  # fio's own name, left by an earlier --keep-files run: fio reuses it,
    mine.write_bytes(b"\0" * 8 * 1024 * 1024)  # and diskbench does not delete what it did not lay out
    notes = workdir / "notes.txt"
    notes.write_text("mine")
    out = diskbench("run", "--profile", str(tiny_profile), "--target", str(workdir), db=db)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in workdir.iterdir()) == ["notes.txt", "rr.0.0"]
    # rw-mix.0.0 and rw-mix.1.0, not the rr.0.0 that was there before
    assert "removed 2 data file(s)" in out.stderr and str(workdir) in out.stderr


@needs_fio
def test_keep_files_keeps_them_and_says_so(db: Path, tiny_profile: Path, workdir: Path) -> None:
    out = diskbench("run", "--profile", str(tiny_profile), "--target", str(workdir), "--keep-files", db=db)
    assert out.returncode == 0, out.stderr
    left = sorted(p.name for p in workdir.iterdir())
    assert left and all(n.split(".")[0] in ("rr", "rw-mix") for n in left), left
    assert f"kept {len(left)} data file(s)" in out.stderr and "--keep-files" in out.stderr
