"""The store's seam for clouds: what a store add-on answers (this module), registered in the
``diskbench.stores`` entry-point group as engines and providers are.

The store asks each installed add-on in turn (``addons.py``); the first that answers wins. The
Azure provider's (Azure Blob containers, Microsoft Entra tokens for Azure Database for
PostgreSQL) is one; nothing in the store names a cloud. This module imports nothing that asks
the registry, so the registry can name the type it holds.
"""

from __future__ import annotations

from typing import Any, Protocol

from .keepers import Keeper


class StoreAddOn(Protocol):
    def keeper(self, url: str, client: Any = None, credential: Any = None) -> Keeper | None:
        """The keeper a ``DISKBENCH_ARTIFACTS`` URL names, or None when it is not this add-on's.
        ``client``: the object store's SDK client, which tests hand in."""

    def reader(self, location: str, keeper: Keeper | None, client: Any = None,
               credential: Any = None) -> Keeper | None:
        """A keeper that reads ``location``, or None when it is not this add-on's."""

    def password(self, params: dict[str, str], credential: Any, where: str) -> str | None:
        """A sign-in token to use as the password for the server of ``params``, or None."""

    def refused(self, text: str) -> bool:
        """Whether a server's refusal (lower case) is of this add-on's sign-in token."""
