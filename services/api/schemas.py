"""Request/response models of the api service's HTTP API."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, NonNegativeInt

from services.common.jobspec import JobSpec
from services.common.wire import MetricPoint


class JobStatus(StrEnum):
    QUEUED = "queued"
    STARTING = "starting"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL


TERMINAL = frozenset({JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED})


class ProcessInfo(BaseModel):
    """One process of a running job, as the runner started it."""

    role: Literal["learner", "worker"] = Field(description="What the process is.")
    index: int = Field(0, description="Worker index (0 for the learner).")
    pid: int | None = Field(None, description="OS process id (local runner).")
    start_time: float | None = Field(
        None, description="Kernel start time of the pid (ticks since boot) to detect pid reuse."
    )
    log: str = Field(description="Path of the process's log file.")
    returncode: int | None = Field(None, description="Exit status once it has exited.")


class JobInfo(BaseModel):
    id: str = Field(description="Job id.")
    name: str = Field(description="The spec's name.")
    status: JobStatus = Field(description="queued, starting, running or a terminal state.")
    spec: JobSpec = Field(description="The validated job spec.")
    created_at: float = Field(description="Unix time of submission.")
    started_at: float | None = Field(None, description="Unix time the processes started.")
    finished_at: float | None = Field(None, description="Unix time it reached a final state.")
    failure_reason: str | None = Field(None, description="Why it failed, with log lines.")
    owner: str | None = Field(None, description="Name of the token that submitted it.")
    run_dir: str | None = Field(None, description="Checkpoints, runtime files and logs.")
    cancel_requested: bool = Field(False, description="A cancel was asked for.")
    processes: list[ProcessInfo] = Field(default_factory=list, description="Job processes.")
    last_step: int | None = Field(None, description="Latest training step with metrics.")
    last_metrics: dict[str, float] = Field(
        default_factory=dict, description="Values of the latest 'train' metric point."
    )


class JobPage(BaseModel):
    items: list[JobInfo] = Field(description="Jobs, newest first.")
    total: NonNegativeInt = Field(description="Jobs matching the filter.")
    offset: NonNegativeInt = Field(description="Index of the first item.")
    limit: NonNegativeInt = Field(description="Page size asked for.")


class MetricSeries(BaseModel):
    job_id: str = Field(description="The job.")
    points: list[MetricPoint] = Field(description="Points ordered by step, then time.")


class MetricsAccepted(BaseModel):
    accepted: NonNegativeInt = Field(description="Points stored.")


class EventType(StrEnum):
    STATUS = "status"
    METRICS = "metrics"
    LOG = "log"


class JobEvent(BaseModel):
    """One server-sent event: `id:` is `id`, `event:` is `type`, `data:` this JSON."""

    id: int = Field(description="Monotonic event id (resume with Last-Event-ID).")
    job_id: str = Field(description="The job.")
    ts: float = Field(description="Unix time.")
    type: EventType = Field(description="status, metrics or log.")
    data: dict[str, Any] = Field(
        description="status: {status, reason}; metrics: {points: [...]}; "
        "log: {process, lines: [...]}."
    )
