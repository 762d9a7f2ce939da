"""Engines, providers and platforms: three registries filled from entry points, loaded lazily.

diskbench's own fio engine, Azure provider and Linux platform are registered exactly as a
third party registers theirs: an entry point in the ``diskbench.engines``,
``diskbench.providers`` or ``diskbench.platforms`` group of a package's metadata. Nothing is
imported until it is asked for by name, so ``diskbench --help`` pays for none of them.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .errors import Unavailable

if TYPE_CHECKING:
    from .engines.base import Engine
    from .platforms.base import Platform
    from .providers.base import Provider
    from .store.addon import StoreAddOn

T = TypeVar("T")


class Registry(Generic[T]):
    """Named plugins of one kind; each is instantiated once, on first use."""

    def __init__(self, group: str, kind: str) -> None:
        self.group = group
        self.kind = kind
        self._points: dict[str, str] | None = None
        self._loaded: dict[str, T] = {}
        self._lock = threading.Lock()

    def _entry_points(self) -> dict[str, str]:
        if self._points is None:
            self._points = declared(self.group)
        return self._points

    def names(self) -> list[str]:
        """Every registered name, without importing anything."""
        return sorted({*self._entry_points(), *self._loaded})

    def get(self, name: str) -> T:
        with self._lock:
            if name not in self._loaded:
                point = self._entry_points().get(name)
                if point is None:
                    known = ", ".join(self.names()) or "none (is diskbench installed with pip?)"
                    raise Unavailable(f"no {self.kind} named {name!r} is installed",
                                      hint=f"installed {self.kind}s: {known}")
                factory: Any = _load(point)
                self._loaded[name] = factory()
            return self._loaded[name]

    def all(self) -> list[T]:
        return [self.get(name) for name in self.names()]

    def register(self, name: str, plugin: T) -> None:
        """Add a plugin object directly (for programs embedding diskbench, and tests)."""
        with self._lock:
            self._loaded[name] = plugin


def declared(group: str) -> dict[str, str]:
    """``name -> "module:attr"`` of the entry points in ``group`` of every distribution on sys.path;
    the first on sys.path wins, as for imports.

    This is what ``importlib.metadata.entry_points(group=...)`` returns, read straight from each
    ``*.dist-info/entry_points.txt``: importing importlib.metadata costs 50-75 ms on a small machine
    (it pulls in the email package), a third of ``diskbench --help``. A path entry that is not a
    directory (a zip) is left to importlib.metadata.
    """
    if any(entry and os.path.isfile(entry) for entry in sys.path):
        from importlib.metadata import entry_points

        found: dict[str, str] = {}
        for point in entry_points(group=group):
            found.setdefault(point.name, point.value)
        return found
    found = {}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                for key, value in _section(os.path.join(entry or ".", name, "entry_points.txt"), group):
                    found.setdefault(key, value)
    return found


def _section(path: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` lines of ``[group]`` in an entry_points.txt (an INI file)."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    out, inside = [], False
    for raw in lines:
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == group
        elif inside and "=" in line and not line.startswith(("#", ";")):
            key, _, value = line.partition("=")
            out.append((key.strip(), value.strip()))
    return out


def _load(value: str) -> Any:
    """The object an entry point's ``module:attr.sub [extras]`` names."""
    module, _, attrs = value.split("[", 1)[0].strip().partition(":")
    obj: Any = importlib.import_module(module.strip())
    for attr in filter(None, attrs.strip().split(".")):
        obj = getattr(obj, attr)
    return obj


engines: Registry[Engine] = Registry("diskbench.engines", "engine")
providers: Registry[Provider] = Registry("diskbench.providers", "provider")
platforms: Registry[Platform] = Registry("diskbench.platforms", "platform")
stores: Registry[StoreAddOn] = Registry("diskbench.stores", "store add-on")


def default_engine(platform: str = "linux") -> str:
    """The engine of workloads that name none, on ``platform`` (the engine that says so).

    The platform's own choice is asked first, so the other engines need not even be imported."""
    preferred: str | None = platforms.get(platform).engine if platform in platforms.names() else None
    names: list[str] = [*([preferred] if preferred in engines.names() else []), *engines.names()]
    for name in dict.fromkeys(names):
        if platform in getattr(engines.get(name), "default_for", ()):
            return name
    raise Unavailable(f"no default engine for {platform} hosts is installed",
                      hint="name one with engine: in the workload")
