"""Azure SDK failures as one line a user can act on (the SDK's own messages are pages long).

Every call into the SDK goes through ``arm(what)``: an unreachable endpoint, a refused login,
a throttled or refused request each become a ``DiskbenchError`` naming what diskbench was
doing and what to do about it; exit code 70 stays reserved for diskbench's own bugs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from azure.core.exceptions import (
    AzureError,
    ClientAuthenticationError,
    HttpResponseError,
    ServiceRequestError,
    ServiceResponseError,
)

from ...errors import DiskbenchError

REMEDIES = {
    "SkuNotAvailable": "the size is not offered there now: try another region or zone",
    "ZonalAllocationFailed": "Azure has no capacity for this size in that zone now: try another zone or later",
    "AllocationFailed": "Azure has no capacity for this size in that region now: try another region or later",
    "OverconstrainedAllocationRequest": "no capacity matches all constraints: drop the zone or try later",
    "OperationNotAllowed": "usually a quota limit: request more vCPU quota (portal, Usage + quotas)",
    "QuotaExceeded": "request more quota (portal, Usage + quotas) or run fewer machines",
    "InvalidParameter": "Azure rejected a setting of the profile; fix it and run again",
    "TooManyRequests": "Azure throttled the requests: wait a minute and run again",
}
ENDPOINT = "https://management.azure.com"


def explain(what: str, exc: AzureError) -> DiskbenchError:
    """One line for an SDK failure while diskbench was doing ``what``."""
    endpoint = os.environ.get("DISKBENCH_ARM_URL") or ENDPOINT
    if isinstance(exc, ServiceRequestError):
        return DiskbenchError(f"{what}: cannot reach Azure Resource Manager at {endpoint}",
                              hint="check the network, a proxy, or DISKBENCH_ARM_URL; nothing was changed")
    if isinstance(exc, ServiceResponseError):
        return DiskbenchError(f"{what}: the connection to Azure Resource Manager broke off ({endpoint})",
                              hint="run again; `diskbench cleanup --dry-run` shows anything left behind")
    if isinstance(exc, ClientAuthenticationError):
        return DiskbenchError(f"{what}: Azure refused the credentials",
                              hint="run `az login` again (or renew the token), then try again")
    if isinstance(exc, HttpResponseError):
        code = getattr(exc.error, "code", None) or str(exc.status_code)
        message = (getattr(exc.error, "message", None) or exc.message or "").strip().splitlines()
        text = message[0][:300] if message else ""
        return DiskbenchError(f"{what}: Azure said {code}: {text}",
                              hint=REMEDIES.get(code, "see the Azure activity log of the resource group"))
    first = str(exc).strip().splitlines()
    return DiskbenchError(f"{what}: {type(exc).__name__}: {first[0][:200] if first else ''}")


@contextmanager
def arm(what: str) -> Iterator[None]:
    try:
        yield
    except AzureError as exc:
        raise explain(what, exc) from None
