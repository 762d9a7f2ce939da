"""What a run is asked to do besides its profile, kept with the run so ``resume`` does the same."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..plan import AutoRepeats
from ..profile import Host

if TYPE_CHECKING:
    from ..reports.gate import Policy

MAX_REPEATS = 100  # fixed repeats, and the highest limit of automatic ones
AUTO_MIN = 3  # automatic repeats: the first rounds, so that every job has a spread of its own to judge
AUTO_LIMIT = 10  # automatic repeats: the most a job runs when ``auto`` names no limit


@dataclass
class RunOptions:
    target_dir: str | None = None
    scratch_base: str | None = None
    hosts: list[dict[str, Any]] = field(default_factory=list)  # --host overrides, as Host dicts
    destroy_data_on: list[str] = field(default_factory=list)
    accept_new_host_key: bool = False
    known_hosts: str | None = None
    repeats: int | str | None = None  # N, or "auto" / "auto:MAX" (``repeat_rule``)
    policy: str | None = None  # automatic repeats: the gate's policy file (gate.yaml) they judge with
    keep: bool = False
    keep_files: bool = False  # leave the data files the engine laid out in a --target directory
    workloads: list[str] | None = None  # only these workloads
    machines: list[str] | None = None  # only these machines and hosts of the profile
    provider_options: dict[str, Any] = field(default_factory=dict)  # e.g. the subscription, who may SSH
    allow_exec: bool = False  # engine options that run programs (--allow-exec); never stored, never resumed

    def to_json(self) -> dict[str, Any]:
        return {"target_dir": self.target_dir, "scratch_base": self.scratch_base, "hosts": self.hosts,
                "destroy_data_on": self.destroy_data_on, "known_hosts": self.known_hosts,
                "repeats": self.repeats, "policy": self.policy, "workloads": self.workloads,
                "machines": self.machines, "provider_options": self.provider_options, "keep_files": self.keep_files}

    def host_models(self) -> list[Host]:
        return [Host.model_validate(h) for h in self.hosts]

    def repeat_rule(self, names: tuple[str, str] = ("repeats", "policy")) -> int | AutoRepeats | None:
        """``repeats`` as the plan takes it: a fixed count, automatic repeats, or None (the profile's own).
        A wrong value is one line naming the option (``names``: what ``repeats`` and ``policy`` are called
        where they came from)."""
        rule = parse_repeats(self.repeats, names[0])
        if self.policy is not None and not isinstance(rule, AutoRepeats):
            raise UsageError(f"{names[1]}: a gate policy is what automatic repeats ({names[0]} auto) judge with; "
                             "these repeats are not automatic", hint="give it to `diskbench gate` after the run")
        return rule

    def gate_policy(self) -> Policy | None:
        """The gate policy automatic repeats judge with: ``policy``'s file (a problem in it is one line
        naming file, line and key), the gate's defaults without one; None without automatic repeats."""
        if not isinstance(self.repeat_rule(), AutoRepeats):
            return None
        from ..reports.gate import load_policy

        return load_policy(self.policy)


def parse_repeats(value: int | str | None, name: str = "repeats") -> int | AutoRepeats | None:
    """``N`` (1 to 100), ``auto`` or ``auto:MAX`` (MAX from 3, the first rounds, to 100); a wrong value
    is one line naming ``name`` (the option or key it came from)."""
    if value is None or isinstance(value, AutoRepeats):
        return value
    text = str(value).strip().lower()
    head, colon, limit = text.partition(":")
    if head == "auto":
        if not colon:
            return AutoRepeats(AUTO_MIN, AUTO_LIMIT)
        if limit.isdigit() and AUTO_MIN <= int(limit) <= MAX_REPEATS:
            return AutoRepeats(AUTO_MIN, int(limit))
        raise UsageError(f"{name}: {value!r}: the limit of auto:MAX is a number from {AUTO_MIN} (the first rounds "
                         f"every job runs) to {MAX_REPEATS}, e.g. auto:{AUTO_LIMIT}")
    if not isinstance(value, bool) and (isinstance(value, int) or text.isdigit()) and 1 <= int(text) <= MAX_REPEATS:
        return int(text)
    raise UsageError(f"{name}: {value!r} is not a number of repeats from 1 to {MAX_REPEATS}, nor auto or auto:MAX "
                     f"(repeat until the gate decides, at most MAX times; auto: {AUTO_LIMIT})")


@dataclass
class RunOutcome:
    run_id: str
    status: str
    done: int = 0
    failed: int = 0
    messages: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # the safety rule's refusals (exit 6)
