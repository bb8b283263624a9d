"""`/v1/jobs/{id}/metrics` (time series in and out) and `/trajectories` (from replay)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Query, Request
from fastapi.concurrency import run_in_threadpool

from services.api.auth import Action, CurrentPrincipal
from services.api.errors import InvalidRequest
from services.api.routes import deps
from services.api.schemas import MetricsAccepted, MetricSeries
from services.common.wire import MetricPoint
from services.replay.schemas import TrajectoryPage

router = APIRouter(prefix="/v1/jobs/{job_id}", tags=["metrics"])
MAX_POINTS_PER_POST = 10_000


@router.get("/metrics", response_model=MetricSeries)
def get_metrics(
    request: Request,
    principal: CurrentPrincipal,
    job_id: str,
    kind: Annotated[
        Literal["train", "eval", "rollout"] | None, Query(description="Only this kind.")
    ] = None,
    since_step: Annotated[int | None, Query(ge=0, description="Only steps >= this.")] = None,
    limit: Annotated[int, Query(ge=1, le=100_000, description="Most points returned.")] = 10_000,
) -> MetricSeries:
    principal.require(Action.READ)
    points = deps.store(request).metrics(job_id, kind, since_step, limit)
    return MetricSeries(job_id=job_id, points=points)


@router.post("/metrics", response_model=MetricsAccepted)
def post_metrics(
    request: Request,
    principal: CurrentPrincipal,
    job_id: str,
    points: Annotated[list[MetricPoint], Body(description="Points of this job.")],
) -> MetricsAccepted:
    """The learner (scope `job` or `internal`) appends points to the job's series."""
    principal.require(Action.POST_METRICS, job_id=job_id)
    if len(points) > MAX_POINTS_PER_POST:
        raise InvalidRequest(f"at most {MAX_POINTS_PER_POST} points per request")
    for i, point in enumerate(points):
        if point.job_id != job_id:
            raise InvalidRequest(
                f"point {i} is for job '{point.job_id}', posted to '{job_id}'",
                field=f"[{i}].job_id",
            )
    accepted = deps.store(request).add_metrics(job_id, points)
    request.app.state.metrics_points.inc(accepted)
    return MetricsAccepted(accepted=accepted)


@router.get("/trajectories", response_model=TrajectoryPage)
async def get_trajectories(
    request: Request,
    principal: CurrentPrincipal,
    job_id: str,
    offset: Annotated[int, Query(ge=0, description="Skip this many trajectories.")] = 0,
    limit: Annotated[int, Query(ge=1, le=200, description="Page size.")] = 20,
) -> TrajectoryPage:
    """A page of the job's archived trajectories, fetched from the replay service."""
    principal.require(Action.READ)
    await run_in_threadpool(deps.store(request).exists, job_id)
    return await deps.trajectories(request).page(job_id, offset, limit)
