"""Everything Azure in the store: Microsoft Entra sign-in to an Azure Database for PostgreSQL
flexible server, and raw outputs kept in an Azure Blob container.

Entra: a DSN whose host is a flexible server (``*.postgres.database.azure.com``) and that carries
no password (none in the DSN, no ``PGPASSWORD``) signs in with a token from azure-identity's
``DefaultAzureCredential`` (``az login``, a managed identity, workload identity in CI) for the
scope of Azure's PostgreSQL servers, used as the password and fetched anew at every (re)connect,
so a token's expiry (about an hour) never ends a long run. Tests hand in their own credential
(``Store(..., credential=...)``), never patching the SDK.

Blob: ``DISKBENCH_ARTIFACTS=https://ACCOUNT.blob.core.windows.net/CONTAINER[/PREFIX]`` keeps raw
outputs as ``PREFIX/RUN_ID/NAME`` blobs, signed in with the same credential; the store's
``artifacts`` rows hold each blob's URL, so a reader needs no setting of its own.

The store reaches this module only through its add-on seam (``AzureStoreAddOn``, registered in the
``diskbench.stores`` entry-point group): Azure's names stay in the Azure provider, and another
cloud's object store or sign-in plugs in the same way (see docs/store.md).
"""

from __future__ import annotations

import os
from typing import Any, Protocol, cast

from ...errors import StoreError, UsageError
from ...store.keepers import Keeper

AZURE_SUFFIX = ".postgres.database.azure.com"
ENTRA_SCOPE = "https://ossrdbms-aad.database.windows.net/.default"
BLOB_HOST = ".blob.core.windows.net"


class ContainerClient(Protocol):
    """What diskbench uses of azure-storage-blob's ``ContainerClient`` (tests pass their own)."""

    def upload_blob(self, name: str, data: bytes, overwrite: bool = ...) -> Any: ...

    def download_blob(self, blob: str) -> Any: ...

    def delete_blob(self, blob: str) -> Any: ...


class AccessToken(Protocol):
    token: str


class TokenCredential(Protocol):
    """What azure-identity's credentials are (``get_token``); tests pass their own."""

    def get_token(self, *scopes: str) -> AccessToken: ...


def is_azure(params: dict[str, str]) -> bool:
    return params.get("host", "").lower().endswith(AZURE_SUFFIX)


def uses_entra(params: dict[str, str]) -> bool:
    """An Azure flexible server without a password: sign in with a Microsoft Entra token."""
    return is_azure(params) and not params.get("password") and not os.environ.get("PGPASSWORD")


def entra_token(credential: TokenCredential | None, where: str) -> str:
    """A Microsoft Entra access token for Azure's PostgreSQL servers: the password."""
    try:
        if credential is None:
            from azure.identity import DefaultAzureCredential

            return DefaultAzureCredential().get_token(ENTRA_SCOPE).token
        return credential.get_token(ENTRA_SCOPE).token
    except Exception as exc:  # noqa: BLE001 - azure-identity raises several kinds, all "no token"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"cannot get a Microsoft Entra token to sign in to {where}: {first}",
                         hint="sign in with `az login` (or give the machine a managed identity, or set "
                              "AZURE_CLIENT_ID with workload identity in CI); to use a password instead, "
                              "put it in the DSN or PGPASSWORD") from None


def token_refused(text: str) -> bool:
    """Whether a server's refusal (lower case) is of an Entra token (not a password)."""
    return "azure ad" in text or "entra" in text


def is_blob_url(url: str) -> bool:
    return url.startswith("https://") and BLOB_HOST in url


class AzureBlob:
    """A container of an Azure storage account: ``PREFIX/RUN_ID/NAME`` blobs."""

    def __init__(self, url: str, container: ContainerClient | None = None, credential: Any = None) -> None:
        base, _, prefix = url.rstrip("/").partition(BLOB_HOST + "/")
        container_name, _, self.prefix = prefix.partition("/")
        if not container_name:
            raise UsageError(f"{url} names no container",
                             hint="DISKBENCH_ARTIFACTS=https://ACCOUNT.blob.core.windows.net/CONTAINER[/PREFIX]")
        self.container_url = f"{base}{BLOB_HOST}/{container_name}"
        self.where = url
        self.container: ContainerClient = container or _sdk_container(self.container_url, credential)

    def _name(self, run_id: str, name: str) -> str:
        return "/".join(p for p in (self.prefix, run_id, name) if p)

    def put(self, run_id: str, name: str, data: bytes) -> str | None:
        blob = self._name(run_id, name)
        self.container.upload_blob(blob, data, overwrite=True)
        return f"{self.container_url}/{blob}"

    def get(self, location: str) -> bytes:
        return bytes(self.container.download_blob(self._blob(location)).readall())

    def delete(self, location: str) -> None:
        self.container.delete_blob(self._blob(location))

    def _blob(self, location: str) -> str:
        if not location.startswith(self.container_url + "/"):
            raise StoreError(f"{location} is not in the container {self.container_url}")
        return location[len(self.container_url) + 1:]


def _sdk_container(url: str, credential: Any) -> ContainerClient:
    from azure.identity import DefaultAzureCredential
    from azure.storage.blob import ContainerClient as SdkContainer

    client = SdkContainer.from_container_url(url, credential=credential or DefaultAzureCredential())
    return cast(ContainerClient, client)


class AzureStoreAddOn:
    """What the store asks of Azure: a keeper for blob URLs, an Entra token for a flexible server
    without a password, and whether a refusal was of such a token."""

    def keeper(self, url: str, client: Any = None, credential: Any = None) -> Keeper | None:
        """The container ``url`` names (``DISKBENCH_ARTIFACTS``), or None when it is not a blob URL."""
        return AzureBlob(url, client, credential) if is_blob_url(url) else None

    def reader(self, location: str, keeper: Keeper | None, client: Any = None,
               credential: Any = None) -> Keeper | None:
        """A keeper that reads the blob at ``location``: the runner's own when it holds it."""
        if isinstance(keeper, AzureBlob) and location.startswith(keeper.container_url + "/"):
            return keeper
        if is_blob_url(location):
            return AzureBlob("/".join(location.split("/")[:4]), client, credential)
        return None

    def password(self, params: dict[str, str], credential: Any, where: str) -> str | None:
        """An Entra token as the password of an Azure flexible server the DSN gives none for."""
        return entra_token(credential, where) if uses_entra(params) else None

    def refused(self, text: str) -> bool:
        return token_refused(text)
