"""A profile key whose value is a mapping read by its own model (``stop:``, ``knee:``).

Read in the key's own validator rather than by pydantic's union of "model or bool", so that a
wrong key inside it is one error naming that key, not one error per member of the union.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def read_block(model: type[M], value: dict[str, Any]) -> M:
    """``value`` as ``model``; its first problem as one ValueError: ``key: what is wrong``."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        problem = str(first["msg"]).removeprefix("Value error, ")
        raise ValueError(f"{key}: {problem}" if key else problem) from None
