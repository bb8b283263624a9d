"""Fixtures for the api integration tests: real SQLite files and real PostgreSQL
databases (created per test, dropped after)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    name = f"slipstream_api_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(f"{PG_SERVER}/test", isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # pragma: no cover - only where PostgreSQL is down
        admin.dispose()
        pytest.skip(f"PostgreSQL at 127.0.0.1:5432 unavailable: {exc}")
    try:
        yield f"{PG_SERVER}/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'slipstream.db'}"
    return request.getfixturevalue("postgres_url")
