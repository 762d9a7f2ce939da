"""Deleting what diskbench left behind: cloud resources, and what killed runs left on hosts.

Without a provider named it looks at every provider that creates machines. One that is not set up
(no credentials, no cloud named) or cannot log in is skipped, with why, and the others still run:
a machine that only ever used one cloud needs no credentials for the rest. What runs killed with
SIGKILL left on this machine and their SSH hosts (mounts, arrays, scratch folders, data files,
workspaces) comes from the store's journal (``hosts``). Each part says what it did, why it was
skipped, or how it failed; the caller decides what a failure means for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import registry
from .errors import DiskbenchError
from .providers.base import NotConfigured
from .store import Store

HOSTS = "hosts"  # what dead runs left on this machine and their SSH hosts


@dataclass
class CleanupOutcome:
    """One provider's part (or the hosts'): what it deleted (or would), why it was skipped, how it failed."""

    name: str
    done: list[str] = field(default_factory=list)
    skipped: str | None = None
    error: DiskbenchError | None = None

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.name, "done": self.done, "skipped": self.skipped,
                "error": str(self.error) if self.error else None}


def cleanup(store: Store, *, run_id: str | None, older_than: float | None, dry_run: bool, only: str | None,
            options: dict[str, Any], line: Callable[[str], None]) -> list[CleanupOutcome]:
    """Each part's outcome: the hosts' (unless another provider is named), then each provider's."""
    names = [only] if only else [n for n in registry.providers.names() if registry.providers.get(n).creates_machines]
    out = [] if only and only != HOSTS else [_hosts(store, run_id, dry_run, line)]
    for name in names:
        if name != HOSTS:
            out.append(_provider(name, store, run_id, older_than, dry_run, options, line, explicit=only is not None))
    return out


def _hosts(store: Store, run_id: str | None, dry_run: bool, line: Callable[[str], None]) -> CleanupOutcome:
    from .runner.leftovers import clean

    out = CleanupOutcome(HOSTS)
    out.done, failed = clean(store, run_id=run_id, dry_run=dry_run, line=line)
    for text in failed[:-1]:
        line(f"hosts: {text}")
    if failed:
        out.error = DiskbenchError(f"hosts: {failed[-1]}", hint="fix what is named, then run cleanup again")
    return out


def _provider(name: str, store: Store, run_id: str | None, older_than: float | None, dry_run: bool,
              options: dict[str, Any], line: Callable[[str], None], *, explicit: bool) -> CleanupOutcome:
    """One provider's cleanup; not being set up or not logging in skips it unless it was named."""
    provider = registry.providers.get(name)
    state_dir = store.path.parent
    out = CleanupOutcome(name)
    why = provider.configured(options, state_dir=state_dir)
    if why is not None:
        if explicit:
            out.error = NotConfigured(f"{name}: {why}")
        else:
            out.skipped = why
        return out
    try:
        out.done = provider.cleanup(options, state_dir=state_dir, run_id=run_id, older_than=older_than,
                                    dry_run=dry_run, line=line)
    except NotConfigured as exc:
        if explicit:
            out.error = _named(name, exc)
        else:
            out.skipped = f"{exc.message}; {exc.hint}" if exc.hint else exc.message
    except DiskbenchError as exc:
        out.error = _named(name, exc)
    return out


def _named(name: str, exc: DiskbenchError) -> DiskbenchError:
    """The provider's error with its name in front, and its exit code."""
    named = DiskbenchError(f"{name}: {exc.message}", hint=exc.hint)
    named.exit_code = exc.exit_code
    return named
