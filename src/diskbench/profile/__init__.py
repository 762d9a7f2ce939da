"""Profiles: YAML files naming workloads and where they run, validated with file:line:key errors.

Names are loaded on first use: a provider's machine schema builds on ``profile.machines`` while
the profile schema itself is assembled from every installed provider's machine schema.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..yamldoc import format_key_path
    from .load import (
        bundled_profiles,
        load_profile,
        parse_profile,
        profile_json_schema,
        resolve_profile_path,
    )
    from .machines import Host, MachineBase
    from .schema import LoadedProfile, Profile, user_loc
    from .targets import KINDS, Target, TargetModel, parse_target
    from .workload import BUILTIN_DEFAULTS, RW_MODES, Section, Workload, WorkloadOptions, writes

_WHERE = {
    "load": ("bundled_profiles", "format_key_path", "load_profile", "parse_profile", "profile_json_schema",
             "resolve_profile_path"),
    "machines": ("Host", "MachineBase"),
    "schema": ("LoadedProfile", "Profile", "user_loc"),
    "targets": ("KINDS", "Target", "TargetModel", "parse_target"),
    "workload": ("BUILTIN_DEFAULTS", "RW_MODES", "Section", "Workload", "WorkloadOptions", "writes"),
}
_MODULE = {name: module for module, names in _WHERE.items() for name in names}
__all__ = [
    "BUILTIN_DEFAULTS", "KINDS", "RW_MODES", "Host", "LoadedProfile", "MachineBase", "Profile", "Section",
    "Target", "TargetModel", "Workload", "WorkloadOptions", "bundled_profiles", "format_key_path",
    "load_profile", "parse_profile", "parse_target", "profile_json_schema", "resolve_profile_path", "user_loc",
    "writes",
]


def __getattr__(name: str) -> Any:
    if name in _MODULE:
        return getattr(importlib.import_module(f"{__name__}.{_MODULE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
