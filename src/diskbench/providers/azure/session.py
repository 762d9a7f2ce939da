"""One authenticated view of a subscription: the resource, compute and network clients.

Credentials come from DefaultAzureCredential (az login, environment, managed or workload
identity). ``DISKBENCH_ARM_URL`` points the clients at another Resource Manager endpoint
(sovereign clouds, Azure Stack, a test double) and ``DISKBENCH_ARM_TOKEN`` supplies a bearer
token obtained elsewhere (``az account get-access-token``) instead of a credential chain.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from azure.core.credentials import AccessToken, TokenCredential
from azure.core.exceptions import ClientAuthenticationError
from azure.core.pipeline import PipelineRequest
from azure.core.pipeline.policies import SansIOHTTPPolicy

from ..base import NotConfigured

ARM_SCOPE = "https://management.azure.com/.default"
LOGIN_HINT = ("run `az login` (or set AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET, or use a "
              "managed or workload identity), then try again")


class StaticBearer(SansIOHTTPPolicy):  # type: ignore[type-arg]
    """Send a fixed bearer token: for a pre-acquired token or a local test endpoint."""

    def __init__(self, token: str) -> None:
        self.token = token

    def on_request(self, request: PipelineRequest) -> None:  # type: ignore[type-arg]
        request.http_request.headers["Authorization"] = f"Bearer {self.token}"


class _NoCredential:
    """Stands in where a static token is used; never asked for a token."""

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        raise ClientAuthenticationError("no credential: a static token is in use")


def default_subscription(explicit: str | None = None) -> str | None:
    """--subscription, else AZURE_SUBSCRIPTION_ID, else the Azure CLI's default subscription."""
    if explicit:
        return explicit
    if os.environ.get("AZURE_SUBSCRIPTION_ID"):
        return os.environ["AZURE_SUBSCRIPTION_ID"]
    profile = Path(os.environ.get("AZURE_CONFIG_DIR", Path.home() / ".azure")) / "azureProfile.json"
    try:
        data = json.loads(profile.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    return next((s["id"] for s in data.get("subscriptions", []) if s.get("isDefault")), None)


def require_login(credential: TokenCredential) -> None:
    """Fail with one clear line, before any other work, when there are no usable credentials
    (``NotConfigured``: ``cleanup`` of every provider skips Azure then)."""
    try:
        credential.get_token(ARM_SCOPE)
    except ClientAuthenticationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NotConfigured(f"no Azure credentials ({first[:160]})", hint=LOGIN_HINT) from None


@dataclass
class AzureSession:
    subscription_id: str
    credential: Any
    client_kwargs: dict[str, Any] = field(default_factory=dict)
    _clients: dict[str, Any] = field(default_factory=dict)

    def _client(self, name: str, factory: Any) -> Any:
        if name not in self._clients:
            self._clients[name] = factory(self.credential, self.subscription_id, **self.client_kwargs)
        return self._clients[name]

    @property
    def resources(self) -> Any:
        from azure.mgmt.resource.resources import ResourceManagementClient

        return self._client("resources", ResourceManagementClient)

    @property
    def compute(self) -> Any:
        from azure.mgmt.compute import ComputeManagementClient

        return self._client("compute", ComputeManagementClient)

    @property
    def netapp(self) -> Any:
        from azure.mgmt.netapp import NetAppManagementClient

        return self._client("netapp", NetAppManagementClient)

    @property
    def network(self) -> Any:
        from azure.mgmt.network import NetworkManagementClient

        return self._client("network", NetworkManagementClient)


def connect(subscription: str | None = None, *, credential: TokenCredential | None = None,
            base_url: str | None = None, token: str | None = None,
            polling_interval: float | None = None) -> AzureSession:
    base_url = base_url or os.environ.get("DISKBENCH_ARM_URL")
    token = token or os.environ.get("DISKBENCH_ARM_TOKEN")
    kwargs: dict[str, Any] = {}
    if base_url:
        kwargs["base_url"] = base_url
    if polling_interval is not None:
        kwargs["polling_interval"] = polling_interval
    if token:
        kwargs["authentication_policy"] = StaticBearer(token)
        credential = credential or _NoCredential()
    else:
        if credential is None:
            from azure.identity import DefaultAzureCredential

            credential = DefaultAzureCredential()
        require_login(credential)
    sub = default_subscription(subscription)
    if not sub:
        raise NotConfigured("no Azure subscription chosen",
                            hint="pass --subscription ID, set AZURE_SUBSCRIPTION_ID, or `az account set`")
    return AzureSession(sub, credential, kwargs)


from ..network import detect_public_address as detect_public_address  # noqa: E402,F401 - where it was
