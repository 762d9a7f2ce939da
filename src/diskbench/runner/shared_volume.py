"""The run's shared volume (a profile's ``shared:``) as the parts of a run share it.

The client group mounts it on every client, and a machine outside the group may mount it itself
(a target ``nfs: shared``: one client's view of it, with its own mount options). Whichever part
needs its export first has it made (the provider's volume, once; a ``shared: target:`` is known
from the start), and the others wait for that. Parts measure it one at a time, in the plan's order
(``Plan.shared_turns``: the client group first): a single client's numbers taken while six others
drive the same volume would measure the others. A part that ends, however it ends, gives up its
turn, so a failed client group never holds the machines after it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import DiskbenchError

WAIT_STEP_S = 0.2  # how often a waiting part looks whether the run was stopped


class SharedVolume:
    """The export of the run's shared volume, made once, and whose turn it is to measure it."""

    def __init__(self, make: Callable[[], str], turns: list[str]) -> None:
        self._make = make
        self._export: str | None = None
        self._error: DiskbenchError | None = None
        self._making = threading.Lock()
        self.turns = list(turns)  # the parts that measure it, in the order they take it
        self._done: set[str] = set()
        self._changed = threading.Condition()

    def export(self) -> str:
        """``ADDRESS:/PATH``, made by the first part that asks (the others wait); a failure is every
        part's, and nothing is made twice."""
        with self._making:
            if self._export is None:
                if self._error is not None:
                    raise self._error
                try:
                    self._export = self._make()
                except DiskbenchError as exc:
                    self._error = exc
                    raise
            return self._export

    @contextmanager
    def turn(self, part: str, stopped: Callable[[], bool], line: Callable[[str], None]) -> Iterator[bool]:
        """Wait until every part before ``part`` is done with the volume, then hold it until the block
        ends; yields False when the run was stopped while waiting (nothing is to be measured)."""
        earlier = self.turns[:self.turns.index(part)] if part in self.turns else []
        with self._changed:
            waiting = [p for p in earlier if p not in self._done]
            if waiting:
                line(f"{part}: waiting for {', '.join(waiting)} to finish with the shared volume (one part "
                     "measures it at a time)")
            while any(p not in self._done for p in earlier) and not stopped():
                self._changed.wait(WAIT_STEP_S)
        try:
            yield not stopped()
        finally:
            self.done(part)

    def done(self, part: str) -> None:
        """``part`` has finished with the volume (or never got to it): the next may take its turn."""
        with self._changed:
            self._done.add(part)
            self._changed.notify_all()
