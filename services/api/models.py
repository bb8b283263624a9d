"""The job store's tables (SQLAlchemy 2 typed ORM). Schema changes go through Alembic
migrations in `services/api/migrations` — never `create_all`.

Times are Unix seconds (float), like the wire objects.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# SQLite only auto-increments INTEGER PRIMARY KEY; PostgreSQL gets a 64-bit sequence.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


class Token(Base):
    """An API token: only the sha256 of the secret is stored."""

    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scope: Mapped[str] = mapped_column(String(16))
    job_id: Mapped[str | None] = mapped_column(String(32), default=None)
    created_at: Mapped[float] = mapped_column(Float)
    revoked_at: Mapped[float | None] = mapped_column(Float, default=None)


class Job(Base):
    __tablename__ = "jobs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(128))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), index=True)
    created_at: Mapped[float] = mapped_column(Float, index=True)
    started_at: Mapped[float | None] = mapped_column(Float, default=None)
    finished_at: Mapped[float | None] = mapped_column(Float, default=None)
    failure_reason: Mapped[str | None] = mapped_column(Text, default=None)
    owner_token_id: Mapped[int | None] = mapped_column(
        ForeignKey("tokens.id", ondelete="SET NULL"), default=None
    )
    owner: Mapped[str | None] = mapped_column(String(128), default=None)
    run_dir: Mapped[str | None] = mapped_column(Text, default=None)
    processes: Mapped[list[Any] | None] = mapped_column(JSON, default=None)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)


class MetricRow(Base):
    __tablename__ = "metric_points"
    __table_args__ = (Index("ix_metric_points_job_kind_step", "job_id", "kind", "step"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    step: Mapped[int] = mapped_column(Integer)
    ts: Mapped[float] = mapped_column(Float)
    kind: Mapped[str] = mapped_column(String(16))
    values: Mapped[dict[str, Any]] = mapped_column(JSON)


class EventRow(Base):
    """A job event (status change, metric batch, log line); SSE streams them by id."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_job_id_id", "job_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    ts: Mapped[float] = mapped_column(Float)
    type: Mapped[str] = mapped_column(String(16))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
