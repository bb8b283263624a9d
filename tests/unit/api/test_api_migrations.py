"""Alembic migrations build the schema on an empty database and match the ORM models."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from services.api.db import MIGRATIONS_DIR, alembic_config, current_revision, open_database
from services.api.models import Base


def test_upgrade_head_on_an_empty_sqlite_file(tmp_path: Path) -> None:
    db = open_database(f"sqlite:///{tmp_path / 'nested' / 'fresh.db'}")
    head = ScriptDirectory.from_config(alembic_config(db.engine)).get_current_head()
    assert current_revision(db.engine) == head
    tables = set(inspect(db.engine).get_table_names())
    assert {"jobs", "metric_points", "events", "tokens", "alembic_version"} <= tables
    with db.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
    db.dispose()
    again = open_database(f"sqlite:///{tmp_path / 'nested' / 'fresh.db'}")  # idempotent
    assert current_revision(again.engine) == head
    again.dispose()


def test_migrations_ship_inside_the_package() -> None:
    assert (MIGRATIONS_DIR / "env.py").exists()
    assert list((MIGRATIONS_DIR / "versions").glob("0001_*.py"))
    assert MIGRATIONS_DIR.parent.name == "api"
