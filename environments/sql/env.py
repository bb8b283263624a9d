"""The sql environment: explore a read-only SQLite database and submit one query."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from environments.base import EnvContext, Environment
from environments.sql import questions, safe
from environments.sql.db import database_path
from environments.tasks import Task, TaskSet, split_for
from environments.tools import Final, ToolFailure, tool

SYSTEM_PROMPT = (
    "You answer questions about a SQLite database. Use list_tables, describe(table) and "
    "execute_sql(query) to explore; then call submit(query) with one SELECT query whose "
    "result answers the question. The database is read-only."
)
SYNTHETIC_DBS = ("synth_1", "synth_2", "synth_3")
EVAL_FRACTION = 0.15


def build_tasks(seed: int, data_dir: Path) -> list[Task]:
    rng = random.Random(f"sql:{seed}")
    qs = questions.generate_for(
        database_path("chinook", data_dir), "chinook", questions.CHINOOK, 18, rng
    )
    for db_id in SYNTHETIC_DBS:
        path = database_path(db_id, data_dir)
        qs += questions.generate_for(path, db_id, questions.SHOP, 5, rng)
    tasks = []
    for i, q in enumerate(qs):
        task_id = f"sql-{q.db_id}-{i:04d}"
        tasks.append(
            Task(
                task_id=task_id,
                task_type="sql",
                prompt=f"Database: {q.db_id}\nQuestion: {q.question}",
                split=split_for(task_id, EVAL_FRACTION, salt=f"sql{seed}"),
                difficulty=q.difficulty,
                gold_sql=q.sql,
                db_id=q.db_id,
                gold={"template": q.key, "ordered": "ORDER BY" in q.sql.upper()},
                metadata={"db_id": q.db_id},
            )
        )
    return tasks


def results_match(gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]], ordered: bool) -> bool:
    """Execution match: same rows (as a multiset, or in order when the gold is ordered);
    floats compared at 2 decimals."""

    def norm(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [tuple(round(v, 2) if isinstance(v, float) else v for v in r) for r in rows]

    g, p = norm(gold), norm(pred)
    return g == p if ordered else Counter(g) == Counter(p)


class SQLEnvironment(Environment):
    name = "sql"
    description = "Text-to-SQL over Chinook and synthetic shop databases (read-only SQLite)."
    task_type = "sql"
    task_set_version = "1"
    max_turns = 10

    @classmethod
    def load_shared(cls, ctx: EnvContext) -> dict[str, Path]:
        return {db: database_path(db, ctx.data_dir) for db in ("chinook", *SYNTHETIC_DBS)}

    @classmethod
    def build_task_set(cls, name: str, seed: int, ctx: EnvContext) -> TaskSet:
        return TaskSet(cls.name, name, cls.task_set_version, seed, build_tasks(seed, ctx.data_dir))

    def __init__(self, task: Task, shared: Any = None, ctx: EnvContext | None = None) -> None:
        super().__init__(task, shared, ctx)
        db_id = task.db_id or "chinook"
        paths = shared or {}
        self.db_path: Path = paths.get(db_id) or database_path(db_id, self.ctx.data_dir)
        self.time_limit_s = float(
            self.ctx.options.get("query_time_limit_s", min(2.0, self.ctx.tool_timeout_s / 2))
        )
        self.max_rows = int(self.ctx.options.get("max_rows", 50))
        self.max_bytes = int(self.ctx.options.get("max_bytes", 4000))

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    def _run(self, query: str, max_rows: int | None = None) -> safe.QueryResult:
        try:
            return safe.execute(
                self.db_path,
                query,
                time_limit_s=self.time_limit_s,
                max_rows=max_rows or self.max_rows,
            )
        except safe.QueryRefused as exc:
            raise ToolFailure(str(exc), kind="refused") from None
        except safe.QueryTimeout as exc:
            raise ToolFailure(str(exc), kind="timeout") from None
        except safe.QueryError as exc:
            raise ToolFailure(f"SQL error: {exc}") from None

    def _tables(self) -> list[str]:
        result = self._run(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", max_rows=1000
        )
        return [r[0] for r in result.rows]

    @tool("List the tables of the database with their row counts.")
    def list_tables(self) -> str:
        lines = []
        for table in self._tables():
            count = self._run(f'SELECT COUNT(*) FROM "{table}"').rows[0][0]
            lines.append(f"{table} ({count} rows)")
        return "\n".join(lines)

    @tool("Show a table's columns (name, type, keys) and three example rows.")
    def describe(
        self, table: Annotated[str, Field(min_length=1, description="Table name.")]
    ) -> str:
        names = {t.lower(): t for t in self._tables()}
        if table.lower() not in names:
            raise ToolFailure(f"no table '{table}'; tables: {', '.join(names.values())}")
        table = names[table.lower()]
        conn = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True)
        try:  # fixed internal PRAGMAs on a validated name, outside the agent's authorizer
            cols = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            fks = conn.execute(f'PRAGMA foreign_key_list("{table}")').fetchall()
        finally:
            conn.close()
        refs = {fk[3]: f"{fk[2]}({fk[4]})" for fk in fks}
        lines = [f"Table {table}:"]
        for _, name, ctype, notnull, _, pk in cols:
            extra = " PRIMARY KEY" if pk else ""
            extra += " NOT NULL" if notnull else ""
            extra += f" -> {refs[name]}" if name in refs else ""
            lines.append(f"  {name} {ctype}{extra}")
        sample = self._run(f'SELECT * FROM "{table}" LIMIT 3')
        return "\n".join(lines) + "\nExample rows:\n" + safe.format_result(sample, self.max_bytes)

    @tool("Run one read-only SQL SELECT query and show the result (rows are capped).")
    def execute_sql(
        self, query: Annotated[str, Field(min_length=1, max_length=4000, description="SQL.")]
    ) -> str:
        return safe.format_result(self._run(query), self.max_bytes)

    @tool("Submit the final SQL query that answers the question. Ends the episode.", final=True)
    def submit(
        self, query: Annotated[str, Field(min_length=1, max_length=4000, description="SQL.")]
    ) -> Final:
        info: dict[str, Any] = {}
        try:
            pred = safe.execute(
                self.db_path, query, time_limit_s=self.time_limit_s, max_rows=10_000
            )
            gold = safe.execute(
                self.db_path, self.task.gold_sql or "", time_limit_s=10.0, max_rows=10_000
            )
            info["execution_match"] = results_match(
                gold.rows, pred.rows, bool(self.task.gold.get("ordered"))
            )
            observation = "Query submitted. The episode is over."
        except (safe.QueryRefused, safe.QueryTimeout, safe.QueryError) as exc:
            info["execution_match"] = False
            info["submit_error"] = str(exc)
            observation = f"Query submitted, but it failed: {exc}. The episode is over."
        return Final(
            answer=query, observation=observation, reward=float(info["execution_match"]), info=info
        )
