"""The machine diskbench runs on: no provisioning, commands through subprocess."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ..base import Provider, ProviderRun, RunContext

if TYPE_CHECKING:
    from ...executors.base import Executor
    from ...executors.hostkeys import HostKeyTrust
    from ...plan import Unit
    from ...platforms.base import DeviceMap


class LocalRun(ProviderRun):
    def acquire(self, job: Unit, trust: HostKeyTrust) -> tuple[Executor, Unit]:
        from ...executors.local import LocalExecutor

        return LocalExecutor(), job


class LocalProvider(Provider):
    name: ClassVar[str] = "local"

    def device_map(self) -> DeviceMap:
        from ..static import known_layouts

        return known_layouts(exclude=(self.name,))

    def start(self, ctx: RunContext) -> ProviderRun:
        return LocalRun()
