"""The result store: SQLite (the default, one file) or PostgreSQL (shared), with a versioned schema;
raw outputs written beside it while a run works and kept where every reader reaches them."""

from __future__ import annotations

from .backend import is_postgresql
from .store import (
    SCHEMA_VERSION,
    TERMINAL,
    Store,
    StoredResult,
    default_db_path,
    default_location,
    new_run_id,
    now_iso,
)

__all__ = ["SCHEMA_VERSION", "TERMINAL", "Store", "StoredResult", "default_db_path", "default_location",
           "is_postgresql", "new_run_id", "now_iso"]
