"""GuestSpec to QEMU command line, without booting: the block graph that stands for caps and caches."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guestlab.qemu import Boot, command
from tests.guestlab.spec import DiskSpec, GuestSpec, Throttle, azure_v6, azure_vm, nvme_disks, openstack, plain


def boot(tmp_path: Path, **kw: object) -> Boot:
    return Boot(directory=tmp_path, tag="guestlab-test-g", kernel=tmp_path / "vmlinuz", initrd=tmp_path / "initrd",
                root_raw=tmp_path / "root.raw", ssh_port=2222, **kw)  # type: ignore[arg-type]


def blockdevs(argv: list[str]) -> dict[str, str]:
    """node-name -> the rest of its -blockdev value."""
    values = [argv[i + 1] for i, a in enumerate(argv) if a == "-blockdev"]
    return {dict(p.split("=", 1) for p in v.split(","))["node-name"]: v for v in values}


def test_throttle_props_and_qemu_rules() -> None:
    assert Throttle(iops=200, burst_iops=1000, burst_seconds=3).qemu_props() == \
        "x-iops-total=200,x-iops-total-max=1000,x-iops-total-max-length=3"
    assert Throttle(iops_read=2000, bps_write=10 << 20).qemu_props() == "x-iops-read=2000,x-bps-write=10485760"
    assert Throttle(iops=300, bps=1 << 20).writes_only() == Throttle(iops_write=300, bps_write=1 << 20)
    with pytest.raises(ValueError, match="cannot be combined"):
        Throttle(iops=1, iops_read=2)
    with pytest.raises(ValueError, match="burst_iops needs"):
        Throttle(iops=500, burst_iops=100)
    with pytest.raises(ValueError, match="at least one limit"):
        Throttle()


def test_spec_validation() -> None:
    with pytest.raises(ValueError, match="unknown groups"):
        GuestSpec(disks=(DiskSpec("d0", shared=("vm",)),))
    with pytest.raises(ValueError, match="one LUN"):
        GuestSpec(disks=(DiskSpec("d0", lun=1), DiskSpec("d1", lun=1)))
    with pytest.raises(ValueError, match="temp disk needs the Azure layout"):
        GuestSpec(temp=DiskSpec("temp"))
    with pytest.raises(ValueError, match="size_mib"):
        DiskSpec("big", size_mib=4096)
    assert [lun for _, lun in GuestSpec(disks=(DiskSpec("a"), DiskSpec("b", lun=0), DiskSpec("c"))).scsi_luns()] \
        == [1, 0, 2]


def test_azure_layout_pins_controllers_luns_and_nvme(tmp_path: Path) -> None:
    cmd = command(azure_vm(data=[DiskSpec("d0"), DiskSpec("d1")], nvme=2), boot(tmp_path))
    devices = [cmd.argv[i + 1] for i, a in enumerate(cmd.argv) if a == "-device"]
    assert "virtio-scsi-pci,id=scsi0,bus=pcie.0,addr=0x5" in devices
    assert "virtio-scsi-pci,id=scsi1,bus=pcie.0,addr=0x6" in devices
    assert any(d.startswith("scsi-hd,bus=scsi0.0,channel=0,scsi-id=0,lun=0,drive=os,") for d in devices)
    assert any(d.startswith("scsi-hd,bus=scsi0.0,channel=0,scsi-id=0,lun=1,drive=temp-raw,") for d in devices)
    assert any("lun=1,drive=d1-raw,vendor=Msft,product=Virtual Disk,serial=d1" in d for d in devices)
    assert "nvme,serial=nvme-1,drive=nvme1-raw,bus=pcie.0,addr=0x11" in devices
    assert {p.name for p, _ in cmd.raw_files} == {"d0.raw", "d1.raw", "temp.raw", "nvme0.raw", "nvme1.raw"}
    assert "virtio-blk-pci" not in " ".join(devices)


def test_azure_v6_layout_one_remote_nvme_controller_and_raw_nvme_temp_disks(tmp_path: Path) -> None:
    """A v6 size: no SCSI controller; the OS disk is namespace 1 and the data disk at LUN n namespace n+2 of
    the controller at PCI 0x7 (the guest's udev rules call it "MSFT NVMe Accelerator v1.0"); each temp disk
    is a controller of its own from 0x1a ("Microsoft NVMe Direct Disk v2"), capped like any disk."""
    spec = azure_v6(data=[DiskSpec("d0", cap=Throttle(iops=300)), DiskSpec("d1", lun=3)], temp_nvme=2,
                    temp_cap=Throttle(iops=900))
    argv = command(spec, boot(tmp_path)).argv
    devices = [argv[i + 1] for i, a in enumerate(argv) if a == "-device"]
    assert not [d for d in devices if "scsi" in d]
    assert devices.index("nvme,id=remote,serial=remote-disks,bus=pcie.0,addr=0x7") < devices.index(
        "nvme-ns,bus=remote,nsid=1,drive=os")
    assert "nvme-ns,bus=remote,nsid=2,drive=d0-cap" in devices and "nvme-ns,bus=remote,nsid=5,drive=d1-raw" in devices
    assert "nvme,serial=azlocal0001,drive=tempnvme0-cap,bus=pcie.0,addr=0x1a" in devices
    assert "nvme,serial=azlocal0002,drive=tempnvme1-cap,bus=pcie.0,addr=0x1b" in devices
    with_scsi_temp = command(spec.with_(temp=DiskSpec("temp"), temp_nvme=()), boot(tmp_path)).argv
    assert "virtio-scsi-pci,id=scsi0,bus=pcie.0,addr=0x5" in with_scsi_temp  # Ebdsv5: NVMe disks, SCSI temp disk
    with pytest.raises(ValueError, match="Azure layout"):
        GuestSpec(disk_controller="NVMe")
    with pytest.raises(ValueError, match="at most 4 raw NVMe temp disks"):
        azure_v6(temp_nvme=5)
    with pytest.raises(ValueError, match="at most 10 NVMe"):
        azure_v6(data=nvme_disks(11))


def test_a_null_backing_is_qemus_own_latency_under_the_cap_with_no_file(tmp_path: Path) -> None:
    """bench/adaptive's data disk (--backing null): null-co with latency-ns at the bottom of the graph, the
    cap above it, and no raw file or NBD relay; it keeps no data, so no cache may sit on it."""
    spec = azure_vm(data=[DiskSpec("d0", cap=Throttle(iops=190), latency_ms=40, backing="null")])
    cmd = command(spec, boot(tmp_path))
    nodes = blockdevs(cmd.argv)
    assert nodes["d0-null"] == "driver=null-co,node-name=d0-null,size=67108864,read-zeroes=on,latency-ns=40000000"
    assert nodes["d0-cap"] == "driver=throttle,node-name=d0-cap,throttle-group=cap-d0,file=d0-null"
    assert "d0.raw" not in {p.name for p, _ in cmd.raw_files} and cmd.remotes == []
    with pytest.raises(ValueError, match="null backing keeps no data"):
        DiskSpec("d1", backing="null", caching="ReadOnly")


def test_the_lab_udev_rules_name_what_azure_images_name() -> None:
    """The image's udev rules: waagent's own for SCSI (the lab only stands in for the VMBus device_id, which
    QEMU cannot give), and for NVMe a stand-in for azure-vm-utils' names, which Debian 12 does not package;
    the PCI slots in the rules are the ones qemu.py pins."""
    from tests.guestlab import image, qemu

    rules = {p.name: p.read_text() for p in image.FILES.glob("*.rules")}
    assert set(rules) == {"61-lab-azure-nvme-model.rules", "65-lab-vmbus-device-id.rules", "80-lab-azure-disk.rules"}
    assert "waagent" in image.packages() and all(f"lib/udev/rules.d/{n}" == image.INSTALL[n][0] for n in rules)
    vmbus = rules["65-lab-vmbus-device-id.rules"]
    assert '"*/0000:00:05.0/*", ENV{LAB_VMBUS_DEVICE_ID}="{f8b3781a-' in vmbus and "0000:00:06.0" in vmbus
    assert image.VMBUS_ATTR == "ATTRS{device_id}" and image.VMBUS_STAND_IN.startswith("ENV{LAB_VMBUS_DEVICE_ID")
    model = rules["61-lab-azure-nvme-model.rules"]
    assert f"0000:00:{qemu.REMOTE_NVME_SLOT:02x}.0" in model and qemu.TEMP_NVME_SLOT == 0x1a and "1[a-d]" in model
    disk = rules["80-lab-azure-disk.rules"]
    for link in ("disk/azure/os", "disk/azure/data/by-lun/$env{LAB_AZURE_LUN}",
                 "disk/azure/local/by-serial/$env{LAB_AZURE_SERIAL}"):
        assert f'SYMLINK+="{link}"' in disk, link
    assert "%s{nsid} - 2" in disk


def test_caps_shared_groups_and_cache_layering(tmp_path: Path) -> None:
    spec = azure_vm(data=[
        DiskSpec("ro", cap=Throttle(iops=300), shared=("vm",), caching="ReadOnly"),
        DiskSpec("rw", cap=Throttle(iops=300), shared=("vm",), caching="ReadWrite"),
        DiskSpec("none", cap=Throttle(iops=300), shared=("vm",)),
    ], groups={"vm": Throttle(iops=800)}, vm_cached=Throttle(iops=2000), temp_cap=Throttle(iops=5000))
    cmd = command(spec, boot(tmp_path))
    assert cmd.groups == {"cap-temp": "x-iops-total=5000", "cap-ro": "x-iops-total=300",
                          "shared-vm": "x-iops-total=800",
                          "wcap-ro": "x-iops-write=300", "vm-cached": "x-iops-total=2000",
                          "cap-rw": "x-iops-total=300", "cap-none": "x-iops-total=300"}
    nodes = blockdevs(cmd.argv)
    # ReadOnly, bottom to top: raw -> cap -> VM uncached group -> qcow2 cache -> copy-on-read -> write cap -> VM cached
    assert "file=ro-raw" in nodes["ro-cap"] and "file=ro-cap" in nodes["ro-sh-vm"]
    assert "backing=ro-sh-vm" in nodes["ro-cache"] and "file=ro-cache" in nodes["ro-cor"]
    assert "throttle-group=wcap-ro,file=ro-cor" in nodes["ro-wcap"]
    assert "throttle-group=vm-cached,file=ro-wcap" in nodes["ro-vmc"]
    # ReadWrite: no write cap; the cached limit takes reads and writes
    assert "rw-wcap" not in nodes and "file=rw-cor" in nodes["rw-vmc"]
    # None: the capped base under the shared group, no cache nodes
    assert {"none-cache", "none-cor", "none-vmc"}.isdisjoint(nodes)
    assert "throttle-group=shared-vm,file=none-cap" in nodes["none-sh-vm"]
    assert any("drive=none-sh-vm" in a for a in cmd.argv)
    assert [(o.name, c) for o, _, _, c in cmd.overlays] == [("os.qcow2", None), ("ro.cache.qcow2", 4096),
                                                          ("rw.cache.qcow2", 4096)]


def test_network_keys_and_kernel_line(tmp_path: Path) -> None:
    b = boot(tmp_path, forwarded={8765: 40001}, private_netdev="socket,mcast=239.192.1.2:30000,localaddr=127.0.0.1",
             mac_suffix=2, host_key=tmp_path / "hk", authorized_keys=tmp_path / "ak")
    argv = command(plain("c", ip2="192.0.2.1/24", disks=nvme_disks(1)), b).argv
    assert "user,id=n0,hostfwd=tcp:127.0.0.1:2222-:22,hostfwd=tcp:127.0.0.1:40001-:8765" in argv
    assert "socket,id=p,mcast=239.192.1.2:30000,localaddr=127.0.0.1" in argv
    assert any(a.startswith("virtio-net-pci,netdev=p,mac=52:54:00:12:34:02,") for a in argv)
    assert f"name=opt/diskbench/ssh_host_ed25519_key,file={tmp_path / 'hk'}" in argv
    assert argv[argv.index("-append") + 1].endswith("lab.hostname=c lab.ip2=192.0.2.1/24")
    assert "virtio-blk-pci,drive=os,bus=pcie.0,addr=0x4,serial=os-disk" in argv
    assert len([d for d in openstack().disks if d.bus == "nvme"]) == 4


def test_caps_after_boot_start_groups_without_limits_and_set_them_over_qmp(tmp_path: Path) -> None:
    """A guest with caps_after_boot boots unthrottled: its groups are on the command line without limits,
    and the limits wait in ``throttles`` for QMP (``Guest.apply_caps``), which takes ThrottleLimits' names."""
    spec = azure_vm("late", data=[DiskSpec("d0", cap=Throttle(iops=50, burst_iops=350, burst_seconds=4))],
                    temp_mib=None, caps_after_boot=True)
    cmd = command(spec, boot(tmp_path, qmp=tmp_path / "q.sock", defer_caps=True))
    objects = [cmd.argv[i + 1] for i, a in enumerate(cmd.argv) if a == "-object"]
    assert objects == ["throttle-group,id=cap-d0"]
    assert cmd.throttles["cap-d0"].qmp_limits() == {"iops-total": 50, "iops-total-max": 350,
                                                    "iops-total-max-length": 4}
    assert f"unix:{tmp_path / 'q.sock'},server=on,wait=off" in cmd.argv
    eager = command(spec.with_(caps_after_boot=False), boot(tmp_path))
    assert "throttle-group,id=cap-d0,x-iops-total=50,x-iops-total-max=350,x-iops-total-max-length=4" in eager.argv


def test_the_scale_puts_the_needed_cap_at_the_headroom() -> None:
    from tests.guestlab.calibrate import CORES, HEADROOM, MAX_SCALE, Calibration

    quiet, busy = Calibration(2600, 1), Calibration(650, 1)
    assert quiet.scale(3750) == MAX_SCALE  # a D2ds_v5's 375 is 14% of 2,600: the lab's usual 0.1
    for cal in (quiet, busy):
        for need, guests in ((12_800, 1), (77_000, 1), (7_000, 3)):
            scale = cal.scale(need, guests)
            assert 0.9 * HEADROOM * cal.budget(guests) <= need * scale <= HEADROOM * cal.budget(guests)
    assert busy.scale(12_800) < quiet.scale(12_800)  # a busy machine lowers the caps
    assert busy.budget(3) == pytest.approx(650 * min(1, CORES / 3))  # three guests share this machine's cores
