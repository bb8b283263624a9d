"""Read-only, time-limited SQLite execution for the sql verifier: a thin adapter over the
sql environment's guarded executor (`environments.sql.safe.execute`: `mode=ro` file,
`PRAGMA query_only`, an authorizer that allows only reading, one statement, a deadline),
so the verifier and the environment run queries under exactly the same rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from services.reward.verifiers.base import VerifierError


class QueryFailed(Exception):
    """The query did not run to completion: syntax error, refused, too slow, too big."""


def run_query(path: Path, sql: str, *, timeout_s: float, max_rows: int) -> list[tuple[Any, ...]]:
    """All rows of `sql` on the database at `path`, read-only. Raises QueryFailed, or
    FileNotFoundError when there is no database file."""
    try:
        from environments.sql import safe
    except ImportError as exc:
        raise VerifierError(f"the sql environment's executor is not available: {exc}") from exc
    if not path.is_file():
        raise FileNotFoundError(f"database {path} does not exist")
    try:
        result = safe.execute(path, sql, time_limit_s=timeout_s, max_rows=max_rows)
    except (safe.QueryRefused, safe.QueryTimeout, safe.QueryError) as exc:
        raise QueryFailed(f"{type(exc).__name__}: {exc}") from exc
    if result.truncated:
        raise QueryFailed(f"query returned more than {max_rows} rows")
    return result.rows
