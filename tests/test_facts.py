"""Host facts, including the Azure instance metadata (scripted: there is no Azure VM here)."""

from __future__ import annotations

import json

from diskbench.executor import LocalExecutor
from diskbench.facts import IMDS, azure_facts, host_facts, target_facts

from .fake import FakeExecutor


def test_local_host_facts() -> None:
    facts = host_facts(LocalExecutor())
    assert facts["hostname"] and facts["kernel"] and facts["cpus"] >= 1 and facts["memory_bytes"] > 0


def test_target_facts_of_this_directory(tmp_path: object) -> None:
    facts = target_facts(LocalExecutor(), str(tmp_path))
    assert facts["fstype"] and facts["mountpoint"]


def test_azure_facts_from_imds() -> None:
    compute = {"vmSize": "Standard_E8ds_v4", "location": "westeurope", "zone": "1", "vmId": "abc",
               "storageProfile": {"imageReference": {"publisher": "Canonical", "offer": "ubuntu-24_04-lts",
                                                     "sku": "server", "version": "latest"}}}
    ex = FakeExecutor({"cat /sys/class/dmi/id/sys_vendor": (0, "Microsoft Corporation\n"),
                       "curl": (0, json.dumps(compute))})
    assert azure_facts(ex) == {"azure": {"vm_size": "Standard_E8ds_v4", "region": "westeurope", "zone": "1",
                                         "vm_id": "abc", "image": "Canonical:ubuntu-24_04-lts:server:latest"}}
    assert any(IMDS in call for call in ex.calls)


def test_no_imds_query_off_azure() -> None:
    ex = FakeExecutor({"cat /sys/class/dmi/id/sys_vendor": (0, "QEMU\n")})
    assert azure_facts(ex) == {}
    assert not any("curl" in call for call in ex.calls)
