"""The replay service's FastAPI app: a thin HTTP façade over a `BaseStore`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Query, Response

from services.common.app import base_app
from services.common.errors import BadRequest, NotFound
from services.common.metrics import Metrics
from services.common.wire import PolicyPublication, Trajectory
from services.replay.async_store import AsyncStore
from services.replay.schemas import (
    AckResponse,
    AdmitRequest,
    AdmitResponse,
    Batch,
    FinishRequest,
    RecoverResponse,
    ReleaseRequest,
    ReplayStats,
    TakeRequest,
    TrajectoryPage,
)
from services.replay.settings import ReplaySettings
from services.replay.store import BaseStore, make_store


class ReplayMetrics:
    def __init__(self, metrics: Metrics) -> None:
        self.put = metrics.counter("trajectories_put_total", "Trajectories received.")
        self.taken = metrics.counter("batches_taken_total", "Batches handed to learners.")
        self.redelivered = metrics.counter(
            "batches_redelivered_total", "Batches handed out again after no ack."
        )
        self.dropped = metrics.counter(
            "dropped_stale_total", "Samples dropped as older than max_staleness."
        )
        self.acked = metrics.counter("batches_acked_total", "Batches acknowledged.")
        self.admitted = metrics.counter("episodes_admitted_total", "Episodes admitted.")
        self.refused = metrics.counter(
            "admissions_refused_total", "Admission requests that admitted nothing."
        )


def _same_job(job_id: str, trajs: list[Trajectory]) -> None:
    for traj in trajs:
        if traj.job_id != job_id:
            raise BadRequest(
                f"trajectory {traj.trajectory_id} belongs to job {traj.job_id}, not {job_id}",
                field="job_id",
            )


def _install_routes(app: FastAPI, store: AsyncStore, m: ReplayMetrics) -> None:
    @app.post("/v1/jobs/{job_id}/trajectories", status_code=202, tags=["replay"])
    async def put(job_id: str, body: Trajectory | list[Trajectory]) -> dict[str, int]:
        trajs = body if isinstance(body, list) else [body]
        _same_job(job_id, trajs)
        await store.put_many(trajs)
        m.put.inc(len(trajs))
        return {"accepted": len(trajs)}

    @app.post("/v1/jobs/{job_id}/admit", tags=["replay"])
    async def admit(job_id: str, body: AdmitRequest) -> AdmitResponse:
        out = await store.admit(job_id, body)
        m.admitted.inc(out.admitted)
        if not out.admitted:
            m.refused.inc()
        return out

    @app.post("/v1/jobs/{job_id}/admit/release", tags=["replay"])
    async def release(job_id: str, body: ReleaseRequest) -> AdmitResponse:
        return await store.release(job_id, body.count)

    @app.post(
        "/v1/jobs/{job_id}/batches/take",
        tags=["replay"],
        response_model=Batch,
        responses={204: {"description": "No batch within wait_s."}},
    )
    async def take(job_id: str, body: TakeRequest) -> Batch | Response:
        batch = await store.take_batch(job_id, body)
        if batch is None:
            return Response(status_code=204)
        m.taken.inc()
        m.dropped.inc(batch.dropped_stale)
        if batch.redelivered:
            m.redelivered.inc()
        return batch

    @app.post("/v1/jobs/{job_id}/batches/{batch_id}/ack", tags=["replay"])
    async def ack(job_id: str, batch_id: str) -> AckResponse:
        acked = await store.ack(job_id, batch_id)
        if acked:
            m.acked.inc()
        return AckResponse(acked=acked)

    @app.post("/v1/jobs/{job_id}/recover", tags=["replay"])
    async def recover(job_id: str) -> RecoverResponse:
        return RecoverResponse(requeued_batches=await store.recover(job_id))

    @app.get("/v1/jobs/{job_id}/stats", tags=["replay"])
    async def stats(job_id: str) -> ReplayStats:
        return await store.stats(job_id)

    @app.get("/v1/jobs/{job_id}/trajectories", tags=["replay"])
    async def trajectories(
        job_id: str,
        offset: int = Query(0, ge=0, description="Skip this many (newest first)."),
        limit: int = Query(50, ge=1, le=500, description="Page size."),
    ) -> TrajectoryPage:
        return await store.trajectories(job_id, offset, limit)

    @app.post("/v1/jobs/{job_id}/publications", status_code=201, tags=["replay"])
    async def publish(job_id: str, body: PolicyPublication) -> PolicyPublication:
        if body.job_id != job_id:
            raise BadRequest(f"publication is for job {body.job_id}, not {job_id}")
        await store.publish(body)
        return body

    @app.get("/v1/jobs/{job_id}/publications/latest", tags=["replay"])
    async def latest(job_id: str) -> PolicyPublication:
        pub = await store.latest_publication(job_id)
        if pub is None:
            raise NotFound(f"job {job_id} has no policy publication yet")
        return pub

    @app.post("/v1/jobs/{job_id}/finish", tags=["replay"])
    async def finish(job_id: str, body: FinishRequest) -> ReplayStats:
        await store.finish(job_id, body.reason)
        return await store.stats(job_id)

    @app.delete("/v1/jobs/{job_id}", status_code=204, tags=["replay"])
    async def delete(job_id: str) -> Response:
        await store.delete_job(job_id)
        return Response(status_code=204)


def create_app(settings: ReplaySettings | None = None, store: BaseStore | None = None) -> FastAPI:
    """The replay app over `store` (built from `settings.backend` when not given)."""
    settings = settings or ReplaySettings()
    sync_store = store or make_store(settings.backend)
    astore = AsyncStore(sync_store, settings.take_poll_s)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        if store is None:  # we built it, we close it
            sync_store.close()

    async def readiness() -> dict[str, str]:
        ok = await astore.ping()
        return {"store": "ok" if ok else f"{settings.backend.type} unreachable"}

    app = base_app("replay", readiness=readiness, lifespan=lifespan)
    app.state.settings = settings
    app.state.store = sync_store
    _install_routes(app, astore, ReplayMetrics(app.state.metrics))
    return app
