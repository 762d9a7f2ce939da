"""mutmut 3.8.1 that also mutates pydantic validators and properties (used by bench/mutation).

Not a benchmark itself (the leading underscore keeps bench/all and the docs test from naming it).

mutmut 3 switches between an original function and its mutants at run time through a
*trampoline*: the function keeps its name and signature and forwards each call to the copy
that the current mutant selects, so one import serves every mutant (fast: forked workers, no
re-import per mutant). It skips every decorated function but ``@classmethod`` and
``@staticmethod`` alone (file_mutation.py: copying a decorated function may re-run the
decorator's side effects, e.g. register a route twice; ``@property`` breaks the copies), and
it has no setting to change that. That leaves out exactly what validates a profile: pydantic's
``@field_validator(...) @classmethod`` and ``@model_validator(...)`` methods, and
``@property``.

For those decorators the copies can be plain functions: pydantic registers a validator once,
from the decorated trampoline, which keeps every original decorator (so pydantic sees the
same validator with the same signature: the trampoline is ``functools.wraps``-ed); the
original and mutated copies beside it carry no decorator but ``@classmethod`` (which the
trampoline resolves through the class, as mutmut does for a bare ``@classmethod``), so nothing
registers twice and nothing is a property object where a function is called. Decorator
arguments are never mutated (mutmut skips ``Decorator`` nodes: they run at import). Any other
decorator still makes mutmut skip the function, as it did.

``install()`` patches the two places of mutmut 3.8.1 that decide this; the version is pinned in
pyproject.toml's ``dev`` extra because these are mutmut's internals, and ``install()`` refuses
another version rather than mutate something else silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

REACHABLE = frozenset({"field_validator", "model_validator", "classmethod", "staticmethod", "property"})
"""Decorators whose function bench/mutation mutates: each is applied once, to the trampoline."""

_KEPT_ON_COPIES = frozenset({"classmethod", "staticmethod"})
MUTMUT_VERSION = "3.8.1"


def _name(decorator: Any) -> str:
    """The decorator's last name: ``field_validator`` for ``@field_validator("x", mode="before")``."""
    import libcst as cst

    node = decorator.decorator
    while isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Attribute):
        return str(node.attr.value)
    return str(getattr(node, "value", ""))


def reachable(function: Any) -> bool:
    """Whether a decorated function's decorators are all ones this extension handles."""
    names = [_name(d) for d in function.decorators]
    return bool(names) and all(n in REACHABLE for n in names) and not set(names) <= _KEPT_ON_COPIES


def install() -> None:
    """Patch mutmut (in this process; its workers are forked from it, so they inherit this)."""
    from importlib.metadata import version

    import libcst as cst
    from libcst.metadata import PositionProvider
    from mutmut.mutation import file_mutation

    found = version("mutmut")
    if found != MUTMUT_VERSION:
        raise SystemExit(f"bench/_mutmut.py patches mutmut {MUTMUT_VERSION}'s internals; this is mutmut {found}: "
                         "pip install -e '.[dev]'")
    visitor = file_mutation.MutationVisitor
    skip = visitor._skip_node_and_children

    def skip_node_and_children(self: Any, node: Any) -> bool:
        if isinstance(node, cst.FunctionDef) and reachable(node):
            # What mutmut checks for any function, less its "decorated: skip" rule.
            position = self.get_metadata(PositionProvider, node, None)
            if position and position.start.line in self._ignored_node_lines:
                self.ignored_functions.add(node.name.value)
                return True
            return node.name.value in file_mutation.NEVER_MUTATE_FUNCTION_NAMES
        return bool(skip(self, node))

    visitor._skip_node_and_children = skip_node_and_children  # type: ignore[method-assign]
    arrange = file_mutation.function_trampoline_arrangement

    def arrangement(function: Any, mutants: Iterable[Any], class_name: str | None) -> tuple[
            Sequence[Any], Sequence[Any], Sequence[Any], Sequence[str]]:
        if not reachable(function):
            return arrange(function, mutants, class_name)  # type: ignore[no-any-return]
        # mutmut's own arrangement of the function with only the decorators the copies keep...
        plain = function.with_changes(decorators=[d for d in function.decorators if _name(d) in _KEPT_ON_COPIES])
        declarations, methods, assignments, names = arrange(plain, mutants, class_name)
        # ...then the trampoline (always first) gets every original decorator back, above
        # mutmut's own (which mutmut appends last, so it is applied first).
        trampoline = methods[0]
        methods = [trampoline.with_changes(decorators=[*function.decorators, trampoline.decorators[-1]]),
                   *methods[1:]]
        return declarations, methods, assignments, names

    file_mutation.function_trampoline_arrangement = arrangement
