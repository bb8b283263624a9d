"""The sql environment: Chinook from the packaged fixture, synthetic DBs, read-only guard,
questions with gold SQL."""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from environments.base import EnvContext
from environments.sql import safe
from environments.sql.db import database_path
from environments.sql.env import SQLEnvironment
from environments.tasks import TaskSet
from services.common.wire import ToolCall


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def chinook(env_data_dir: Path) -> Path:
    return database_path("chinook", env_data_dir)


@pytest.fixture(scope="module")
def tasks(env_ctx: EnvContext) -> TaskSet:
    return SQLEnvironment.load_task_set("default", env_ctx)


def test_chinook_has_11_tables_and_15607_rows(chinook: Path) -> None:
    conn = sqlite3.connect(chinook)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert len(tables) == 11
    assert sum(conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables) == 15607
    name = conn.execute("SELECT Name FROM Artist WHERE ArtistId = 1").fetchone()[0]
    assert name == "AC/DC"
    conn.close()


def test_synthetic_databases_are_seeded(tmp_path: Path, env_data_dir: Path) -> None:
    a = database_path("synth_7", tmp_path / "a")
    b = database_path("synth_7", tmp_path / "b")
    c = database_path("synth_8", tmp_path / "a")
    rows = lambda p: sqlite3.connect(p).execute("SELECT * FROM orders").fetchall()  # noqa: E731
    assert rows(a) == rows(b) and rows(a) != rows(c)
    with pytest.raises(KeyError):
        database_path("nope", tmp_path)


HOSTILE = {
    "DELETE FROM Track": "refused",
    "UPDATE Customer SET Email = 'x'": "refused",
    "INSERT INTO Genre VALUES (99, 'x')": "refused",
    "DROP TABLE Album": "refused",
    "CREATE TABLE t (a)": "refused",
    "ATTACH DATABASE '/tmp/slipstream-evil.db' AS evil": "refused",
    "PRAGMA query_only = OFF": "refused",
    "PRAGMA writable_schema = ON": "refused",
    "VACUUM": "refused",
    "BEGIN IMMEDIATE": "refused",
    "SELECT load_extension('/tmp/x.so')": "refused",
    "SELECT 1; DELETE FROM Track": "error",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c": (
        "timeout"
    ),
    "SELECT COUNT(*) FROM Track a, Track b, Track c": "timeout",
}


def test_hostile_queries_are_refused_or_stopped_and_the_db_is_unchanged(chinook: Path) -> None:
    before = digest(chinook)
    errors = {"refused": safe.QueryRefused, "timeout": safe.QueryTimeout, "error": safe.QueryError}
    for query, outcome in HOSTILE.items():
        with pytest.raises(errors[outcome]) as info:
            safe.execute(chinook, query, time_limit_s=0.5)
        assert str(info.value), query
    assert not Path("/tmp/slipstream-evil.db").exists()
    assert digest(chinook) == before


def test_hostile_queries_through_the_tools(
    chinook: Path, env_ctx: EnvContext, tasks: TaskSet
) -> None:
    before = digest(chinook)
    task = next(t for t in tasks.tasks if t.db_id == "chinook")
    env = SQLEnvironment(task, SQLEnvironment.load_shared(env_ctx), env_ctx)
    env.max_turns = None  # type: ignore[misc]
    kinds = {"refused": "refused", "timeout": "timeout", "error": "tool_error"}
    for query, outcome in HOSTILE.items():
        result = env.step(ToolCall(name="execute_sql", arguments={"query": query}))
        assert result.error is not None and result.error.kind == kinds[outcome], query
        assert result.observation.startswith("Error: ") and not result.done
    assert digest(chinook) == before


def test_results_are_capped(chinook: Path) -> None:
    result = safe.execute(chinook, "SELECT * FROM Track", max_rows=10)
    assert len(result.rows) == 10 and result.truncated
    text = safe.format_result(result, max_bytes=500)
    assert len(text) < 600 and "truncated" in text


def test_questions_have_gold_sql_that_runs(tasks: TaskSet, env_data_dir: Path) -> None:
    assert len(tasks) >= 300
    assert Counter(t.difficulty for t in tasks.tasks).keys() == {"easy", "medium", "hard"}
    assert {t.db_id for t in tasks.tasks} == {"chinook", "synth_1", "synth_2", "synth_3"}
    for task in tasks.tasks:
        assert task.gold_sql and task.task_type == "sql"
        rows = safe.execute(
            database_path(task.db_id or "", env_data_dir), task.gold_sql, time_limit_s=5, max_rows=5
        ).rows
        assert rows, task.task_id


def test_episode_explore_and_submit(tasks: TaskSet, env_ctx: EnvContext) -> None:
    task = next(t for t in tasks.tasks if t.difficulty == "hard" and t.db_id == "chinook")
    shared = SQLEnvironment.load_shared(env_ctx)
    env = SQLEnvironment(task, shared, env_ctx)
    tables = env.step(ToolCall(name="list_tables", arguments={}))
    assert "Track (3503 rows)" in tables.observation
    described = env.step(ToolCall(name="describe", arguments={"table": "track"}))
    assert "AlbumId INTEGER -> Album(AlbumId)" in described.observation
    nope = env.step(ToolCall(name="describe", arguments={"table": "Nope"}))
    assert nope.error is not None and "tables:" in nope.observation
    done = env.step(ToolCall(name="submit", arguments={"query": task.gold_sql}))
    assert done.done and done.reward == 1.0 and done.info["final_answer"] == task.gold_sql
    wrong = SQLEnvironment(task, shared, env_ctx)
    miss = wrong.step(ToolCall(name="submit", arguments={"query": "SELECT 1"}))
    assert miss.done and miss.reward == 0.0
