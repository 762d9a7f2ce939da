"""Asking the installed store add-ons (``addon.py``): where raw outputs are kept, and how a shared
server is signed in to. The first add-on that answers wins; nothing here names a cloud.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .addon import StoreAddOn
from .keepers import Folder, InDatabase, Keeper


def addons() -> list[StoreAddOn]:
    from .. import registry

    return registry.stores.all()


def first(ask: Any) -> Any:
    """The first add-on's answer that is not None."""
    for addon in addons():
        answer = ask(addon)
        if answer is not None:
            return answer
    return None


def keeper_for(setting: str | None, *, default: Keeper | None, client: Any = None,
               credential: Any = None) -> Keeper | None:
    """The keeper ``setting`` (``DISKBENCH_ARTIFACTS``) names; ``default`` when it names none.
    None: the folder beside a SQLite store is where raw outputs stay."""
    if not setting:
        return default
    if setting in ("db", "database"):
        return InDatabase()
    if "://" in setting:
        found: Keeper | None = first(lambda addon: addon.keeper(setting, client, credential))
        if found is None:
            raise UsageError(f"DISKBENCH_ARTIFACTS={setting}: not a folder, `database` or an object store "
                             "an installed add-on knows", hint="a folder, `database`, or a blob container's URL "
                                                              "(docs/store.md)")
        return found
    return Folder(Path(setting).expanduser().resolve())


def reader_for(location: str, keeper: Keeper | None, client: Any = None, credential: Any = None) -> Keeper:
    """A keeper that reads ``location`` (written by whichever keeper the runner had)."""
    if "://" in location:
        found: Keeper | None = first(lambda addon: addon.reader(location, keeper, client, credential))
        if found is not None:
            return found
    return Folder(Path(os.path.dirname(location)))
