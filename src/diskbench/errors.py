"""One error base class: its message is what the user sees, on one line, without a traceback."""

from __future__ import annotations


class DiskbenchError(Exception):
    """An error caused by input or environment, shown to the user as ``error: <message>``."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ProfileError(DiskbenchError):
    """A profile that cannot be read or does not validate."""

    exit_code = 2


class ParseError(DiskbenchError):
    """Engine output that cannot be understood."""


class StoreError(DiskbenchError):
    """The result store is missing, locked, or from a newer diskbench."""


class ExecutionError(DiskbenchError):
    """A benchmark could not be started or did not finish."""


class ProviderUnavailable(DiskbenchError):
    """The profile needs a machine provider this diskbench does not have yet."""

    exit_code = 3
