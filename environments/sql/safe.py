"""Read-only, time-limited query execution on a SQLite file.

Layers, each enough on its own for writes:
1. the file is opened with `mode=ro` (URI) and is itself read-only on disk;
2. `PRAGMA query_only = ON`;
3. an authorizer that allows only SELECT, reads, functions and recursive CTEs, so ATTACH,
   PRAGMA, writes, DDL and transactions are denied with a clear message;
and a progress handler that stops a query past its time limit, SQLite's length limit
against huge values, and row/byte caps on what is returned.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}
_AUTH_ACTIONS = [
    "CREATE_INDEX",
    "CREATE_TABLE",
    "CREATE_TEMP_INDEX",
    "CREATE_TEMP_TABLE",
    "CREATE_TEMP_TRIGGER",
    "CREATE_TEMP_VIEW",
    "CREATE_TRIGGER",
    "CREATE_VIEW",
    "DELETE",
    "DROP_INDEX",
    "DROP_TABLE",
    "DROP_TEMP_INDEX",
    "DROP_TEMP_TABLE",
    "DROP_TEMP_TRIGGER",
    "DROP_TEMP_VIEW",
    "DROP_TRIGGER",
    "DROP_VIEW",
    "INSERT",
    "PRAGMA",
    "TRANSACTION",
    "UPDATE",
    "ATTACH",
    "DETACH",
    "ALTER_TABLE",
    "REINDEX",
    "ANALYZE",
    "CREATE_VTABLE",
    "DROP_VTABLE",
    "SAVEPOINT",
]
_ACTION_NAMES = {
    getattr(sqlite3, f"SQLITE_{n}"): n.replace("_", " ")
    for n in _AUTH_ACTIONS
    if hasattr(sqlite3, f"SQLITE_{n}")
}
_DENIED_FUNCTIONS = {"load_extension", "randomblob", "zeroblob", "readfile", "writefile"}
PROGRESS_EVERY = 2_000  # VM instructions between deadline checks
MAX_VALUE_BYTES = 1_000_000


class QueryRefused(Exception):
    """The query tried something a read-only session may not do."""


class QueryTimeout(Exception):
    """The query ran past its time limit and was stopped."""


class QueryError(Exception):
    """SQLite rejected the query (syntax error, unknown table, ...)."""


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool = False
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)


def connect_readonly(path: Path) -> sqlite3.Connection:
    uri = f"file:{path.resolve()}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA query_only = ON")
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    return conn


def _authorizer(denied: list[str]):  # type: ignore[no-untyped-def]
    def check(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
        if action in _ALLOWED:
            if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
                denied.append(f"function {arg2}()")
                return sqlite3.SQLITE_DENY
            return sqlite3.SQLITE_OK
        what = _ACTION_NAMES.get(action, str(action))
        denied.append(f"{what} {arg1 or ''}".strip())
        return sqlite3.SQLITE_DENY

    return check


def execute(
    path: Path,
    query: str,
    *,
    time_limit_s: float = 2.0,
    max_rows: int = 50,
) -> QueryResult:
    """Run one SELECT read-only. Raises QueryRefused, QueryTimeout or QueryError."""
    conn = connect_readonly(path)
    denied: list[str] = []
    started = time.perf_counter()
    deadline = started + time_limit_s
    conn.set_authorizer(_authorizer(denied))
    conn.set_progress_handler(lambda: int(time.perf_counter() > deadline), PROGRESS_EVERY)
    try:
        cursor = conn.execute(query)
        rows = cursor.fetchmany(max_rows + 1)
        columns = [d[0] for d in cursor.description or []]
    except sqlite3.Error as exc:
        if denied:
            what = ", ".join(dict.fromkeys(denied[:3]))
            raise QueryRefused(
                f"refused: only read-only SELECT queries are allowed here (denied: {what})"
            ) from None
        if time.perf_counter() > deadline or "interrupted" in str(exc):
            raise QueryTimeout(f"query stopped after {time_limit_s:g}s (time limit)") from None
        raise QueryError(str(exc)) from None
    except sqlite3.Warning as exc:  # e.g. more than one statement
        raise QueryError(str(exc)) from None
    finally:
        conn.close()
    truncated = len(rows) > max_rows
    return QueryResult(columns, rows[:max_rows], truncated, time.perf_counter() - started)


def format_result(result: QueryResult, max_bytes: int = 4000, max_cell: int = 200) -> str:
    """A pipe-separated table with a row count, capped at `max_bytes` characters."""
    if not result.columns:
        return "Query ran; it returns no columns."
    lines = [" | ".join(result.columns)]
    for row in result.rows:
        cells = ["NULL" if v is None else str(v) for v in row]
        lines.append(" | ".join(c if len(c) <= max_cell else c[:max_cell] + "..." for c in cells))
    text, shown = lines[0], 0
    for line in lines[1:]:
        if len(text) + len(line) + 1 > max_bytes:
            break
        text += "\n" + line
        shown += 1
    more = result.truncated or shown < len(result.rows)
    n = f"{shown} rows shown" + (" (result truncated; refine the query)" if more else "")
    return f"{text}\n({n})" if result.rows else f"{text}\n(0 rows)"
