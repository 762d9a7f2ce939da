"""One line of ``diskbench doctor``: what an engine, platform or provider says is installed or missing.

A leaf: the seams (engines, platforms, providers) return these without importing the doctor,
which imports the registry that loads them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Check:
    """One requirement: whether it is met, what was found, and the command that fixes it."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    optional: bool = False  # needed only for some features: shown, never a failure
