"""Alembic environment: migrations run programmatically (`services.api.db.upgrade`), on the
engine passed in `config.attributes["engine"]`."""

from __future__ import annotations

from alembic import context

from services.api.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    engine = config.attributes.get("engine")
    if engine is None:
        from services.api.db import make_engine

        engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()


run_migrations_online()
