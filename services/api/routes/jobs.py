"""`/v1/jobs`: submit, list, get, cancel."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request

from services.api.auth import Action, CurrentPrincipal
from services.api.errors import invalid_spec
from services.api.routes import deps
from services.api.schemas import JobInfo, JobPage, JobStatus
from services.common.errors import Conflict
from services.common.jobspec import JobSpecError, parse_job_spec

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])


@router.post("", status_code=201, response_model=JobInfo)
def submit_job(
    request: Request,
    principal: CurrentPrincipal,
    spec: Annotated[dict[str, Any], Body(description="A job spec (see JobSpec).")],
) -> JobInfo:
    """Queue a job. A spec problem is a 422 naming every bad field by its path."""
    principal.require(Action.SUBMIT)
    try:
        parsed = parse_job_spec(spec, "job spec")
    except JobSpecError as exc:
        raise invalid_spec(exc) from None
    info = deps.store(request).create_job(parsed, principal.token_id, principal.name)
    request.app.state.metrics_jobs_submitted.inc()
    runner = request.app.state.runner
    if runner is not None:
        runner.wake()
    return info


@router.get("", response_model=JobPage)
def list_jobs(
    request: Request,
    principal: CurrentPrincipal,
    status: Annotated[list[JobStatus], Query(description="Only jobs in these states.")] = [],  # noqa: B006
    offset: Annotated[int, Query(ge=0, description="Skip this many jobs.")] = 0,
    limit: Annotated[int, Query(ge=1, le=500, description="Page size.")] = 50,
) -> JobPage:
    principal.require(Action.READ)
    return deps.store(request).list_jobs(status, offset, limit)


@router.get("/{job_id}", response_model=JobInfo)
def get_job(request: Request, principal: CurrentPrincipal, job_id: str) -> JobInfo:
    principal.require(Action.READ)
    return deps.store(request).get_job(job_id)


@router.post("/{job_id}/cancel", response_model=JobInfo)
def cancel_job(request: Request, principal: CurrentPrincipal, job_id: str) -> JobInfo:
    """Cancel a job and wait until none of its processes is left (up to the grace
    period, then SIGKILL). Cancelling a cancelled job is a no-op; a finished one, 409."""
    principal.require(Action.CANCEL)
    store = deps.store(request)
    info = store.get_job(job_id)
    principal.require_owner(store.owner_of(job_id))
    if info.status is JobStatus.CANCELLED:
        return info
    if info.status.terminal:
        raise Conflict(f"job {job_id} already {info.status}; nothing to cancel", field="job_id")
    return request.app.state.canceller.cancel(job_id)
