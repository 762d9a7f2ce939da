"""Break the product on purpose, one way at a time, and show that the test meant to catch it fails.

A test that passes whatever the product does proves nothing. Each ``Break`` below is a small edit of
diskbench's source that makes it wrong the way a real bug would (a stripe over one disk, no warm-up,
no ephemeral OS disk, the VM's cap forgotten by attribution, nconnect dropped, an array left
assembled, ...) and names the tests that must then fail. ``python -m tests.guestlab.breaks`` copies
this checkout to a temporary folder, applies one break there (never here: no test-only switch lives
in ``src/``), runs its tests against the copy (``PYTHONPATH`` puts the copy's ``src`` first), and
reports which failed. Exit status 0 when every break made each of its tests fail.

    python -m tests.guestlab.breaks --list
    python -m tests.guestlab.breaks one-disk-stripe nconnect-dropped
    python -m tests.guestlab.breaks --all          # every break; the guest ones take minutes each
    python -m tests.guestlab.breaks --all --no-guests   # only the tests that boot no guest: seconds

A break whose edit no longer applies (the code moved on) is reported as such, so the list is kept
in step with the product rather than silently passing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COPY = ("src", "templates", "profiles", "tests", "pyproject.toml")
LAB_RUNS = "tests/providers/azure/test_lab_runs.py"
SEEDS = "tests/test_seeds.py"
PREPARE_GUEST = "tests/platforms/linux/test_prepare_guest.py"
SEED002 = "tests/guestlab/test_seed002.py"


@dataclass(frozen=True)
class Break:
    """``pattern`` (a regular expression matching exactly once in ``path``) replaced by ``replacement``.

    ``path`` may name several files separated by ``|`` (code that is moving between modules): the
    first in which the pattern matches once is edited.
    """

    name: str
    what: str
    path: str
    pattern: str
    replacement: str
    tests: tuple[str, ...]


BREAKS = (
    Break("one-disk-stripe", "a stripe over several disks formats and mounts only the first of them",
          "src/diskbench/platforms/linux/prepare.py",
          r"dev = devices\[0\] if len\(devices\) == 1 else self\._stripe\(devices, prepared, chunk\)",
          "dev = devices[0]",
          (f"{LAB_RUNS}::test_d8ds_striped_writes_stop_at_the_vm_cap",
           f"{PREPARE_GUEST}::test_nvme_raid0_is_built_measured_and_taken_apart")),
    Break("vm-cap-forgotten", "attribution leaves out the VM's uncached limit",
          "src/diskbench/providers/azure/limits/targets.py",
          r'out = _pair\("vm_uncached", iops, mbps, f"\{vm\.size\} uncached", source\)',
          "out = []",
          (f"{LAB_RUNS}::test_d8ds_striped_writes_stop_at_the_vm_cap",)),
    Break("warmup-skipped", "targets with warmup: are measured without warming their cache",
          "src/diskbench/runner/unit.py", r"\n    if warm:\n", "\n    if False:\n",
          (f"{LAB_RUNS}::test_d8ds_warmed_readonly_cache_reads_at_the_vms_cached_cap",)),
    Break("ephemeral-os-off", "the VM is created with a managed OS disk where the profile asks for an ephemeral one",
          "src/diskbench/providers/azure/vmspec.py", r"\n    if d\.ephemeral:\n", "\n    if False:\n",
          (f"{LAB_RUNS}::test_l_series_and_ephemeral_os",)),
    Break("os-cache-off", "the OS disk is created without host caching, whatever the profile says",
          "src/diskbench/providers/azure/vmspec.py",
          r'disk: dict\[str, Any\] = \{"createOption": "FromImage", "caching": d\.caching,',
          'disk: dict[str, Any] = {"createOption": "FromImage", "caching": "None",',
          (f"{LAB_RUNS}::test_e8_family_os_disk_caching_and_the_temp_disk",)),
    Break("nconnect-dropped", "NFS exports are mounted without nconnect=8",
          "src/diskbench/profile/targets.py", r'NFS_OPTIONS = "rw,nconnect=8,hard,', 'NFS_OPTIONS = "rw,hard,',
          (f"{SEEDS}::test_anf_profile_mounts_and_sizes_as_the_article", SEED002)),
    Break("soft-mount", "NFS exports are mounted soft (an I/O may be dropped silently)",
          "src/diskbench/profile/targets.py", r'NFS_OPTIONS = "rw,nconnect=8,hard,',
          'NFS_OPTIONS = "rw,nconnect=8,soft,',
          (f"{SEEDS}::test_anf_profile_mounts_and_sizes_as_the_article", SEED002)),
    Break("randrepeat-kept", "client groups keep fio's randrepeat=1 (every client asks for the same offsets)",
          "src/diskbench/engines/fio/clientserver.py|src/diskbench/plan_group.py",
          r'"extra": \{\*\*(extra|\(w\.extra or \{\}\)), "randrepeat": False\}', r'"extra": {**\1}',
          (f"{SEEDS}::test_every_client_group_job_gets_randrepeat_0_unless_the_profile_says",)),
    Break("randrepeat-dropped", "a workload's randrepeat (extra:) never reaches fio's job file",
          "templates/fio/job.ini.j2", r"\{% for key, value in w\.extra \| dictsort %\}",
          '{% for key, value in w.extra | dictsort if key != "randrepeat" %}',
          (f"{SEEDS}::test_every_client_group_job_gets_randrepeat_0_unless_the_profile_says",
           f"{SEED002}::test_randrepeat_decides_whether_a_repeat_reads_from_the_servers_cache")),
    # (not randseed: fio 3.33 ignores randseed under randrepeat=1, measured: the same offsets with 1, 3, 99999)
    Break("repeats-reseeded", "every repeat after the first draws new random offsets (randrepeat=0 appended), so a "
          "repeat no longer re-reads the offsets the one before read", "templates/fio/job.ini.j2", r"\{% if logs %\}",
          '{% set rep = jobfile.rsplit("-r", 1) %}{% if rep | length == 2 and rep[1] != "1.fio" %}randrepeat=0\n'
          '{% endif %}{% if logs %}',
          (f"{SEED002}::test_randrepeat_decides_whether_a_repeat_reads_from_the_servers_cache",)),
    Break("array-left", "release unmounts but leaves the md array assembled with its superblocks",
          "src/diskbench/platforms/linux/prepare.py",
          r"left = stop_array\(self\.ex, device, devices, uuid\)", "left = None",
          (f"{PREPARE_GUEST}::test_nvme_raid0_is_built_measured_and_taken_apart",
           f"{PREPARE_GUEST}::test_a_failing_unit_still_takes_the_array_apart",
           f"{LAB_RUNS}::test_l_series_nvme_stripes_every_local_nvme")),
    Break("v6-scsi-controller", "NVMe-only sizes (v6) are created with the SCSI disk controller",
          "src/diskbench/providers/azure/vmspec.py", r'if size\.controllers == \["NVMe"\]:\n        return "NVMe"',
          'if size.controllers == ["NVMe"]:\n        return "SCSI"',
          (f"{LAB_RUNS}::test_v6_data_disks_by_lun_and_the_raw_nvme_temp_disk",
           "tests/providers/azure/test_vmspec.py::test_nvme_only_sizes_ask_for_the_nvme_controller")),
    Break("v6-temp-unknown", "the raw NVMe temp disks of v6 sizes are not looked for (no model in the device map)",
          "src/diskbench/providers/azure/devices.py", r"temp_nvme_models=TEMP_NVME_MODELS,", "temp_nvme_models=(),",
          (f"{LAB_RUNS}::test_v6_data_disks_by_lun_and_the_raw_nvme_temp_disk",
           "tests/providers/azure/test_devices.py::test_temp_on_a_v6_size_formats_its_raw_nvme_temp_disks")),
    Break("drain-skipped", "drain_burst: measures at once instead of spending the credits first",
          "src/diskbench/runner/unit.py", r"(def drain_burst\([^)]*\)[^:]*:\n(?:    .*\n)*?)(    if limits and)",
          r"\1    return None\n\2", (f"{LAB_RUNS}::test_drain_burst_spends_the_credits_and_measures_the_baseline",)),
    Break("merge-drops-clients", "a client group's merge sums only the first half of fio's client entries (a "
          "client lost from the sum)", "src/diskbench/engines/fio/clientserver.py",
          r"return HostResults\(parse_fio_document\(doc\), hosts\)",
          'return HostResults(parse_fio_document({**doc, "client_stats": clients[:max(1, len(clients) // 2)]}), hosts)',
          (f"{SEED002}::test_clients_grow_to_the_volume_cap_and_the_mix_falls_towards_writes",)),
)


def apply(brk: Break, root: Path) -> None:
    for name in brk.path.split("|"):
        path = root / name
        text = path.read_text() if path.exists() else ""
        if len(re.findall(brk.pattern, text)) == 1:
            path.write_text(re.sub(brk.pattern, brk.replacement, text))
            return
    raise SystemExit(f"{brk.name}: the edit does not apply to {brk.path} (no single match of {brk.pattern!r}); "
                     "the code moved on: update tests/guestlab/breaks.py")


def copy_checkout(dest: Path) -> None:
    for name in COPY:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, dest / name)


def run_tests(root: Path, tests: tuple[str, ...], guests: bool = True) -> dict[str, bool]:
    """Each test id (or module) -> whether it passed against the copy at ``root`` (guest tests are left
    out without ``guests``: they are then not in the result)."""
    env = {**os.environ, "PYTHONPATH": f"{root / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    passed = {}
    for test in tests:
        marks = [] if guests else ["-m", "not guest"]
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *marks, test],
                             cwd=root, env=env, capture_output=True, text=True, check=False)
        if out.returncode == 5:  # nothing collected: a guest test, left out
            print(f"    {test}: not run (a guest test)", flush=True)
            continue
        tail = [ln for ln in out.stdout.splitlines() if ln.startswith(("FAILED", "ERROR", "E  "))][:6]
        print(f"    {test}: {'passed' if out.returncode == 0 else 'FAILED'} " + " | ".join(tail)[:600], flush=True)
        passed[test] = out.returncode == 0 and " passed" in out.stdout
    return passed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="breaks to apply, one at a time (see --list)")
    parser.add_argument("--all", action="store_true", help="every break")
    parser.add_argument("--list", action="store_true", help="the breaks and the tests each must fail")
    parser.add_argument("--no-guests", action="store_true", help="only the tests that boot no guest (seconds)")
    args = parser.parse_args(argv)
    if args.list or not (args.names or args.all):
        for brk in BREAKS:
            print(f"{brk.name}: {brk.what}\n    must fail: {', '.join(brk.tests)}")
        return 0
    chosen = [b for b in BREAKS if args.all or b.name in args.names]
    unknown = set(args.names) - {b.name for b in BREAKS}
    if unknown:
        parser.error(f"unknown break {sorted(unknown)}; --list shows them")
    caught = True
    for brk in chosen:
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix=f"diskbench-break-{brk.name}-") as tmp:
            root = Path(tmp)
            copy_checkout(root)
            apply(brk, root)
            print(f"{brk.name}: {brk.what}", flush=True)
            passed = run_tests(root, brk.tests, guests=not args.no_guests)
        missed = [t for t, ok in passed.items() if ok]
        caught &= not missed and bool(passed)
        verdict = ("caught" if passed else "no test ran") if not missed else f"NOT caught by {', '.join(missed)}"
        print(f"  -> {verdict} ({time.monotonic() - started:.0f} s)", flush=True)
    return 0 if caught else 1


if __name__ == "__main__":
    raise SystemExit(main())
