"""Azure SDK failures as one line a user can act on (the SDK's own messages are pages long).

Every call into the SDK goes through ``arm(what)``: an unreachable endpoint, a refused login,
a throttled or refused request each become a ``DiskbenchError`` naming what diskbench was
doing and what to do about it; exit code 70 stays reserved for diskbench's own bugs.

Once a run has created something, its calls pass ``left``: what exists and how it goes away. A
Resource Manager lost mid-run then says that, never "nothing was changed".
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


def explain(what: str, exc: AzureError, left: str | None = None) -> DiskbenchError:
    """One line for an SDK failure while diskbench was doing ``what``; ``left`` says what exists by now
    and how it goes away (None: nothing was created yet)."""
    endpoint = os.environ.get("DISKBENCH_ARM_URL") or ENDPOINT
    if isinstance(exc, ServiceRequestError):
        return DiskbenchError(f"{what}: cannot reach Azure Resource Manager at {endpoint}",
                              hint=f"check the network, a proxy, or DISKBENCH_ARM_URL; {left or 'nothing was changed'}")
    if isinstance(exc, ServiceResponseError):
        return DiskbenchError(f"{what}: the connection to Azure Resource Manager broke off ({endpoint})",
                              hint=left or "run again; `diskbench cleanup --dry-run` shows anything left behind")
    if isinstance(exc, ClientAuthenticationError):
        return DiskbenchError(f"{what}: Azure refused the credentials",
                              hint=_also("run `az login` again (or renew the token), then try again", left))
    if isinstance(exc, HttpResponseError):
        return _refused(what, exc, left)
    first = str(exc).strip().splitlines()
    return DiskbenchError(f"{what}: {type(exc).__name__}: {first[0][:200] if first else ''}", hint=left)


def _refused(what: str, exc: HttpResponseError, left: str | None) -> DiskbenchError:
    """Azure answered, and not with success. An operation that ended Failed or Canceled without a
    reason reaches here as the SDK's "Operation returned an invalid status 'OK'" with status 200:
    said as what it is instead."""
    code = getattr(exc.error, "code", None)
    if code is None and exc.status_code is not None and 200 <= exc.status_code < 300:
        return DiskbenchError(f"{what}: Azure ended the operation as failed or canceled, without a reason",
                              hint=_also("see the Azure activity log of the resource group", left))
    code = code or str(exc.status_code)
    message = (getattr(exc.error, "message", None) or exc.message or "").strip().splitlines()
    text = message[0][:300] if message else ""
    return DiskbenchError(f"{what}: Azure said {code}: {text}",
                          hint=_also(REMEDIES.get(code, "see the Azure activity log of the resource group"), left))


def _also(hint: str, left: str | None) -> str:
    return f"{hint}; {left}" if left else hint


@contextmanager
def arm(what: str, left: str | None = None) -> Iterator[None]:
    """SDK failures inside become one ``DiskbenchError`` line (``left``: see ``explain``)."""
    try:
        yield
    except AzureError as exc:
        raise explain(what, exc, left) from None
