"""sql verifier: execution match on a real SQLite database, read-only, with deadlines."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from reward_helpers import table_lookup

from environments.tasks import Task
from services.common.wire import ScoreItem
from services.reward.verifiers.base import VerifierError
from services.reward.verifiers.sql import SqlVerifier, is_ordered, predicted_sql
from services.reward.verifiers.sqlexec import QueryFailed, run_query

SCHEMA = """
CREATE TABLE Artist (ArtistId INTEGER PRIMARY KEY, Name TEXT);
CREATE TABLE Album (AlbumId INTEGER PRIMARY KEY, Title TEXT, ArtistId INTEGER);
CREATE TABLE Track (TrackId INTEGER PRIMARY KEY, Name TEXT, AlbumId INTEGER,
                    Milliseconds INTEGER, UnitPrice NUMERIC);
"""


@pytest.fixture(scope="module")
def music_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sql") / "music.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.executemany(
        "INSERT INTO Artist VALUES (?, ?)", [(1, "AC/DC"), (2, "Accept"), (3, "Aerosmith")]
    )
    conn.executemany(
        "INSERT INTO Album VALUES (?, ?, ?)",
        [
            (1, "For Those About To Rock", 1),
            (2, "Balls to the Wall", 2),
            (3, "Let There Be Rock", 1),
        ],
    )
    tracks = [(i, f"Track {i}", 1 + i % 3, 200_000 + 1000 * i, 0.99) for i in range(1, 31)]
    conn.executemany("INSERT INTO Track VALUES (?, ?, ?, ?, ?)", tracks)
    conn.commit()
    conn.close()
    return path


def _task(task_id: str, gold_sql: str, db: Path) -> Task:
    return Task(
        task_id=task_id,
        task_type="sql",
        prompt="...",
        gold_sql=gold_sql,
        db_id="music",
        gold={"db_path": str(db)},
    )


@pytest.fixture
def verifier(music_db: Path) -> SqlVerifier:
    tasks = [
        _task(
            "albums-per-artist", "SELECT ArtistId, COUNT(*) FROM Album GROUP BY ArtistId", music_db
        ),
        _task("longest", "SELECT Name FROM Track ORDER BY Milliseconds DESC LIMIT 3", music_db),
        _task("broken-gold", "SELECT nope FROM Nowhere", music_db),
        _task("missing-db", "SELECT 1", music_db.parent / "absent.sqlite"),
    ]
    return SqlVerifier(table_lookup(tasks), query_timeout_s=0.5, max_rows=100)


def test_multiset_match_ignores_row_order_and_column_names(
    verifier: SqlVerifier, make_item: Callable[..., ScoreItem]
) -> None:
    pred = (
        "SELECT a.ArtistId AS who, COUNT(al.AlbumId) AS n FROM Artist a JOIN Album al "
        "ON al.ArtistId = a.ArtistId GROUP BY a.ArtistId ORDER BY n ASC"
    )
    verdict = verifier.score(make_item("sql", "albums-per-artist", final_answer=pred))
    assert verdict.reward == 1.0 and verdict.details["ordered"] is False
    wrong = "SELECT ArtistId, COUNT(*) FROM Album WHERE AlbumId < 3 GROUP BY ArtistId"
    assert verifier.score(make_item("sql", "albums-per-artist", final_answer=wrong)).reward == 0.0


def test_order_matters_when_gold_orders(
    verifier: SqlVerifier, make_item: Callable[..., ScoreItem]
) -> None:
    same = "```sql\nSELECT Name FROM Track ORDER BY Milliseconds DESC LIMIT 3;\n```"
    assert verifier.score(make_item("sql", "longest", final_answer=same)).reward == 1.0
    reversed_order = (
        "SELECT Name FROM (SELECT Name, Milliseconds FROM Track ORDER BY Milliseconds DESC "
        "LIMIT 3) ORDER BY Milliseconds ASC"
    )
    assert verifier.score(make_item("sql", "longest", final_answer=reversed_order)).reward == 0.0


def test_bad_predicted_sql_is_a_real_zero(
    verifier: SqlVerifier, make_item: Callable[..., ScoreItem]
) -> None:
    verdict = verifier.score(make_item("sql", "longest", final_answer="SELEC Name FROM Track"))
    assert verdict.reward == 0.0 and "syntax" in verdict.details["predicted_error"]
    none = verifier.score(make_item("sql", "longest", assistant="I do not know"))
    assert none.reward == 0.0 and none.details["answered"] is False


@pytest.mark.parametrize(
    "attack",
    [
        "DELETE FROM Track",
        "DROP TABLE Track",
        "SELECT 1; DELETE FROM Track",
        "ATTACH DATABASE '/tmp/x.sqlite' AS x",
        "PRAGMA journal_mode = DELETE",
        "CREATE TABLE t (x)",
    ],
)
def test_writes_are_refused_and_score_zero(
    attack: str, verifier: SqlVerifier, music_db: Path, make_item: Callable[..., ScoreItem]
) -> None:
    verdict = verifier.score(make_item("sql", "longest", final_answer=attack))
    assert verdict.reward == 0.0 and verdict.details["predicted_error"]
    assert run_query(music_db, "SELECT COUNT(*) FROM Track", timeout_s=1, max_rows=1) == [(30,)]


def test_runaway_predicted_query_is_stopped(
    verifier: SqlVerifier, make_item: Callable[..., ScoreItem]
) -> None:
    forever = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"
    )
    verdict = verifier.score(make_item("sql", "longest", final_answer=forever))
    assert verdict.reward == 0.0 and "QueryTimeout" in verdict.details["predicted_error"]


def test_row_cap(music_db: Path) -> None:
    with pytest.raises(QueryFailed, match="more than 10 rows"):
        run_query(music_db, "SELECT * FROM Track", timeout_s=1, max_rows=10)


def test_gold_failures_are_verifier_errors(
    verifier: SqlVerifier, make_item: Callable[..., ScoreItem]
) -> None:
    with pytest.raises(VerifierError, match="gold query failed"):
        verifier.score(make_item("sql", "broken-gold", final_answer="SELECT 1"))
    with pytest.raises(VerifierError, match="does not exist"):
        verifier.score(make_item("sql", "missing-db", final_answer="SELECT 1"))


def test_is_ordered_and_extraction(make_item: Callable[..., ScoreItem]) -> None:
    assert is_ordered("select * from t order  by x")
    assert not is_ordered("select * from t where name = 'order by'")
    item = make_item("sql", assistant="Here:\n```sql\nSELECT 1;\n```")
    assert predicted_sql(item) == "SELECT 1"
