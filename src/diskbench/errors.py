"""One error base class whose message users see, and the one table of exit codes.

Every exit code diskbench uses is here, so scripts can tell "the run failed" from "the
profile is wrong" from "the gate found a regression" without reading stderr. The gate's
verdict codes (3, 4) mean nothing else; ``gate`` maps any failure before a verdict to 3.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """diskbench's exit codes (documented in the README's table)."""

    OK = 0
    FAILED = 1  # the work failed: a run failed or ended partial, a host, engine or cloud error; gate REGRESSED
    USAGE = 2  # bad input: arguments, a profile, a policy or input file
    GATE_ERROR = 3  # gate: no verdict (the gated run failed, or the gate itself could not judge)
    GATE_INCONCLUSIVE = 4  # gate --strict: the baseline or the run is too noisy to judge
    UNAVAILABLE = 5  # an engine, provider or platform the profile needs is not installed
    REFUSED = 6  # the safety rule: a device holds data and was not named under destroy_data_on
    SOFTWARE = 70  # a bug in diskbench (EX_SOFTWARE); shown with a request to report it
    INTERRUPTED = 130  # Ctrl-C or SIGTERM


class DiskbenchError(Exception):
    """An error caused by input or environment, shown to the user as ``error: <message>``."""

    exit_code: int = Exit.FAILED

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UsageError(DiskbenchError):
    """An argument or an input file that cannot be used as given (a folder that cannot be made,
    a directory that does not exist, a policy that is not YAML)."""

    exit_code = Exit.USAGE


class ProfileError(UsageError):
    """A profile that cannot be read or does not validate."""


class ParseError(UsageError):
    """Engine output that cannot be understood (an import's input; inside a run it fails the job)."""


class StoreError(DiskbenchError):
    """The result store cannot be used: locked, full, damaged, or from a newer diskbench."""


class UnknownRun(StoreError):
    """A run id that names no run, or more than one."""

    exit_code = Exit.USAGE


class ExecutionError(DiskbenchError):
    """A benchmark could not be started or did not finish."""


class Unavailable(DiskbenchError):
    """The profile needs an engine, provider or platform this diskbench does not have."""

    exit_code = Exit.UNAVAILABLE


ProviderUnavailable = Unavailable  # the name earlier code used


class SafetyError(DiskbenchError):
    """A device holds data and was not named under destroy_data_on."""

    exit_code = Exit.REFUSED


class Interrupted(DiskbenchError):
    """The run was stopped by Ctrl-C or SIGTERM; what finished is kept."""

    exit_code = Exit.INTERRUPTED
