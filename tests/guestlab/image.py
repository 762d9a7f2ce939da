"""The lab's guest image: a Debian root filesystem, kernel and initrd for QEMU direct kernel boot.

Building it costs about 90 s (debootstrap), so it is cached by a content hash of its recipe: the package
list, every file in ``files/`` (init, udev rules, sshd and initramfs config) and the constants below. A
changed recipe gives a new hash and so a new image; an unchanged one is reused in about a millisecond.
The debootstrap result is cached on its own (keyed by suite and packages only), so changing lab-init
rebuilds in seconds. Every stage is built in a temporary directory and renamed into place, so a build
killed at any moment never leaves a half image behind. The image holds no SSH host key: every guest
gets its own (see guest.py).

``python -m tests.guestlab.image`` builds or reuses the image and prints its time and size;
``--check`` only says whether a cached image exists; ``--prune`` deletes the images of other recipes.
The cache is ``/var/cache/diskbench-lab/<hash>/`` unless ``DISKBENCH_LAB_CACHE`` names another directory.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

FILES = Path(__file__).resolve().parent / "files"
DEFAULT_CACHE = Path("/var/cache/diskbench-lab")
SUITE = "bookworm"
ROOT_SIZE = "1536M"
ROOT_LABEL = "labroot"
# Part of the hash: bump when the build steps below change in a way the files do not show.
RECIPE_VERSION = 2
# Small config written into the root filesystem (path -> content); hashed with the files.
CONFIG = {
    "etc/hostname": "lab\n",
    "etc/hosts": "127.0.0.1 localhost lab\n",
    "etc/fstab": f"LABEL={ROOT_LABEL} / ext4 defaults 0 1\n",
    "etc/initramfs-tools/conf.d/resume": "RESUME=none\n",
}
# Recipe file -> (path in the guest, mode)
INSTALL = {
    "lab-init": ("sbin/lab-init", 0o755),
    "lab-poweroff": ("sbin/lab-poweroff", 0o755),
    # Under /lib, not /etc: initramfs-tools copies every /etc/udev/rules.d/*.rules into the initrd, which has
    # no `cut` for waagent's LUN program (a stray /dev/disk/azure/scsi1/lun link survived boot that way).
    "61-lab-azure-nvme-model.rules": ("lib/udev/rules.d/61-lab-azure-nvme-model.rules", 0o644),
    "65-lab-vmbus-device-id.rules": ("lib/udev/rules.d/65-lab-vmbus-device-id.rules", 0o644),
    "80-lab-azure-disk.rules": ("lib/udev/rules.d/80-lab-azure-disk.rules", 0o644),
    "sshd-lab.conf": ("etc/ssh/sshd_config.d/lab.conf", 0o644),
    "lab-blacklist.conf": ("etc/modprobe.d/lab-blacklist.conf", 0o644),
    "initramfs-modules": ("etc/initramfs-tools/modules", 0o644),
    "exports": ("etc/exports", 0o644),
}
# The Azure Linux Agent's udev rules as Debian's waagent package ships them; they key on the Hyper-V VMBus
# attribute ATTRS{device_id}, which no QEMU device has: the build makes them read the lab's stand-in,
# ENV{LAB_VMBUS_DEVICE_ID} (files/65-lab-vmbus-device-id.rules), and changes nothing else in them.
WAAGENT_RULES = "lib/udev/rules.d/66-azure-storage.rules"
VMBUS_ATTR, VMBUS_STAND_IN = "ATTRS{device_id}", "ENV{LAB_VMBUS_DEVICE_ID}"
Log = Callable[[str], None]


class ImageError(RuntimeError):
    """The image cannot be built here; the message says what to install or fix."""


@dataclass(frozen=True)
class GuestImage:
    """A built image: the raw root filesystem every guest overlays, and the kernel and initrd to boot."""

    directory: Path
    recipe_hash: str

    @property
    def root_raw(self) -> Path:
        return self.directory / "root.raw"

    @property
    def kernel(self) -> Path:
        return self.directory / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.directory / "initrd.img"

    def allocated_bytes(self) -> int:
        """Disk space the image really takes (root.raw is sparse)."""
        return sum(p.stat().st_blocks * 512 for p in self.directory.iterdir() if p.is_file())


# --- recipe and cache ------------------------------------------------------------------------------

def packages() -> list[str]:
    lines = (FILES / "packages.txt").read_text().splitlines()
    return [s for s in (line.split("#", 1)[0].strip() for line in lines) if s]


def _digest(parts: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def base_hash() -> str:
    """Hash of what debootstrap produces: the suite and the package list."""
    return _digest({"suite": SUITE, "packages": ",".join(packages())})


def recipe_hash() -> str:
    """Hash of the whole recipe: base, every recipe file, the inline config and the build constants."""
    parts = {f"file:{p.name}": p.read_text() for p in sorted(FILES.iterdir()) if p.is_file()}
    parts.update({f"config:{k}": v for k, v in CONFIG.items()})
    parts.update(base=base_hash(), size=ROOT_SIZE, label=ROOT_LABEL, version=str(RECIPE_VERSION),
                 install=json.dumps(INSTALL, sort_keys=True),
                 waagent=f"{WAAGENT_RULES}: {VMBUS_ATTR} -> {VMBUS_STAND_IN}")
    return _digest(parts)


def cache_dir() -> Path:
    return Path(os.environ.get("DISKBENCH_LAB_CACHE") or DEFAULT_CACHE)


def cached_image() -> GuestImage | None:
    """The image of the current recipe if it was built before (complete: it only appears by rename)."""
    image = GuestImage(cache_dir() / recipe_hash(), recipe_hash())
    return image if (image.directory / "recipe.json").is_file() else None


@contextlib.contextmanager
def _build_lock(cache: Path) -> Iterator[None]:
    """One builder at a time per cache; others wait, then find the image built."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _remove_tree(path: Path) -> None:
    """Delete a build directory without ever crossing into a mounted file system.

    Builds mount only inside private mount namespaces (see ``_in_namespace``), so nothing should be
    mounted here; ``--one-file-system`` is the second guard, for /proc or /sys left by older tools.
    """
    if path.exists():
        subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=True)


def _clean_stale(cache: Path) -> None:
    """Leftovers of killed builds (we hold the lock, so no build is running)."""
    for stale in cache.glob(".build-*"):
        _remove_tree(stale)


# --- build steps -----------------------------------------------------------------------------------

def mirror() -> str:
    """The Debian mirror apt uses on this machine (deb822 sources), for a suite-matching stanza."""
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    if sources.is_file():
        for stanza in sources.read_text().split("\n\n"):
            lines = [line for line in stanza.splitlines() if ":" in line and not line.startswith("#")]
            fields = dict(line.split(":", 1) for line in lines)
            suites = fields.get("Suites", "").split()
            if SUITE in suites and "URIs" in fields:
                return fields["URIs"].split()[0]
    return "http://deb.debian.org/debian"


def _run(argv: list[str]) -> None:
    """Run a build step that dies with this process (so a killed build leaves no writer behind)."""
    if argv[0] != "setpriv":
        argv = ["setpriv", "--pdeathsig", "KILL", *argv]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise ImageError(f"{' '.join(argv[3:7])} ... failed (exit {proc.returncode}):\n{tail}")


def _in_namespace(script: str) -> None:
    """Run a shell script in private mount and PID namespaces, tied to this process's life.

    The mounts (proc, sys, dev in the chroot) vanish with the namespace, even on SIGKILL. If this process
    dies, unshare gets SIGKILL (setpriv --pdeathsig), its child, PID 1 of the namespace, gets SIGKILL too
    (--kill-child), and the kernel then kills everything else in the namespace (debootstrap, dpkg), so no
    orphan keeps writing into a build directory the next build will delete.
    """
    _run(["setpriv", "--pdeathsig", "KILL", "unshare", "--mount", "--propagation", "private", "--pid", "--fork",
          "--kill-child", "sh", "-euc", script])


def _debootstrap(rootfs: Path, log: Log) -> None:
    log(f"debootstrap {SUITE} from {mirror()} ({len(packages())} packages)")
    include = ",".join(packages())
    _in_namespace(f"debootstrap --variant=minbase --include={include} {SUITE} {rootfs} {mirror()}")
    # Trim what no test reads: apt's cache and lists, docs, man pages, locales.
    for sub in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man",
                "usr/share/locale", "usr/share/info"):
        for child in (rootfs / sub).glob("*"):
            if child.is_dir() and not child.is_symlink():
                _remove_tree(child)
            else:
                child.unlink()


def _configure(rootfs: Path) -> None:
    """Install the recipe's files and config; drop the package's host keys (each guest brings its own)."""
    for key in (rootfs / "etc/ssh").glob("ssh_host_*"):
        key.unlink()
    for name, (dest, mode) in INSTALL.items():
        target = rootfs / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FILES / name, target)
        target.chmod(mode)
    for dest, content in CONFIG.items():
        (rootfs / dest).write_text(content)
    _waagent_rules(rootfs)
    (rootfs / "export").mkdir(exist_ok=True)
    (rootfs / "root/.ssh").mkdir(mode=0o700, exist_ok=True)
    mdadm_conf = rootfs / "etc/mdadm/mdadm.conf"
    if "AUTO -all" not in mdadm_conf.read_text():  # no auto-assembly of stale arrays at boot
        with mdadm_conf.open("a") as out:
            out.write("AUTO -all\n")
    initramfs = rootfs / "usr/share/initramfs-tools"
    for line in (FILES / "initramfs-disabled.txt").read_text().splitlines():
        rel = line.split("#", 1)[0].strip()
        if rel and (initramfs / rel).exists():
            (initramfs / rel).unlink()
    conf = rootfs / "etc/initramfs-tools/initramfs.conf"
    conf.write_text("".join("MODULES=list\n" if line.startswith("MODULES=") else line + "\n"
                            for line in conf.read_text().splitlines()))


def _waagent_rules(rootfs: Path) -> None:
    """waagent's own 66-azure-storage.rules, reading the VMBus stand-in instead of ATTRS{device_id}."""
    rules = rootfs / WAAGENT_RULES
    if not rules.is_file() or VMBUS_ATTR not in rules.read_text():
        raise ImageError(f"{WAAGENT_RULES} from Debian's waagent package is missing or no longer matches "
                         f"{VMBUS_ATTR}: look at the package's rules and at files/65-lab-vmbus-device-id.rules")
    rules.write_text(rules.read_text().replace(VMBUS_ATTR, VMBUS_STAND_IN))


def _initramfs(rootfs: Path) -> None:
    """The small initrd (MODULES=list, no mdadm hook): 5 MB instead of 16, a second less to boot."""
    r = str(rootfs)
    _in_namespace(f"mount -t proc proc {r}/proc; mount -t sysfs sysfs {r}/sys; mount --bind /dev {r}/dev; "
                  f"chroot {r} update-initramfs -u -k all")


def _finish(rootfs: Path, out: Path) -> None:
    """Kernel and initrd out for direct boot; root.raw straight from the directory (no loop device)."""
    kernels = sorted((rootfs / "boot").glob("vmlinuz-*"))
    initrds = sorted((rootfs / "boot").glob("initrd.img-*"))
    if len(kernels) != 1 or len(initrds) != 1:
        raise ImageError(f"expected one kernel and one initrd in {rootfs}/boot, found {kernels} {initrds}")
    shutil.copyfile(kernels[0], out / "vmlinuz")
    shutil.copyfile(initrds[0], out / "initrd.img")
    raw = out / "root.raw"
    _run(["truncate", "-s", ROOT_SIZE, str(raw)])
    _run(["mkfs.ext4", "-q", "-F", "-L", ROOT_LABEL, "-d", str(rootfs), str(raw)])


def _base_rootfs(cache: Path, log: Log) -> Path:
    """The debootstrapped, trimmed root filesystem, built once per package list."""
    base = cache / f"base-{base_hash()}"
    if not (base / "rootfs").is_dir():
        tmp = cache / f".build-base-{secrets.token_hex(4)}"
        tmp.mkdir()
        _debootstrap(tmp / "rootfs", log)
        os.rename(tmp, base)
    return base / "rootfs"


def check_host() -> None:
    """The tools a build needs, as one clear message."""
    missing = [t for t in ("debootstrap", "mkfs.ext4", "unshare", "setpriv", "chroot") if shutil.which(t) is None]
    if missing:
        raise ImageError(f"missing {', '.join(missing)}: apt-get install -y debootstrap e2fsprogs util-linux")
    if os.geteuid() != 0:
        raise ImageError("building the guest image needs root (debootstrap, chroot)")


def build_image(log: Log = lambda s: None) -> GuestImage:
    """The image of the current recipe: from the cache, or built now (atomically) and cached."""
    found = cached_image()
    if found:
        return found
    check_host()
    cache, digest = cache_dir(), recipe_hash()
    with _build_lock(cache):
        found = cached_image()  # another process may have built it while we waited
        if found:
            return found
        _clean_stale(cache)
        base = _base_rootfs(cache, log)
        tmp = cache / f".build-{digest}-{secrets.token_hex(4)}"
        tmp.mkdir()
        rootfs = tmp / "rootfs"
        log("configuring a copy of the base root filesystem")
        _run(["cp", "-a", "--reflink=auto", str(base), str(rootfs)])
        _configure(rootfs)
        _initramfs(rootfs)
        image_dir = tmp / "image"
        image_dir.mkdir()
        _finish(rootfs, image_dir)
        recipe = {"hash": digest, "suite": SUITE, "packages": packages(), "mirror": mirror(),
                  "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (image_dir / "recipe.json").write_text(json.dumps(recipe, indent=2) + "\n")
        os.rename(image_dir, cache / digest)
        _remove_tree(tmp)
        return GuestImage(cache / digest, digest)


def prune(log: Log = lambda s: None) -> None:
    """Delete cached images and base trees of other recipes (a guest still running keeps its open files)."""
    cache = cache_dir()
    if not cache.is_dir():
        return
    keep = {recipe_hash(), f"base-{base_hash()}"}
    with _build_lock(cache):
        for entry in sorted(cache.iterdir()):
            if entry.is_dir() and entry.name not in keep and not entry.name.startswith("."):
                log(f"removing {entry}")
                _remove_tree(entry)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.guestlab.image", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the image of this recipe is cached")
    parser.add_argument("--prune", action="store_true", help="also delete cached images of other recipes")
    args = parser.parse_args(argv)
    if args.check:
        image = cached_image()
        where = image.directory if image else cache_dir() / recipe_hash()
        print(f"guest image {recipe_hash()}: {'cached' if image else 'not built'} ({where})")
        return 0 if image else 1
    start = time.monotonic()
    try:
        image = build_image(log=lambda s: print(f"  {s}", flush=True))
    except ImageError as exc:
        print(f"guest image: {exc}", file=sys.stderr)
        return 1
    if args.prune:
        prune(log=lambda s: print(f"  {s}", flush=True))
    size = image.allocated_bytes() / 2**20
    print(f"guest image {image.recipe_hash}: ready in {time.monotonic() - start:.1f} s, "
          f"{size:.0f} MiB on disk ({image.directory})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
