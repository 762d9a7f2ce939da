"""Azure instance metadata as host facts (scripted: there is no Azure VM here)."""

from __future__ import annotations

import json

from diskbench.providers.azure.facts import IMDS, azure_facts

from ...fake import FakeExecutor


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
