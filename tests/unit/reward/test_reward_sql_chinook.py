"""sql verifier on the real Chinook database of the sql environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from reward_helpers import table_lookup

from environments.tasks import Task
from services.common.wire import ScoreItem
from services.reward.verifiers.sql import SqlVerifier, environment_databases
from services.reward.verifiers.sqlexec import run_query

db = pytest.importorskip("environments.sql.db")

TASKS = [
    Task(
        task_id="tracks-per-genre",
        task_type="sql",
        prompt="How many tracks does each genre have?",
        db_id="chinook",
        gold_sql="SELECT g.Name, COUNT(*) FROM Track t JOIN Genre g "
        "ON g.GenreId = t.GenreId GROUP BY g.GenreId",
    ),
    Task(
        task_id="top-customers",
        task_type="sql",
        prompt="The 5 customers who spent the most, highest first (id and total).",
        db_id="chinook",
        gold_sql="SELECT CustomerId, SUM(Total) AS spent FROM Invoice GROUP BY CustomerId "
        "ORDER BY spent DESC, CustomerId LIMIT 5",
    ),
]


@pytest.fixture(scope="module")
def verifier(tmp_path_factory: pytest.TempPathFactory) -> SqlVerifier:
    data_dir = tmp_path_factory.mktemp("chinook")
    try:
        db.database_path("chinook", data_dir)
    except Exception as exc:  # the fixture package is not installed here
        pytest.skip(f"Chinook unavailable: {exc}")
    return SqlVerifier(table_lookup(TASKS, env="sql"), environment_databases(str(data_dir)))


def _item(task_id: str, sql: str) -> ScoreItem:
    return ScoreItem(env="sql", task_id=task_id, task_type="sql", final_answer=sql)


def test_chinook_is_the_real_database(verifier: SqlVerifier) -> None:
    path: Path = verifier.resolve_db(TASKS[0])
    assert run_query(path, "SELECT COUNT(*) FROM Track", timeout_s=5, max_rows=1) == [(3503,)]


def test_equivalent_query_matches_as_multiset(verifier: SqlVerifier) -> None:
    pred = (
        "SELECT (SELECT Name FROM Genre WHERE Genre.GenreId = Track.GenreId) AS genre, "
        "COUNT(TrackId) AS n FROM Track GROUP BY GenreId ORDER BY n DESC"
    )
    verdict = verifier.score(_item("tracks-per-genre", pred))
    assert verdict.reward == 1.0 and verdict.details["gold_rows"] == 25
    off_by_one = (
        "SELECT g.Name, COUNT(*) FROM Track t JOIN Genre g ON g.GenreId = t.GenreId "
        "WHERE t.TrackId > 1 GROUP BY g.GenreId"
    )
    assert verifier.score(_item("tracks-per-genre", off_by_one)).reward == 0.0


def test_ordered_gold_and_float_sums(verifier: SqlVerifier) -> None:
    # summing invoice lines instead of invoice totals: the same money, other float rounding
    same = (
        "SELECT i.CustomerId, SUM(il.UnitPrice * il.Quantity) AS s FROM InvoiceLine il "
        "JOIN Invoice i ON i.InvoiceId = il.InvoiceId GROUP BY i.CustomerId "
        "ORDER BY s DESC, i.CustomerId LIMIT 5"
    )
    assert verifier.score(_item("top-customers", same)).reward == 1.0
    ascending = (
        "SELECT * FROM (SELECT CustomerId, SUM(Total) AS spent FROM Invoice GROUP BY "
        "CustomerId ORDER BY spent DESC, CustomerId LIMIT 5) ORDER BY spent ASC"
    )
    verdict = verifier.score(_item("top-customers", ascending))
    assert verdict.reward == 0.0 and verdict.details["ordered"] is True


def test_chinook_cannot_be_modified(verifier: SqlVerifier) -> None:
    verdict = verifier.score(_item("tracks-per-genre", "UPDATE Track SET Name = 'x'"))
    assert verdict.reward == 0.0 and "predicted_error" in verdict.details
    path = verifier.resolve_db(TASKS[0])
    names = run_query(path, "SELECT COUNT(*) FROM Track WHERE Name = 'x'", timeout_s=5, max_rows=1)
    assert names == [(0,)]


def test_real_sql_task_set_through_the_registry(data_dir: Path) -> None:
    """Every 10th task of the sql environment's task set, found by the production lookup:
    its own gold query matches, the same query with its last row dropped does not."""
    from environments.registry import get_task_set
    from services.reward.registry import build_registry
    from services.reward.settings import RewardSettings

    try:
        tasks = get_task_set("sql", "default", data_dir=data_dir).tasks[::10]
    except Exception as exc:
        pytest.skip(f"sql task set unavailable: {exc}")
    verifier = build_registry(RewardSettings(data_dir=str(data_dir))).get("sql")
    assert {t.db_id for t in tasks} >= {"chinook", "synth_1"}
    for task in tasks:
        gold = task.gold_sql or ""
        item = ScoreItem(env="sql", task_id=task.task_id, task_type="sql", final_answer=gold)
        verdict = verifier.score(item)
        assert verdict.reward == 1.0, (task.task_id, verdict.details)
        if verdict.details["gold_rows"] == 0:
            continue
        fewer = f"SELECT * FROM ({gold}) LIMIT {verdict.details['gold_rows'] - 1}"
        item = ScoreItem(env="sql", task_id=task.task_id, task_type="sql", final_answer=fewer)
        assert verifier.score(item).reward == 0.0, task.task_id
