"""Which keys a place in a profile takes, read from the schema's own types: for "did you mean"
suggestions that only name keys valid where the unknown one was given, and for ``--set`` making a
mapping the file leaves out where the schema has one.

pydantic's error locations carry union tags (``target:dir``, ``provider:azure``); following them
through the model types picks the member that refused a key, which the JSON Schema cannot.
"""

from __future__ import annotations

import difflib
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel, Tag

from .assembly import profile_model, validation_context
from .schema import user_loc
from .workload import ENGINES_CONTEXT, WorkloadOptions


def did_you_mean(word: str, known: set[str]) -> str:
    """The known key closest to ``word``, if one is close (never ``word`` itself)."""
    close = difflib.get_close_matches(word, sorted(known - {word}), n=1, cutoff=0.7)
    return f" (did you mean {close[0]}?)" if close else ""


def alternatives(tp: Any) -> list[tuple[Any, tuple[str, ...]]]:
    """A schema type's alternatives (``X | None``, a union's members, ``Annotated`` taken off), each
    with its union tags (``target:dir``, ``provider:azure``: how pydantic's locations name a member)."""
    if get_origin(tp) is Annotated:
        base, *meta = get_args(tp)
        tags = tuple(m.tag for m in meta if isinstance(m, Tag))
        return [(t, tags + more) for t, more in alternatives(base)]
    if get_origin(tp) in (Union, UnionType):
        return [alt for arg in get_args(tp) for alt in alternatives(arg)]
    return [(tp, ())]


def is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def step(tp: Any, part: Any) -> Any:
    """The schema type under ``part`` (a key, an index, or a union's tag) of a value of type ``tp``;
    None when the schema has nothing there (and under None)."""
    options = alternatives(tp)
    if isinstance(part, str):
        for t, tags in options:
            if part in tags:
                return t
        if not user_loc([part]):  # a validator's label: the same value
            return tp
    for t, _ in options:
        if is_model(t) and (field := fields(t).get(part)) is not None:
            return field.annotation
        if is_model(t) and part in keys_of(t):  # no field: an engine's block (diskspd:) of option: value
            return dict[str, Any]
        if get_origin(t) is dict:
            return get_args(t)[1]
        if get_origin(t) is list and isinstance(part, int):
            return get_args(t)[0]
    return None


def fields(model: type[BaseModel]) -> dict[str, Any]:
    """A model's fields by every key a profile may give them under (its name, its aliases)."""
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        choices = info.validation_alias.choices if isinstance(info.validation_alias, AliasChoices) else []
        for key in (name, info.alias, *choices):
            if isinstance(key, str):
                out[key] = info
    return out


def schema_at(loc: list[Any] | tuple[Any, ...]) -> Any:
    """The schema type at a location in a profile (pydantic's, with its union tags, or a --set's key
    path), or None."""
    tp: Any = profile_model()
    for part in loc:
        tp = step(tp, part)
    return tp


def keys_of(tp: Any) -> set[str]:
    """The keys a mapping of schema type ``tp`` takes (for suggestions): its model's fields, and in
    a workload's options the installed engines' blocks (``diskspd:``)."""
    keys: set[str] = set()
    for t, _ in alternatives(tp):
        if is_model(t):
            keys.update(fields(t))
            if issubclass(t, WorkloadOptions):
                keys.update(validation_context()[ENGINES_CONTEXT])
    return keys


def takes_mapping(tp: Any) -> bool:
    """May a value of schema type ``tp`` be a mapping (a model, or a dict)?"""
    return any(is_model(t) or get_origin(t) is dict for t, _ in alternatives(tp))
