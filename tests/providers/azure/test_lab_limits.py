"""diskbench's limit tables against the lab's own, read off Azure's pages: they must agree, and the lab must
never borrow diskbench's tables.

The guest lab enforces the caps of ``lab_limits.py`` (written by hand from Azure's size and disk pages)
while attribution reads diskbench's bundled tables; this test is where the two meet. Every size and
every disk a bundled profile (or a lab test's own profile) uses is compared field by field with what
the lab emulates, so a wrong figure in diskbench's tables fails here instead of being enforced by the
lab and then confirmed by attribution. A second test keeps the lab independent: no lab module imports
diskbench's limit tables or opens their data files.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from diskbench.profile import load_profile
from diskbench.providers.azure.limits.bounds import OS_DISK_DEFAULT_GIB
from diskbench.providers.azure.limits.disks import disk_limits, vm_limits
from diskbench.providers.azure.schema import Machine

from ...conftest import REPO
from .lab_limits import READ_ON, SIZES, TIERS, disk_tier, vm_size

# sizes and disks of the lab tests' own profiles (test_lab_runs.py BOUNDS/DRAIN, the L32s_v2 override)
LAB_ONLY_SIZES = ("Standard_D2ds_v5", "Standard_L32s_v2", "Standard_L16s_v2", "Standard_D2ds_v6")
LAB_ONLY_DISKS = (("Premium_LRS", 1024), ("Premium_LRS", 128), ("Standard_LRS", 16384), ("Premium_LRS", 30))


def _bundled_azure_machines() -> list[tuple[str, Machine]]:
    out = []
    for path in sorted((REPO / "profiles").glob("*.yaml")):
        for m in load_profile(path.stem).profile.machines:
            if isinstance(m, Machine):
                out.append((path.stem, m))
    return out


MACHINES = _bundled_azure_machines()
SIZES_USED = sorted({m.size for _, m in MACHINES} | set(LAB_ONLY_SIZES))
DISKS_USED = sorted({(m.os_disk.type, m.os_disk.size_gb or OS_DISK_DEFAULT_GIB) for _, m in MACHINES
                     if not m.os_disk.ephemeral}
                    | {(d.type, d.size_gb) for _, m in MACHINES for d in m.data_disks} | set(LAB_ONLY_DISKS))


def test_the_bundled_profiles_use_azure_machines() -> None:
    """The comparison below is only as good as what it compares: the seed profiles' sizes are all in it."""
    assert {"Standard_D8ds_v4", "Standard_E8ds_v4", "Standard_E8as_v4", "Standard_E8_v4", "Standard_L8s_v2",
            "Standard_D32s_v5"} <= set(SIZES_USED)
    assert ("Premium_LRS", 1024) in DISKS_USED and ("Standard_LRS", 32) in DISKS_USED


@pytest.mark.parametrize("size", SIZES_USED)
def test_vm_limits_agree_with_the_published_pages(size: str) -> None:
    ours, lab = vm_limits(size), vm_size(size)
    assert ours is not None, size
    got = {"uncached_iops": ours.uncached_iops, "uncached_mbps": ours.uncached_mbps,
           "cached_iops": ours.cached_iops or ours.temp_read_iops,
           "cached_mbps": ours.cached_mbps or ours.temp_read_mbps,
           "temp": ours.temp_gib > 0 and not ours.temp_nvme, "temp_gib": round(ours.temp_gib), "nvme": ours.nvme_disks,
           "temp_nvme": ours.temp_disks if ours.temp_nvme and not ours.nvme_disks else 0}
    published = {"uncached_iops": lab.uncached_iops, "uncached_mbps": lab.uncached_mbps,
                 "cached_iops": lab.cached_iops, "cached_mbps": lab.cached_mbps,
                 "temp": lab.temp_gib > 0 and not lab.temp_nvme, "temp_gib": lab.temp_gib, "nvme": lab.nvme,
                 "temp_nvme": lab.temp_nvme}
    assert got == published, f"{size}: diskbench's table differs from {lab.page}"


@pytest.mark.parametrize("storage_type, size_gib", DISKS_USED)
def test_disk_limits_agree_with_the_published_pages(storage_type: str, size_gib: int) -> None:
    ours, lab = disk_limits(storage_type, size_gib), disk_tier(storage_type, size_gib)
    got = (ours.tier, ours.size_gib, ours.iops, ours.mbps, ours.burst_iops,
           ours.burst_mbps if ours.burst_mbps is None else round(ours.burst_mbps))
    assert got == (lab.tier, lab.size_gib, lab.iops, lab.mbps, lab.burst_iops, lab.burst_mbps), \
        f"{storage_type} {size_gib} GiB: diskbench's table differs from {lab.page}"


def test_every_lab_figure_names_its_page() -> None:
    for size in SIZES.values():
        assert size.page.url.startswith("https://learn.microsoft.com/") and size.page.ms_date, size
    for tiers in TIERS.values():
        assert all(t.page.url.startswith("https://learn.microsoft.com/") for t in tiers)
    assert READ_ON


# Modules of the guest lab and of the lab clouds: what they may not import or open.
LAB_MODULES = sorted([*(REPO / "tests" / "guestlab").rglob("*.py"),
                      REPO / "tests" / "providers" / "azure" / "lab_cloud.py",
                      REPO / "tests" / "providers" / "azure" / "lab_limits.py",
                      REPO / "tests" / "providers" / "azure" / "test_lab_runs.py",
                      REPO / "tests" / "providers" / "azure" / "test_lab_seed002.py",
                      REPO / "tests" / "providers" / "openstack" / "test_lab_runs.py"])
TABLES = ("diskbench.providers.azure.limits", "diskbench.providers.azure.limits.disks",
          "diskbench.providers.azure.limits.vms", "diskbench.providers.azure.limits.targets",
          "diskbench.providers.azure.limits.bounds", "diskbench.providers.azure.skus",
          "diskbench.providers.openstack.limits")
DATA_FILES = ("disk-types.json", "sizes.json")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize("path", [p for p in LAB_MODULES if p.exists()], ids=lambda p: str(p.relative_to(REPO)))
def test_the_lab_never_reads_diskbenchs_limit_tables(path: Path) -> None:
    """The lab's caps come from lab_limits.py only: importing diskbench's tables (or the package that
    re-exports them) or opening their data files would make the lab circular again."""
    borrowed = {n for n in _imports(path) if any(n == t or n.startswith(t + ".") for t in TABLES)
                or n in ("diskbench.providers.azure.vm_limits", "diskbench.providers.azure.disk_limits")}
    assert not borrowed, f"{path.name} imports {sorted(borrowed)}"
    text = path.read_text()
    assert not [f for f in DATA_FILES if f in text], f"{path.name} names diskbench's limit data files"


def test_the_guard_sees_an_import() -> None:
    """The guard above can fail: a module that imports the tables is caught."""
    probe = REPO / "tests" / "guestlab" / "__init__.py"
    assert "diskbench.providers.azure.limits" not in _imports(probe)
    tree = "from diskbench.providers.azure.limits import disk_limits\n"
    assert "diskbench.providers.azure.limits.disk_limits" in {
        f"{n.module}.{a.name}" for n in ast.walk(ast.parse(tree)) if isinstance(n, ast.ImportFrom) for a in n.names}
