"""sql: execution match. Gold and predicted queries run read-only on the task's database;
their results are compared as multisets of rows, or as ordered lists when the gold query
has an ORDER BY (or the task's `gold["ordered"]` says so). Column names are ignored;
column order and values are not (numbers are compared by value: 3 == 3.0)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from services.common.wire import ScoreItem
from services.reward.gold import GoldTask, TaskLookup
from services.reward.verifiers.base import Verdict, Verifier, VerifierError
from services.reward.verifiers.extract import last_assistant_text
from services.reward.verifiers.sqlexec import QueryFailed, run_query

DatabaseResolver = Callable[[GoldTask], Path]

_FENCE = re.compile(r"```(?:sql|sqlite)?\s*\n?(.*?)```", re.S | re.I)
_ORDER_BY = re.compile(r"\border\s+by\b", re.I)
_STRINGS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")


def strip_fences(text: str) -> str:
    blocks = _FENCE.findall(text)
    return (blocks[-1] if blocks else text).strip().rstrip(";").strip()


def predicted_sql(item: ScoreItem) -> str | None:
    """The submitted query: `final_answer`, else the last ```sql block the agent wrote."""
    if item.final_answer is not None:
        return strip_fences(item.final_answer) or None
    text = last_assistant_text(item)
    if text is None or not _FENCE.search(text):
        return None
    return strip_fences(text) or None


def is_ordered(sql: str) -> bool:
    """Whether the query's result order is meaningful (an ORDER BY outside string literals)."""
    return bool(_ORDER_BY.search(_STRINGS.sub("''", sql)))


def _cell(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, float):
        return round(value, 9)
    return value


def normalize_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [tuple(_cell(v) for v in row) for row in rows]


def results_match(gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]], ordered: bool) -> bool:
    gold_rows, pred_rows = normalize_rows(gold), normalize_rows(pred)
    if ordered:
        return gold_rows == pred_rows
    return Counter(gold_rows) == Counter(pred_rows)


def environment_databases(data_dir: str | None = None) -> DatabaseResolver:
    """Default resolver: `gold["db_path"]` when the task carries one, else the sql
    environment's database file for `db_id` (`environments.sql.db.database_path`)."""

    def resolve(task: GoldTask) -> Path:
        if task.gold.get("db_path"):
            return Path(task.gold["db_path"])
        if not task.db_id:
            raise VerifierError(f"task {task.task_id} names no database (db_id)")
        try:
            from environments.sql.db import database_path
        except ImportError as exc:
            raise VerifierError(f"cannot resolve database '{task.db_id}': {exc}") from exc
        try:
            return Path(database_path(task.db_id, data_dir))
        except (KeyError, RuntimeError, OSError) as exc:
            raise VerifierError(f"database '{task.db_id}' unavailable: {exc}") from exc

    return resolve


class SqlVerifier(Verifier):
    name = "sql"
    description = (
        "Execution match: gold and predicted SQL run read-only on the task's database; "
        "result multisets compared (ordered lists when the gold query has ORDER BY)."
    )

    def __init__(
        self,
        lookup: TaskLookup,
        resolve_db: DatabaseResolver | None = None,
        *,
        query_timeout_s: float = 5.0,
        max_rows: int = 10_000,
    ) -> None:
        self.lookup = lookup
        self.resolve_db = resolve_db or environment_databases()
        self.query_timeout_s = query_timeout_s
        self.max_rows = max_rows

    def _run(self, db: Path, sql: str) -> list[tuple[Any, ...]]:
        return run_query(db, sql, timeout_s=self.query_timeout_s, max_rows=self.max_rows)

    def score(self, item: ScoreItem) -> Verdict:
        task = self.lookup(item.env, item.task_set, item.task_id)
        if not task.gold_sql:
            raise VerifierError(f"task {item.task_id} has no gold query")
        db = self.resolve_db(task)
        try:
            gold_rows = self._run(db, task.gold_sql)
        except (QueryFailed, FileNotFoundError) as exc:
            raise VerifierError(f"gold query failed on {db.name}: {exc}") from exc
        ordered = bool(task.gold.get("ordered", is_ordered(task.gold_sql)))
        details: dict[str, Any] = {"ordered": ordered, "gold_rows": len(gold_rows)}
        sql = predicted_sql(item)
        if sql is None:
            return Verdict(0.0, {**details, "answered": False})
        try:
            pred_rows = self._run(db, sql)
        except QueryFailed as exc:
            return Verdict(0.0, {**details, "answered": True, "predicted_error": str(exc)})
        match = results_match(gold_rows, pred_rows, ordered)
        return Verdict(float(match), {**details, "answered": True, "pred_rows": len(pred_rows)})
