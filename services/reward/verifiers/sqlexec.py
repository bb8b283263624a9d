"""Read-only, time-limited SQLite execution for the sql verifier.

Defence in depth: the file is opened read-only (`mode=ro` URI), `PRAGMA query_only` is set,
an authorizer allows nothing but reading, `execute` refuses more than one statement, a
progress handler aborts a query past its deadline, and rows are capped.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

_ALLOWED_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}


class QueryFailed(Exception):
    """The query did not run to completion: syntax error, refused, too slow, too big."""


def _authorizer(action: int, *_: Any) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED_ACTIONS else sqlite3.SQLITE_DENY


def connect_read_only(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise FileNotFoundError(f"database {path} does not exist")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    conn.execute("PRAGMA query_only = ON")
    conn.set_authorizer(_authorizer)
    return conn


def run_query(path: Path, sql: str, *, timeout_s: float, max_rows: int) -> list[tuple[Any, ...]]:
    """All rows of `sql` on the database at `path`, read-only. Raises QueryFailed."""
    conn = connect_read_only(path)
    deadline = time.monotonic() + timeout_s
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        cursor = conn.execute(sql)
        rows = cursor.fetchmany(max_rows + 1)
    except sqlite3.OperationalError as exc:
        if time.monotonic() > deadline:
            raise QueryFailed(f"query exceeded {timeout_s:g}s") from exc
        raise QueryFailed(f"{type(exc).__name__}: {exc}") from exc
    except (sqlite3.DatabaseError, sqlite3.ProgrammingError, sqlite3.Warning) as exc:
        raise QueryFailed(f"{type(exc).__name__}: {exc}") from exc
    finally:
        conn.close()
    if len(rows) > max_rows:
        raise QueryFailed(f"query returned more than {max_rows} rows")
    return rows
