"""Storage targets on a Linux host: find the device, refuse to destroy data, make filesystem and mount.

The safety rule: diskbench never creates a filesystem, builds an array or runs a raw write job
on a device that is mounted, has partitions, carries any signature (filesystem, RAID, LVM,
partition table) or holds the root filesystem, unless that exact device is named under
``destroy_data_on``, or the signature is one this same run made (resume after a kill). Whatever
it mounts or assembles it writes down in the run's journal, and unmounts and stops at the end.
A target is locked on the host while a run uses it: two runs never measure each other's I/O.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import DiskbenchError, ExecutionError, SafetyError
from ...executors.base import Executor
from ...profile import TargetModel
from ...profile.targets import (
    DeviceTarget,
    DirTarget,
    LunsTarget,
    LunTarget,
    NfsTarget,
    NvmeTarget,
    ScratchTarget,
    StripeTarget,
    TempTarget,
)
from ...units import parse_size
from ..base import DeviceMap, Journal, Platform, Prepared, Preparer

DEFAULT_CHUNK = "512k"  # mdadm's own default: local NVMe, the OVHcloud article
DATA_DISK_CHUNK = "64k"  # striped cloud data disks: Azure's guidance for Premium SSD volumes
TEMP_FS = "ext4"  # raw temp disks: what the cloud's own tools make of them (Azure's azure-ephemeral-disk-setup)
# How long a release keeps trying to unmount and to stop an array. Right after an unmount udev probes
# the array, which then refuses to stop ("cannot get exclusive access"); on a loaded host that lasted
# longer than the ten 0.5 s retries there were, and the array stayed (a lab guest's md127 after a run).
RELEASE_WAIT_S = 60.0


class LinuxPreparer(Preparer):
    def __init__(self, ex: Executor, *, platform: Platform, allowed: list[str], name: str, run_id: str,
                 scratch_base: str | None = None, line: Callable[[str], None] | None = None,
                 devices: DeviceMap | None = None, journal: Journal | None = None,
                 exclusive: bool = True) -> None:
        self.ex = ex
        self.map = devices or DeviceMap()
        self.platform = platform
        self.allowed_raw = allowed
        self.name = name
        self.run_id = run_id
        self.scratch_base = scratch_base
        self.line = line or (lambda _msg: None)
        self.journal = journal or Journal()
        self.exclusive = exclusive
        self._names: dict[str, int] = {}
        self._flush_sets: set[str] = set()  # flush_cache's data sets laid out so far (platforms/linux/flush.py)

    # --- helpers ----------------------------------------------------------------------------
    def _ok(self, argv: list[str], what: str, timeout: float = 300) -> str:
        out = self.ex.run(argv, timeout=timeout, privileged=True)
        if out.returncode != 0:
            detail = (out.stderr or out.stdout).strip().splitlines()
            raise ExecutionError(f"{self.ex.name}: {what} failed: {detail[-1] if detail else out.returncode}")
        return out.stdout

    def canonical(self, dev: str) -> str:
        out = self.ex.run(["readlink", "-f", dev])
        path = out.stdout.strip()
        if out.returncode != 0 or not path:
            raise ExecutionError(f"{self.ex.name}: device {dev} does not exist")
        return path

    def _allowed(self) -> set[str]:
        allowed = set()
        for dev in self.allowed_raw:
            try:
                allowed.add(self.canonical(dev))
            except ExecutionError:
                continue
        return allowed

    # --- safety -----------------------------------------------------------------------------
    def holds_data(self, dev: str) -> list[str]:
        """Why writing to ``dev`` would destroy something; empty when it looks blank."""
        reasons: list[str] = []
        out = self.ex.run(["lsblk", "-J", "-p", "-o", "NAME,TYPE,FSTYPE,MOUNTPOINT,PTTYPE", dev])
        if out.returncode != 0:
            raise ExecutionError(f"{self.ex.name}: {dev} is not a block device ({out.stderr.strip()})")
        node: dict[str, Any] = json.loads(out.stdout)["blockdevices"][0]
        mounted = [n["mountpoint"] for n in _walk(node) if n.get("mountpoint")]
        if mounted:
            reasons.append(f"mounted at {', '.join(mounted)}")
        children = [c["name"] for c in node.get("children") or []]
        if children:
            reasons.append(f"has partitions or holders ({', '.join(children)})")
        probe = self.ex.run(["blkid", "-p", "-o", "export", dev], privileged=True)
        fields = dict(line.split("=", 1) for line in probe.stdout.splitlines() if "=" in line)
        for key in ("TYPE", "PTTYPE"):
            if key in fields and not self._made_here(dev, fields):
                reasons.append(f"carries a {fields[key]} signature")
        # blkid says 2 both for "nothing found" and for a device it could not open: only an
        # exit of 0 or a clean 2 on a readable device counts as looked at.
        readable = self.ex.run(["test", "-r", dev], privileged=True).returncode == 0
        errors = [ln for ln in probe.stderr.strip().splitlines() if "error" in ln.lower() or "denied" in ln.lower()]
        if not readable or probe.returncode not in (0, 2) or errors:
            last = (errors or probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[-1]
            reasons.append(f"cannot be probed, so may hold data ({last if readable else 'not readable'})")
        if dev in self.root_disks():
            reasons.append("holds the root filesystem")
        return reasons

    def _made_here(self, dev: str, fields: dict[str, str]) -> bool:
        """Whether ``dev``'s signature is one an earlier attempt of this run made: its file system
        (by UUID) or its membership of the run's array (the array's UUID)."""
        uuid = uuid_hex(fields.get("UUID", ""))
        if not uuid:
            return False
        made = [e for e in self.journal.ours("filesystem") if e["what"] == dev]
        made += [e for e in self.journal.ours("array") if dev in e["detail"].get("members", [])]
        return any(uuid_hex(str(e["detail"].get("uuid", ""))) == uuid for e in made)

    def root_disks(self) -> set[str]:
        src = self.ex.run(["findmnt", "-n", "-o", "SOURCE", "/"]).stdout.strip()
        if not src.startswith("/dev/"):
            return set()
        out = self.ex.run(["lsblk", "-J", "-p", "-s", "-o", "NAME", src])
        try:
            return {n["name"] for root in json.loads(out.stdout)["blockdevices"] for n in _walk(root)}
        except (ValueError, KeyError):
            return set()

    def require_writable(self, devices: list[str]) -> None:
        allowed = self._allowed()
        for dev in devices:
            if dev in allowed:
                continue
            reasons = self.holds_data(dev)
            if reasons:
                raise SafetyError(
                    f"{self.ex.name}: refusing to write to {dev}: it {'; '.join(reasons)}",
                    hint=f"if its data may be destroyed, name it under destroy_data_on: [{dev}] "
                         f"or pass --destroy-data-on {dev}")

    # --- targets ----------------------------------------------------------------------------
    def prepare(self, target: TargetModel, writes: bool) -> Prepared:
        if isinstance(target, ScratchTarget):
            path = self.platform.make_scratch_dir(self.ex, self.scratch_base)
            entry = self.journal.made("scratch", path)
            return Prepared(directory=path, cleanup=[lambda: self._removed(path, entry)])
        if isinstance(target, DirTarget):
            if not self.platform.is_dir(self.ex, target.dir):
                raise ExecutionError(f"{self.ex.name}: target directory {target.dir} does not exist",
                                     hint="create it, or name an existing directory")
            self._lock(target.label, self.canonical(target.dir))
            return Prepared(directory=target.dir)
        if isinstance(target, TempTarget):
            return self._temp(target, writes)
        if isinstance(target, NfsTarget):
            return self._nfs(target)
        assert isinstance(target, (DeviceTarget, StripeTarget, NvmeTarget, LunTarget, LunsTarget))
        devices = self.devices(target)
        for dev in devices:  # before anything is written: one run per device at a time
            self._lock(target.label, dev)
        if target.raw:
            if writes:
                self.require_writable(devices)
            if len(devices) != 1:
                raise DiskbenchError(f"{self.ex.name}: raw: true takes one device, not {len(devices)}")
            return Prepared(filename=devices[0], devices=devices)
        self.require_writable(devices)
        prepared = Prepared(devices=devices)
        chunk = getattr(target, "chunk", None) or (DATA_DISK_CHUNK if isinstance(target, LunsTarget) else DEFAULT_CHUNK)
        try:
            dev = devices[0] if len(devices) == 1 else self._stripe(devices, prepared, chunk)
            self._mkfs(dev, target.fs or "xfs")
            prepared.directory = self._mount(dev, target.mount, prepared)
        except BaseException:
            prepared.release()
            raise
        return prepared

    def _lock(self, label: str, path: str) -> None:
        """Hold ``path`` on the host for this run (until the connection closes); refuse when
        another diskbench run holds it, naming that run."""
        if not self.exclusive:
            return
        holder = self.ex.hold(lock_name(path), f"run {self.run_id}, pid {os.getpid()} on {socket.gethostname()}",
                              reclaim=f"run {self.run_id},")
        if holder is not None:
            raise ExecutionError(f"{self.ex.name}: {label} is in use by another diskbench run ({holder})",
                                 hint="wait until it has finished, or choose another target; two runs at "
                                      "once would measure each other's I/O")

    def _unique(self, what: str) -> str:
        """``diskbench-RUN-MACHINE`` for this machine's first array or mount point, then with ``-2``,
        ``-3``: two device targets of one machine never share a mount point or an array name."""
        self._names[what] = self._names.get(what, 0) + 1
        n = self._names[what]
        return f"diskbench-{self.run_id[-4:]}-{self.name}" + (f"-{n}" if n > 1 else "")

    def _removed(self, path: str, entry: int) -> None:
        self.platform.remove_tree(self.ex, path)
        self.journal.undone(entry)

    def devices(self, target: TargetModel) -> list[str]:
        if isinstance(target, DeviceTarget):
            return [self.canonical(target.device)]
        if isinstance(target, StripeTarget):
            devs = [self.canonical(d) for d in target.stripe]
            if len(set(devs)) != len(devs):
                raise DiskbenchError(f"{self.ex.name}: stripe lists the same device twice")
            return devs
        if isinstance(target, LunTarget):
            return [self._lun(target.lun)]
        if isinstance(target, LunsTarget):
            return [self._lun(n) for n in target.luns]
        if isinstance(target, NvmeTarget):
            return self._local_nvme()
        raise DiskbenchError(f"target kind {target.kind} has no devices")

    def _lun(self, n: int) -> str:
        known = [self.map.luns[n]] if n < len(self.map.luns) else []
        paths = [pattern.format(n=n) for pattern in [*known, *self.map.lun_paths]]
        for path in paths:
            if self.ex.run(["test", "-e", path]).returncode == 0:
                return self.canonical(path)
        found = self._lun_namespace(n, paths)
        if found is not None:
            return found
        raise ExecutionError(f"{self.ex.name}: no data disk at LUN {n}",
                             hint=self.map.lun_hint or "is the disk attached?")

    def _lun_namespace(self, n: int, tried: list[str]) -> str | None:
        """LUN ``n`` when no link names it (an image without the cloud's udev rules): the namespace whose
        nsid is n + the map's offset on the NVMe controller of one of the map's models (Azure's NVMe sizes:
        namespace 1 is the OS disk, LUN n is namespace n+2). The nsid is the kernel's (``/sys/class/block/
        NAME/nsid``), not the n in nvme0nN. None when the machine has no such controller; an error when the
        controller is there but holds no such namespace, or two controllers do."""
        if not self.map.lun_namespace_models:
            return None
        disks = self._disks_of_models(self.map.lun_namespace_models)
        if not disks:
            return None
        want = n + self.map.lun_namespace_offset
        names = [d.rsplit("/", 1)[-1] for d in disks]
        out = self.ex.run(["grep", "-H", "", *(f"/sys/class/block/{name}/nsid" for name in names)])
        nsids: dict[str, str] = {}
        for line in out.stdout.splitlines():
            path, _, value = line.partition(":")
            nsids[path.rsplit("/", 2)[-2] if path.endswith("/nsid") else path] = value.strip()
        hits = [d for d, name in zip(disks, names, strict=True) if nsids.get(name) == str(want)]
        models = " or ".join(f"'{m}'" for m in self.map.lun_namespace_models)
        where = " or ".join(tried) or "(no known place)"
        if len(hits) > 1:
            raise ExecutionError(f"{self.ex.name}: LUN {n} is ambiguous: namespace {want} is on several NVMe "
                                 f"{models} controllers ({', '.join(hits)})", hint="name the disk with device:")
        if not hits:
            held = ", ".join(f"{name} is {nsids.get(name) or '?'}" for name in names)
            raise ExecutionError(f"{self.ex.name}: no data disk at LUN {n}: nothing at {where}, and the NVMe {models} "
                                 f"controller has no namespace {want} (LUN n is namespace n+"
                                 f"{self.map.lun_namespace_offset}; its namespaces: {held})",
                                 hint="is the disk attached at that LUN?")
        self.line(f"{self.ex.name}: LUN {n} is {hits[0]}, namespace {want} of the NVMe {models} controller "
                  f"(nothing at {where}: the image lacks the udev rules that make it)")
        return hits[0]

    def _disks_of_models(self, models: tuple[str, ...]) -> list[str]:
        """The whole disks (``lsblk -d``) whose model is one of ``models`` (case and padding aside), in name order."""
        out = self.ex.run(["lsblk", "-J", "-d", "-p", "-o", "NAME,TYPE,MODEL"])
        if out.returncode != 0:
            return []
        wanted = {m.strip().lower() for m in models}
        found = [d["name"] for d in json.loads(out.stdout)["blockdevices"]
                 if d.get("type") == "disk" and str(d.get("model") or "").strip().lower() in wanted]
        return sorted(found, key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)])

    def _local_nvme(self) -> list[str]:
        out = self.ex.run(["lsblk", "-J", "-d", "-p", "-o", "NAME,TYPE,MODEL"])
        roots = self.root_disks()
        found = [d["name"] for d in json.loads(out.stdout)["blockdevices"]
                 if d["type"] == "disk" and "/nvme" in d["name"] and d["name"] not in roots
                 and not any(m in str(d.get("model") or "").lower() for m in self.map.nvme_exclude_models)]
        if not found:
            raise ExecutionError(f"{self.ex.name}: no local NVMe device besides the OS disk")
        return found

    def _temp(self, target: TempTarget, writes: bool) -> Prepared:
        """The temp disk where the image mounted it (the Azure agent's /mnt on SCSI sizes); else the raw
        NVMe temp disks of sizes whose temp disks come unformatted (Azure v6), which diskbench formats
        and mounts itself like a device target (ext4, striped if several), or hands to the engine raw
        when the target asks for it (``raw: true``: the disk, or the RAID0 over several; refused when the
        temp disk is mounted, which is not raw). The user named them through ``temp``, so they may be
        written: only one that holds the root filesystem or carries partitions or holders someone else
        made is refused."""
        mount = self._temp_mount()
        if mount is not None and target.raw:
            raise DiskbenchError(f"{self.ex.name}: temp: raw: true takes a temp disk that comes raw; this one is "
                                 f"formatted and mounted at {mount}", hint="leave raw: out to measure it there")
        if mount is not None:
            directory = f"{mount.rstrip('/')}/diskbench"
            self._ok(["mkdir", "-p", directory], f"mkdir {directory}")
            self._lock(target.label, directory)
            return Prepared(directory=directory)
        devices = self._raw_temp()
        if not devices:
            where = " or ".join([*self.map.temp_paths, *self.map.temp_mounts,
                                 *(f"an NVMe disk of model '{m}'" for m in self.map.temp_nvme_models)])
            raise ExecutionError(f"{self.ex.name}: no temp (resource) disk found at {where or '(no known place)'}",
                                 hint=self.map.temp_hint or "this machine may have none")
        for dev in devices:  # before anything is written: one run per device at a time
            self._lock(target.label, dev)
        self._temp_writable(devices)
        if not target.raw:
            self.line(f"{self.ex.name}: the temp disk{'s' if len(devices) > 1 else ''} {', '.join(devices)} "
                      "came raw: formatting")
        prepared = Prepared(devices=devices)
        try:
            dev = devices[0] if len(devices) == 1 else self._stripe(devices, prepared, DEFAULT_CHUNK)
            if target.raw:  # the engine's own: the disk, or the array over all of them (the VM's temp limits)
                prepared.filename = dev
                return prepared
            self._mkfs(dev, TEMP_FS)
            prepared.directory = self._mount(dev, None, prepared)
        except BaseException:
            prepared.release()
            raise
        return prepared

    def _temp_mount(self) -> str | None:
        """Where the image mounted the temp disk: a known partition's mount, else a known mount point."""
        for path in self.map.temp_paths:
            out = self.ex.run(["findmnt", "-n", "-o", "TARGET", "-S", path])
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip().splitlines()[0]
        for point in self.map.temp_mounts:
            if self.ex.run(["mountpoint", "-q", point]).returncode == 0:
                return point
        return None

    def _raw_temp(self) -> list[str]:
        """The whole disks whose model is one of the map's raw temp disk models, in name order."""
        if not self.map.temp_nvme_models:
            return []
        found = self._disks_of_models(self.map.temp_nvme_models)
        roots = self.root_disks() if found else set()
        return [d for d in found if d not in roots]

    def _temp_writable(self, devices: list[str]) -> None:
        """A raw temp disk may be written (the user named it through ``temp``), a filesystem on it
        included; not one whose partitions or holders (an array, a volume group) someone else made."""
        for dev in devices:
            out = self.ex.run(["lsblk", "-J", "-p", "-o", "NAME,TYPE,FSTYPE,MOUNTPOINT,PTTYPE", dev])
            if out.returncode != 0:
                raise ExecutionError(f"{self.ex.name}: {dev} is not a block device ({out.stderr.strip()})")
            node: dict[str, Any] = json.loads(out.stdout)["blockdevices"][0]
            children = [c["name"] for c in node.get("children") or []]
            mounted = [n["mountpoint"] for n in _walk(node) if n.get("mountpoint")]
            if children or mounted:
                what = (f"mounted at {', '.join(mounted)}" if mounted
                        else f"has partitions or holders ({', '.join(children)})")
                raise SafetyError(f"{self.ex.name}: refusing to format the temp disk {dev}: it {what}",
                                  hint="something else set it up: undo that, or measure it with dir: on its mount")

    def _stripe(self, devices: list[str], prepared: Prepared, chunk: str) -> str:
        if self.ex.run(["test", "-e", "/proc/mdstat"]).returncode != 0:  # md may be a module not loaded yet
            self.ex.run(["modprobe", "raid0"], privileged=True)
        if self.ex.run(["test", "-e", "/proc/mdstat"]).returncode != 0:
            raise ExecutionError(f"{self.ex.name}: this kernel has no md RAID support (/proc/mdstat is "
                                 "missing), so diskbench cannot stripe " + ", ".join(devices),
                                 hint="load the raid0 module (modprobe raid0) or use a kernel with CONFIG_MD")
        if not self.platform.which(self.ex, "mdadm", privileged=True):
            raise ExecutionError(f"{self.ex.name}: mdadm is not installed", hint="apt-get install -y mdadm")
        md = f"/dev/md/{self._unique('md')}"
        self.line(f"{self.ex.name}: building RAID0 {md} from {', '.join(devices)}")
        self._ok(["mdadm", "--create", md, "--run", "--level=0", "--metadata=1.2",
                  f"--chunk={parse_size(chunk) // 1024}", f"--raid-devices={len(devices)}", "--homehost=any",
                  *devices], "mdadm --create")
        detail = self.ex.run(["mdadm", "--detail", "--export", md], privileged=True).stdout
        uuid = dict(ln.split("=", 1) for ln in detail.splitlines() if "=" in ln).get("MD_UUID", "")
        device = self.canonical(md)  # /dev/md127: the /dev/md/ link is udev's, and udev may be rewriting it
        entry = self.journal.made("array", md, members=devices, uuid=uuid, device=device)

        def stop() -> None:
            left = stop_array(self.ex, device, devices, uuid)
            if left is not None:
                self.line(f"{self.ex.name}: could not stop {md} ({left}); stop it with mdadm --stop {device} "
                          f"and mdadm --zero-superblock {' '.join(devices)}")
                return
            self.journal.undone(entry)

        prepared.cleanup.append(stop)
        return device

    def _mkfs(self, dev: str, fs: str) -> None:
        # No discard at mkfs, as the seed articles do: discarding a cloud disk can take minutes.
        argv = ["mkfs.xfs", "-f", "-K", dev] if fs == "xfs" else ["mkfs.ext4", "-F", "-q", "-E", "nodiscard", dev]
        self.line(f"{self.ex.name}: creating {fs} on {dev}")
        self._ok(argv, f"mkfs.{fs} {dev}")
        uuid = self.ex.run(["blkid", "-p", "-s", "UUID", "-o", "value", dev], privileged=True).stdout.strip()
        self.journal.made("filesystem", dev, fs=fs, uuid=uuid)  # resume knows it for its own

    def _mount(self, dev: str, mount: str | None, prepared: Prepared) -> str:
        point = mount or f"/mnt/{self._unique('mnt')}"
        self._free_mount_point(point)
        self._ok(["mkdir", "-p", point], f"mkdir {point}")
        self._ok(["mount", dev, point], f"mount {dev} {point}")
        entry = self.journal.made("mount", point, device=dev, made_point=mount is None)

        def unmount() -> None:
            if unmount_point(self.ex, point):
                self.journal.undone(entry)
            else:
                self.line(f"{self.ex.name}: could not unmount {point}; unmount it with umount {point}")
            if mount is None:
                self.ex.run(["rmdir", point], privileged=True)

        prepared.cleanup.append(unmount)
        self._ok(["chmod", "1777", point], f"chmod {point}")
        return point

    def _free_mount_point(self, point: str) -> None:
        """Mounting over a folder hides what is in it (``mount: /etc`` would hide the system's
        configuration): the mount point is new, or an empty folder that nothing is mounted on."""
        q = shlex.quote(point)
        out = self.ex.run(["sh", "-c", f"if mountpoint -q {q}; then echo mounted; "
                                       f"elif [ -e {q} ] && [ -n \"$(ls -A {q} 2>/dev/null | head -c1)\" ]; "
                                       f"then echo full; elif [ -e {q} ] && [ ! -d {q} ]; then echo file; fi"])
        why = {"mounted": "something is mounted there", "full": "it is a folder that is not empty",
               "file": "it is not a folder"}.get(out.stdout.strip())
        if why:
            raise SafetyError(f"{self.ex.name}: refusing to mount on {point}: {why}",
                              hint="name an empty or new folder as mount:, or leave mount: out")


    def _nfs(self, target: NfsTarget) -> Prepared:
        """Mount the export; each client writes in its own folder (several mount one export)."""
        point = target.mount or f"/mnt/diskbench-{self.run_id[-4:]}-nfs"
        prepared = Prepared()
        self._free_mount_point(point)
        self._ok(["mkdir", "-p", point], f"mkdir {point}")
        self.line(f"{self.ex.name}: mounting {target.nfs} on {point} ({target.options})")
        self._ok(["mount", "-t", "nfs", "-o", target.options, target.nfs, point], f"mount {target.nfs}", 120)
        entry = self.journal.made("mount", point, nfs=target.nfs, made_point=target.mount is None)

        def unmount() -> None:
            if self.ex.run(["umount", "-f", point], privileged=True, timeout=120).returncode == 0:
                self.journal.undone(entry)
            if target.mount is None:
                self.ex.run(["rmdir", point], privileged=True)

        prepared.cleanup.append(unmount)
        seen = self.ex.run(["findmnt", "-no", "OPTIONS", point]).stdout.strip()
        self.line(f"{self.ex.name}: {target.nfs} mounted with {seen or '?'}")
        folder = f"{point}/diskbench-{self.run_id[-4:]}-{self.name}"
        try:
            _check_nconnect(self.ex.name, target, seen)
            self._ok(["mkdir", "-p", folder], f"mkdir {folder}")
            self._ok(["chmod", "1777", folder], f"chmod {folder}")
        except BaseException:
            prepared.release()
            raise
        entry = self.journal.made("scratch", folder)
        prepared.cleanup.append(lambda: self._removed(folder, entry))
        prepared.directory = folder
        return prepared

    def flush_cache(self, where: Prepared, size: int, art: Path, name: str = "flush") -> None:
        """``flush_cache`` before a job on ``where`` (platforms/linux/flush.py): its separate data set
        laid out once per run in a folder beside the job's files, written down in the journal and
        removed with the target."""
        from .flush import flush

        if size and where.directory is None:
            raise ExecutionError(f"{self.ex.name}: flush_cache lays out a data set beside the job's files; "
                                 f"{where.filename} is a raw device",
                                 hint="flush_cache: true drops the page cache only")
        folder = f"{(where.directory or '').rstrip('/')}/diskbench-flush-{self.run_id[-4:]}"
        laid_out = folder in self._flush_sets
        if size and not laid_out:
            entry = self.journal.made("scratch", folder)
            self._flush_sets.add(folder)

            def remove() -> None:
                self._flush_sets.discard(folder)
                self._removed(folder, entry)

            where.cleanup.append(remove)
        flush(self.ex, folder, size, art, name, laid_out=laid_out, line=self.line)

    def flush_set_bytes(self, size: int) -> int:
        """The set as ``flush.py`` writes it: ``FILES`` files of whole MiB, at least one MiB each."""
        from .flush import FILES, MIB, file_mib

        return FILES * file_mib(size) * MIB


def _check_nconnect(host: str, target: NfsTarget, seen: str) -> None:
    """The mount has the TCP connections asked for: the kernel shares one set per NFS server and version,
    made by the first mount, so a mount of a server already mounted on the host gets that mount's
    nconnect, whatever it asks (an nconnect comparison would compare nothing)."""
    if not seen:
        return
    asked, got = _nconnect(target.options), _nconnect(seen)
    if asked != got:
        raise ExecutionError(f"{host}: {target.nfs} was mounted with nconnect={got}, not {asked}: the host has "
                             "another mount of the same server, whose connections every mount of it shares",
                             hint="unmount the other mount of that server first")


def _nconnect(options: str) -> int:
    """The TCP connections of a mount's options (1 without nconnect=)."""
    found = re.search(r"(?:^|,)nconnect=(\d+)", options)
    return int(found[1]) if found else 1


def _settle(ex: Executor, sleep: Callable[[float], None]) -> None:
    """Let udev finish with the device (its probes hold it open), then wait a moment."""
    with contextlib.suppress(DiskbenchError):
        ex.run(["sh", "-c", "udevadm settle --timeout=5 2>/dev/null"], privileged=True, timeout=30)
    sleep(0.5)


def unmount_point(ex: Executor, point: str, *, wait_s: float = RELEASE_WAIT_S,
                  sleep: Callable[[float], None] = time.sleep) -> bool:
    """Unmount ``point`` (once nothing is mounted there any more it is done), trying again while the
    kernel says it is busy, until ``wait_s`` has passed; True when nothing is mounted there."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            if ex.run(["mountpoint", "-q", point]).returncode != 0:
                return True
            ex.run(["umount", point], privileged=True, timeout=120)
        except DiskbenchError:
            pass
        if time.monotonic() >= deadline:
            try:
                return ex.run(["mountpoint", "-q", point]).returncode != 0
            except DiskbenchError:
                return False
        _settle(ex, sleep)


def stop_array(ex: Executor, device: str, members: list[str], uuid: str = "", *, ours_only: bool = False,
               wait_s: float = RELEASE_WAIT_S, sleep: Callable[[float], None] = time.sleep) -> str | None:
    """Stop the md array ``device`` and zero the superblocks on its ``members``; None once the host
    confirms both (the array is gone from /proc/mdstat, ``mdadm --examine`` finds no superblock on any
    member), else what is left. Every step is tried again until ``wait_s`` has passed, also after a
    command that failed to come back: an array left assembled holds its disks until someone notices.

    ``uuid``: the array's; any other active array with it is stopped too (a name that moved). With
    ``ours_only`` only members whose superblock carries ``uuid`` are zeroed (a killed run's array: its
    disks may hold someone else's array by now).
    """
    deadline = time.monotonic() + wait_s
    while True:
        try:
            left = _stop_once(ex, device, members, uuid, ours_only)
        except DiskbenchError as exc:
            left = f"{exc}"
        if left is None or time.monotonic() >= deadline:
            return left
        _settle(ex, sleep)


def _stop_once(ex: Executor, device: str, members: list[str], uuid: str, ours_only: bool) -> str | None:
    for name in _active_arrays(ex, device, uuid):
        ex.run(["mdadm", "--stop", f"/dev/{name}"], privileged=True, timeout=60)
    still = _active_arrays(ex, device, uuid)
    if still:
        return f"{', '.join(f'/dev/{n}' for n in still)} still active"
    carrying = [m for m in members if _superblock(ex, m, uuid, ours_only)]
    if carrying:
        ex.run(["mdadm", "--zero-superblock", *carrying], privileged=True, timeout=60)
        carrying = [m for m in carrying if _superblock(ex, m, uuid, ours_only)]
    return f"an md superblock is still on {', '.join(carrying)}" if carrying else None


def _active_arrays(ex: Executor, device: str, uuid: str) -> list[str]:
    """The kernel names (md127) of active arrays that are ``device`` or carry ``uuid``."""
    mdstat = ex.run(["cat", "/proc/mdstat"])
    names = [ln.split()[0] for ln in mdstat.stdout.splitlines() if re.match(r"^md\S* : ", ln)]
    own = device.rsplit("/", 1)[-1]
    found = [n for n in names if n == own]
    for name in (n for n in names if n != own and uuid):
        detail = ex.run(["mdadm", "--detail", "--export", f"/dev/{name}"], privileged=True).stdout
        if uuid_hex(_fields(detail).get("MD_UUID", "")) == uuid_hex(uuid):
            found.append(name)
    return found


def _superblock(ex: Executor, member: str, uuid: str, ours_only: bool) -> bool:
    out = ex.run(["mdadm", "--examine", "--export", member], privileged=True)
    if out.returncode != 0:
        return False
    found = uuid_hex(_fields(out.stdout).get("MD_UUID", ""))
    return not ours_only or (found != "" and found == uuid_hex(uuid))


def _fields(text: str) -> dict[str, str]:
    return dict(ln.split("=", 1) for ln in text.splitlines() if "=" in ln)


def lock_name(path: str) -> str:
    """A lock file's name for a target path: readable, and unique by a hash of the whole path."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", path.strip("/"))[-40:]
    return f"{readable}-{hashlib.sha256(path.encode()).hexdigest()[:12]}"


def uuid_hex(uuid: str) -> str:
    """A UUID's hex digits (mdadm writes 1b2c...:..., blkid 1b2c...-...)."""
    return "".join(ch for ch in uuid.lower() if ch in "0123456789abcdef")


def _walk(node: dict[str, Any]) -> list[dict[str, Any]]:
    out = [node]
    for child in node.get("children") or []:
        out += _walk(child)
    return out
