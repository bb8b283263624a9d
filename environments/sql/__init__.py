"""The sql environment (Chinook + synthetic shop databases, read-only SQLite)."""

from environments.sql.env import SQLEnvironment

__all__ = ["SQLEnvironment"]
