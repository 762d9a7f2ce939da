"""Connecting to an OpenStack cloud, and turning the SDK's exceptions into one line each.

``connect`` logs in at once (a token and the service catalog), so a missing clouds.yaml entry,
wrong credentials or an unreachable Keystone show before anything else happens, as one line with
what to do. Later calls go through ``explained``: every SDK or keystoneauth exception becomes a
DiskbenchError that names what was being done and what the cloud said.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from diskbench.errors import DiskbenchError

if TYPE_CHECKING:
    from openstack.connection import Connection

T = TypeVar("T")
CREDENTIALS_HINT = ("name a cloud of your clouds.yaml (--cloud or OS_CLOUD; OS_CLIENT_CONFIG_FILE says where it is) "
                    "or source your project's openrc file (OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME)")
STATUS_HINTS = {
    401: "the token or credentials were refused: check the cloud's credentials",
    403: "not allowed or over quota: ask the cloud's operator for more quota, or use a smaller flavor",
    404: "it does not exist (any more) in this cloud and region",
    409: "the cloud is busy with the resource: wait a minute and run again",
    413: "over quota: ask the cloud's operator for more quota, or use a smaller flavor or fewer volumes",
    429: "the cloud throttled the requests: wait a minute and run again",
}


@dataclass
class Waits:
    """How often to poll and how long to wait for each step; ``stop`` ends every wait (Ctrl-C, SIGTERM)."""

    poll: float = 3.0
    active: float = 1200.0  # BUILD -> ACTIVE
    console: float = 900.0  # ACTIVE -> the host keys on the console (cloud-init's first boot)
    volume: float = 600.0
    delete: float = 900.0
    conflict_retries: int = 20  # a 409 on delete: retry this many times, ``poll`` apart
    stop: threading.Event = field(default_factory=threading.Event)

    def until(self, what: str, timeout: float, check: Callable[[], T | None], hint: str) -> T:
        """Poll ``check`` until it returns something; a timeout or ``stop`` is one line."""
        deadline = time.monotonic() + timeout
        while True:
            result = check()
            if result is not None:
                return result
            if self.stop.is_set():
                raise DiskbenchError(f"interrupted while waiting for {what}")
            if time.monotonic() > deadline:
                raise DiskbenchError(f"timed out after {timeout:.0f} s waiting for {what}", hint=hint)
            self.stop.wait(self.poll)


def connect(cloud: str | None = None, *, timeout: float = 60.0) -> Connection:
    """A logged-in connection: the clouds.yaml entry ``cloud``, or OS_CLOUD / the OS_* variables when None."""
    import openstack
    from openstack import exceptions as sdk

    where = f"cloud '{cloud}'" if cloud else "the OS_* environment"
    quiet_sdk_logs()
    with explained(f"logging in to {where}", login=True):
        try:
            conn = openstack.connect(cloud=cloud, app_name="diskbench", api_timeout=timeout)
        except sdk.ConfigException as exc:
            raise DiskbenchError(f"{where}: {_first_line(exc)}", hint=CREDENTIALS_HINT) from None
        conn.session.get_token()
    return conn


def find(finder: Callable[..., T], name: str, **kwargs: Any) -> T | None:
    """``finder(name)``, or None when there is no such thing (the SDK's ignore_missing=True is deprecated)."""
    from openstack import exceptions as sdk

    try:
        return finder(name, ignore_missing=False, **kwargs)
    except sdk.NotFoundException:
        return None


@contextmanager
def explained(what: str, *, login: bool = False) -> Iterator[None]:
    """Any SDK or keystoneauth exception inside becomes one DiskbenchError line: what, what the cloud said."""
    from keystoneauth1 import exceptions as ksa
    from openstack import exceptions as sdk

    try:
        yield
    except sdk.HttpException as exc:
        raise http_error(what, exc) from None
    except (ksa.MissingRequiredOptions, ksa.MissingAuthPlugin, ksa.NoMatchingPlugin) as exc:
        raise DiskbenchError(f"{what}: no OpenStack credentials ({_first_line(exc)})", hint=CREDENTIALS_HINT) \
            from None
    except ksa.Unauthorized as exc:
        hint = "check the user, password and project, or the application credential" if login \
            else STATUS_HINTS[401]
        raise DiskbenchError(f"{what}: Keystone refused the credentials ({_first_line(exc)})", hint=hint) from None
    except (ksa.ConnectFailure, ksa.ConnectTimeout, ksa.DiscoveryFailure, ksa.SSLError) as exc:
        raise DiskbenchError(f"{what}: {_unreachable(exc)}",
                             hint="check auth_url, the network and any proxy settings") from None
    except ksa.EndpointNotFound as exc:
        raise DiskbenchError(f"{what}: {_first_line(exc)}",
                             hint="this cloud or region lacks the service; check region_name") from None
    except (ksa.ClientException, sdk.SDKException) as exc:
        raise DiskbenchError(f"{what}: {_first_line(exc)}", hint="see the cloud's dashboard") from None


def http_error(what: str, exc: object) -> DiskbenchError:
    """One line from an SDK HttpException: the status and the service's own message."""
    status = getattr(exc, "status_code", None)
    details = getattr(exc, "details", None) or getattr(exc, "message", None) or str(exc)
    hint = STATUS_HINTS.get(status or 0, "see the cloud's dashboard or `openstack` CLI for more")
    said = f"OpenStack said {status}" if status else "OpenStack said"
    return DiskbenchError(f"{what}: {said}: {_first_line(details)}", hint=hint)


def _unreachable(exc: BaseException) -> str:
    """keystoneauth's long story of a failed connection, as: cannot reach URL (why)."""
    text = str(exc)
    url = re.search(r"https?://[^\s:/]+(?::\d+)?[^\s:]*", text)
    lowered = text.lower()
    why = next((reason for key, reason in (("refused", "connection refused"), ("timed out", "timed out"),
                                           ("certificate", "TLS certificate not trusted"),
                                           ("name or service not known", "unknown host name"),
                                           ("nodename nor servname", "unknown host name"),
                                           ("temporary failure in name resolution", "unknown host name"))
                if key in lowered), _first_line(text))
    return f"cannot reach {url.group(0).rstrip('.') if url else 'the cloud'} ({why})"


def quiet_sdk_logs() -> None:
    """The SDK logs warnings (e.g. failed version discovery) that repeat the one-line error: keep them
    out of the user's terminal unless logging was configured on purpose."""
    for name in ("keystoneauth", "openstack"):
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.ERROR)


def _first_line(value: object) -> str:
    text = str(value).strip()
    return (text.splitlines()[0] if text else type(value).__name__)[:300]
