"""Engines, providers and platforms: three registries filled from entry points, loaded lazily.

diskbench's own fio engine, Azure provider and Linux platform are registered exactly as a
third party registers theirs: an entry point in the ``diskbench.engines``,
``diskbench.providers`` or ``diskbench.platforms`` group of a package's metadata. Nothing is
imported until it is asked for by name, so ``diskbench --help`` pays for none of them.
"""

from __future__ import annotations

import threading
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .errors import Unavailable

if TYPE_CHECKING:
    from .engines.base import Engine
    from .platforms.base import Platform
    from .providers.base import Provider

T = TypeVar("T")


class Registry(Generic[T]):
    """Named plugins of one kind; each is instantiated once, on first use."""

    def __init__(self, group: str, kind: str) -> None:
        self.group = group
        self.kind = kind
        self._points: dict[str, EntryPoint] | None = None
        self._loaded: dict[str, T] = {}
        self._lock = threading.Lock()

    def _entry_points(self) -> dict[str, EntryPoint]:
        if self._points is None:
            found: dict[str, EntryPoint] = {}
            for point in entry_points(group=self.group):
                found.setdefault(point.name, point)  # the first on sys.path wins, as for imports
            self._points = found
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
                factory: Any = point.load()
                self._loaded[name] = factory()
            return self._loaded[name]

    def all(self) -> list[T]:
        return [self.get(name) for name in self.names()]

    def register(self, name: str, plugin: T) -> None:
        """Add a plugin object directly (for programs embedding diskbench, and tests)."""
        with self._lock:
            self._loaded[name] = plugin


engines: Registry[Engine] = Registry("diskbench.engines", "engine")
providers: Registry[Provider] = Registry("diskbench.providers", "provider")
platforms: Registry[Platform] = Registry("diskbench.platforms", "platform")


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
