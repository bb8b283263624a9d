"""The job store on both real databases: migrations on an empty db, token creation the
CLI's way, and the conditional status transitions the runner relies on."""

from __future__ import annotations

import threading

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from services.api.db import current_revision, open_database
from services.api.models import Base
from services.api.schemas import EventType, JobStatus
from services.api.store import JobStore
from services.api.tokens import create_token, find_token
from services.common.jobspec import parse_job_spec
from services.common.wire import MetricPoint

SPEC = parse_job_spec({"environments": [{"name": "arithmetic"}]})


def test_migrations_build_the_schema_on_an_empty_database(database_url: str) -> None:
    db = open_database(database_url)
    try:
        assert current_revision(db.engine) == "0001"
        assert {"jobs", "metric_points", "events", "tokens"} <= set(
            inspect(db.engine).get_table_names()
        )
        with db.engine.connect() as connection:
            assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
    finally:
        db.dispose()


def test_create_token_then_use_it(database_url: str) -> None:
    plaintext = create_token(database_url, "alice", "write")
    db = open_database(database_url)
    try:
        token = find_token(db, plaintext)
        assert token is not None and token.scope == "write" and token.name == "alice"
    finally:
        db.dispose()


def test_only_one_concurrent_transition_wins(database_url: str) -> None:
    db = open_database(database_url)
    store = JobStore(db)
    try:
        job = store.create_job(SPEC, None, "t")
        wins: list[bool] = []
        barrier = threading.Barrier(4)

        def race(to: JobStatus) -> None:
            barrier.wait()
            wins.append(store.transition(job.id, [JobStatus.QUEUED], to))

        threads = [
            threading.Thread(target=race, args=(s,))
            for s in (JobStatus.STARTING, JobStatus.CANCELLED) * 2
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(wins) == [False, False, False, True]
        store.add_metrics(job.id, [MetricPoint(job_id=job.id, step=3, values={"loss": 1.5})])
        events = store.events_after(job.id)
        assert [e.type for e in events] == [EventType.STATUS, EventType.STATUS, EventType.METRICS]
        assert store.get_job(job.id).last_metrics == {"loss": 1.5}
    finally:
        db.dispose()
