"""The job store: jobs, their metric series and their event log, over SQLAlchemy.

Every status change goes through `transition`, a conditional UPDATE (`WHERE status IN
(...)`) so the runner and a concurrent cancel can never both win, and each change is
written to the events table in the same transaction (what SSE streams).
"""

from __future__ import annotations

import copy
import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from services.api.db import Database
from services.api.models import EventRow, Job, MetricRow
from services.api.schemas import (
    EventType,
    JobEvent,
    JobInfo,
    JobPage,
    JobStatus,
    ProcessInfo,
)
from services.common.errors import NotFound
from services.common.jobspec import JobSpec
from services.common.wire import MetricPoint

log = logging.getLogger(__name__)


def new_job_id() -> str:
    return uuid.uuid4().hex[:12]


def _stored_spec(job: Job) -> JobSpec:
    """The stored spec. One written under an older JobSpec schema is read leniently (keys
    the schema no longer has are dropped) rather than making the job unreadable."""
    try:
        return JobSpec.model_validate(job.spec)
    except ValidationError as exc:
        log.warning("job %s: stored spec no longer validates as is (%s)", job.id, exc)
        data = copy.deepcopy(job.spec)
        for error in exc.errors():
            if error["type"] == "extra_forbidden":
                _drop(data, error["loc"])
        try:
            return JobSpec.model_validate(data)
        except ValidationError:
            return JobSpec.model_construct(**data)


def _drop(data: Any, loc: tuple[int | str, ...]) -> None:
    for part in loc[:-1]:
        data = data[part]
    data.pop(loc[-1], None)


def _event(job_id: str, type_: EventType, data: dict[str, Any]) -> EventRow:
    return EventRow(job_id=job_id, ts=time.time(), type=type_.value, data=data)


class JobStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # ------------------------------------------------------------------ jobs

    def create_job(self, spec: JobSpec, owner_token_id: int | None, owner: str | None) -> JobInfo:
        job = Job(
            id=new_job_id(),
            name=spec.name,
            spec=spec.model_dump(mode="json"),
            status=JobStatus.QUEUED.value,
            created_at=time.time(),
            owner_token_id=owner_token_id,
            owner=owner,
            cancel_requested=False,
        )
        with self.db.session() as session:
            session.add(job)
            session.flush()
            session.add(_event(job.id, EventType.STATUS, {"status": job.status, "reason": None}))
            session.commit()
            return self._info(session, job)

    def _row(self, session: Session, job_id: str) -> Job:
        job = session.get(Job, job_id)
        if job is None:
            raise NotFound(f"no job '{job_id}'", field="job_id")
        return job

    def get_job(self, job_id: str) -> JobInfo:
        with self.db.session() as session:
            return self._info(session, self._row(session, job_id))

    def owner_of(self, job_id: str) -> int | None:
        with self.db.session() as session:
            return self._row(session, job_id).owner_token_id

    def status_of(self, job_id: str) -> JobStatus:
        with self.db.session() as session:
            status = session.scalar(select(Job.status).where(Job.id == job_id))
        if status is None:
            raise NotFound(f"no job '{job_id}'", field="job_id")
        return JobStatus(status)

    def exists(self, job_id: str) -> None:
        """Raise NotFound unless the job exists."""
        with self.db.session() as session:
            if session.scalar(select(Job.id).where(Job.id == job_id)) is None:
                raise NotFound(f"no job '{job_id}'", field="job_id")

    def list_jobs(
        self, status: Sequence[JobStatus] = (), offset: int = 0, limit: int = 50
    ) -> JobPage:
        query = select(Job)
        if status:
            query = query.where(Job.status.in_([s.value for s in status]))
        with self.db.session() as session:
            total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
            rows = session.scalars(
                query.order_by(Job.created_at.desc(), Job.id).offset(offset).limit(limit)
            )
            items = [self._info(session, job) for job in rows]
        return JobPage(items=items, total=total, offset=offset, limit=limit)

    def jobs_in(self, statuses: Iterable[JobStatus], limit: int | None = None) -> list[JobInfo]:
        """Jobs in these states, oldest first (the runner's queue order)."""
        query = (
            select(Job)
            .where(Job.status.in_([s.value for s in statuses]))
            .order_by(Job.created_at, Job.id)
        )
        if limit is not None:
            query = query.limit(limit)
        with self.db.session() as session:
            return [self._info(session, job) for job in session.scalars(query)]

    def transition(
        self,
        job_id: str,
        allowed_from: Iterable[JobStatus],
        to: JobStatus,
        *,
        reason: str | None = None,
        **fields: Any,
    ) -> bool:
        """Move a job to `to` if it is in one of `allowed_from`; False if it was not."""
        now = time.time()
        values: dict[str, Any] = {"status": to.value, **fields}
        if to is JobStatus.RUNNING:
            values.setdefault("started_at", now)
        if to.terminal:
            values["finished_at"] = now
            values["failure_reason"] = reason
        with self.db.session() as session:
            result = session.execute(
                update(Job)
                .where(Job.id == job_id, Job.status.in_([s.value for s in allowed_from]))
                .values(**values)
            )
            if not result.rowcount:  # type: ignore[attr-defined]
                session.rollback()
                return False
            session.add(_event(job_id, EventType.STATUS, {"status": to.value, "reason": reason}))
            session.commit()
            return True

    def request_cancel(self, job_id: str) -> JobInfo:
        with self.db.session() as session:
            job = self._row(session, job_id)
            job.cancel_requested = True
            session.commit()
            return self._info(session, job)

    def set_processes(self, job_id: str, processes: list[ProcessInfo], run_dir: str) -> None:
        with self.db.session() as session:
            job = self._row(session, job_id)
            job.processes = [p.model_dump(mode="json") for p in processes]
            job.run_dir = run_dir
            session.commit()

    # --------------------------------------------------------------- metrics

    def add_metrics(self, job_id: str, points: list[MetricPoint]) -> int:
        rows = [
            MetricRow(job_id=job_id, step=p.step, ts=p.ts, kind=p.kind, values=dict(p.values))
            for p in points
        ]
        with self.db.session() as session:
            self._row(session, job_id)
            session.add_all(rows)
            data = {"points": [p.model_dump(mode="json") for p in points]}
            session.add(_event(job_id, EventType.METRICS, data))
            session.commit()
        return len(rows)

    def metrics(
        self,
        job_id: str,
        kind: str | None = None,
        since_step: int | None = None,
        limit: int = 10_000,
    ) -> list[MetricPoint]:
        query = select(MetricRow).where(MetricRow.job_id == job_id)
        if kind:
            query = query.where(MetricRow.kind == kind)
        if since_step is not None:
            query = query.where(MetricRow.step >= since_step)
        query = query.order_by(MetricRow.step, MetricRow.ts, MetricRow.id).limit(limit)
        with self.db.session() as session:
            self._row(session, job_id)
            return [
                MetricPoint(job_id=r.job_id, step=r.step, ts=r.ts, kind=r.kind, values=r.values)  # type: ignore[arg-type]
                for r in session.scalars(query)
            ]

    # ---------------------------------------------------------------- events

    def add_log_event(self, job_id: str, process: str, lines: list[str]) -> None:
        with self.db.session() as session:
            session.add(_event(job_id, EventType.LOG, {"process": process, "lines": lines}))
            session.commit()

    def events_after(self, job_id: str, after_id: int = 0, limit: int = 500) -> list[JobEvent]:
        query = (
            select(EventRow)
            .where(EventRow.job_id == job_id, EventRow.id > after_id)
            .order_by(EventRow.id)
            .limit(limit)
        )
        with self.db.session() as session:
            return [
                JobEvent(id=r.id, job_id=r.job_id, ts=r.ts, type=EventType(r.type), data=r.data)
                for r in session.scalars(query)
            ]

    # -------------------------------------------------------------- helpers

    @staticmethod
    def _info(session: Session, job: Job) -> JobInfo:
        latest = session.scalar(
            select(MetricRow)
            .where(MetricRow.job_id == job.id, MetricRow.kind == "train")
            .order_by(MetricRow.step.desc(), MetricRow.id.desc())
            .limit(1)
        )
        return JobInfo(
            id=job.id,
            name=job.name,
            status=JobStatus(job.status),
            spec=_stored_spec(job),
            created_at=job.created_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
            failure_reason=job.failure_reason,
            owner=job.owner,
            run_dir=job.run_dir,
            cancel_requested=job.cancel_requested,
            processes=[ProcessInfo.model_validate(p) for p in job.processes or []],
            last_step=latest.step if latest else None,
            last_metrics=dict(latest.values) if latest else {},
        )
