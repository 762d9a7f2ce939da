"""What the installed plugins add to a profile's schema, put together in one place.

Each provider brings the schema of its ``machines:`` entries and of its ``shared:`` volume
block, each engine the keys its multi-host mode takes and the option block named after it
(``diskspd: {...}``). This is the one module of the profile that asks the registry: the parts it
assembles (machines.py, shared.py, workload.py, targets.py) name no plugin and ask nothing, so a
seam's base (a provider's machine schema builds on ``MachineBase``) uses them without the
registry coming back round to it. The loader is given what this module assembles: the
profile's model with every installed schema in it (``profile_model``) and the engines' names as
the validation's context (``validation_context``).
"""

from __future__ import annotations

import functools
import operator
from typing import Annotated, Any

from pydantic import Discriminator, Field, Tag, create_model

from .. import registry
from .machines import TAG_PREFIX, MachineBase
from .schema import SHARED_DESCRIPTION, Profile
from .shared import SharedBase
from .workload import ENGINES_CONTEXT


@functools.cache
def profile_model() -> type[Profile]:
    """``Profile`` with each installed provider's ``machines:`` schema and ``shared:`` volume block
    and each engine's multi-host keys: what a profile file is validated against (and what its JSON
    Schema shows). Built once, when the first profile is read."""
    machines: Any = list[machine_union()]  # type: ignore[misc]  # a type made at run time
    shared: Any = shared_schema() | None
    return create_model("Profile", __base__=Profile, __module__=Profile.__module__,
                        machines=(machines, Field(default_factory=list)),
                        shared=(shared, Field(None, description=SHARED_DESCRIPTION)))


def validation_context() -> dict[str, Any]:
    """What a profile's validation needs to know of the installed engines: their names, so a block
    named after one (``diskspd:``) is kept for it."""
    return {ENGINES_CONTEXT: tuple(registry.engines.names())}


def machine_union() -> Any:
    """The type of a ``machines:`` entry: each installed provider's schema, picked by ``provider:``."""
    providers = [(p, model) for p in registry.providers.all() if (model := p.machine_schema()) is not None]
    if not providers:
        return MachineBase
    default = next((p.name for p, _ in providers if p.default_for_machines), providers[0][0].name)
    names = [p.name for p, _ in providers]

    def pick(value: Any) -> str | None:
        name = value.get("provider", default) if isinstance(value, dict) else getattr(value, "provider", None)
        return TAG_PREFIX + name if name in names else None

    members = tuple(Annotated[model, Tag(TAG_PREFIX + p.name)] for p, model in providers)
    return Annotated[functools.reduce(operator.or_, members), Discriminator(
        pick, custom_error_type="provider",
        custom_error_message=f"provider must be one of {', '.join(names)} (the installed providers)")]


def shared_schema() -> type[SharedBase]:
    """``shared:`` with each installed provider's volume block and each engine's multi-host keys."""
    fields: dict[str, Any] = {}
    blocks: dict[str, str] = {}
    for provider in registry.providers.all():
        for key, model in provider.shared_volumes().items():
            fields[key] = (model | None, Field(None, description=(model.__doc__ or "").strip().split("\n")[0]))
            blocks[key] = provider.name
    for engine in registry.engines.all():
        mode = engine.multi_host()
        keys = mode.options.model_fields if mode is not None and mode.options is not None else {}
        for key, info in keys.items():
            fields.setdefault(key, (info.annotation, info))
    model = create_model("Shared", __base__=SharedBase, __module__=SharedBase.__module__, **fields)
    model.volume_blocks = blocks
    return model
