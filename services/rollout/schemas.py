"""Request/response models of the rollout service's HTTP API."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class WorkerInfo(BaseModel):
    job_id: str = Field(description="The job the worker belongs to.")
    worker_index: int = Field(description="Which worker of the job.")
    state: Literal["starting", "running", "exited"] = Field(description="Lifecycle state.")
    started_at: float = Field(description="Unix time the worker was started.")
    episodes: int = Field(0, description="Episodes finished.")
    groups: int = Field(0, description="Groups pushed to replay.")
    failures: int = Field(0, description="Failed episodes.")
    in_flight: int = Field(0, description="Episodes running now.")
    version: int = Field(0, description="Latest policy version the worker saw.")
    by_status: dict[str, int] = Field(default_factory=dict, description="Episodes by status.")
    exit_reason: str | None = Field(None, description="budget | finished | stopped | failed.")
    detail: str | None = Field(None, description="Why it exited.")


class WorkerList(BaseModel):
    workers: list[WorkerInfo]
