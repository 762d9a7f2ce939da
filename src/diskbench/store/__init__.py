"""The result store: SQLite with a versioned schema, raw artifacts beside it."""

from __future__ import annotations

from .store import SCHEMA_VERSION, TERMINAL, Store, StoredResult, default_db_path, new_run_id, now_iso

__all__ = ["SCHEMA_VERSION", "TERMINAL", "Store", "StoredResult", "default_db_path", "new_run_id", "now_iso"]
