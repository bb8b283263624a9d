"""The rollout service's FastAPI app: runs a job's workers in-process on request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from services.common.app import base_app
from services.common.errors import BadRequest
from services.common.jobspec import JobRuntime
from services.rollout.metrics import RolloutMetrics
from services.rollout.pool import DepsFactory, WorkerPool, default_deps
from services.rollout.schemas import WorkerInfo, WorkerList
from services.rollout.settings import RolloutSettings


def _install_routes(app: FastAPI, pool: WorkerPool) -> None:
    @app.post("/v1/jobs/{job_id}/workers", status_code=201, tags=["rollout"])
    async def start_worker(job_id: str, runtime: JobRuntime) -> WorkerInfo:
        if runtime.job_id != job_id:
            raise BadRequest(f"runtime is for job {runtime.job_id}, not {job_id}", field="job_id")
        return pool.start(runtime)

    @app.get("/v1/jobs/{job_id}/workers", tags=["rollout"])
    async def job_workers(job_id: str) -> WorkerList:
        return WorkerList(workers=pool.list(job_id))

    @app.delete("/v1/jobs/{job_id}/workers", tags=["rollout"])
    async def stop_workers(job_id: str) -> WorkerList:
        return WorkerList(workers=await pool.stop(job_id))

    @app.delete("/v1/jobs/{job_id}/workers/{worker_index}", tags=["rollout"])
    async def stop_worker(job_id: str, worker_index: int) -> WorkerList:
        return WorkerList(workers=await pool.stop(job_id, worker_index))

    @app.get("/v1/workers", tags=["rollout"])
    async def all_workers() -> WorkerList:
        return WorkerList(workers=pool.list())


def create_app(
    settings: RolloutSettings | None = None, deps_factory: DepsFactory | None = None
) -> FastAPI:
    """The rollout app; `deps_factory` builds each worker's clients (default: the job's
    service endpoints over HTTP)."""
    settings = settings or RolloutSettings()
    holder: dict[str, WorkerPool] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await holder["pool"].shutdown()

    app = base_app("rollout", lifespan=lifespan)
    pool = WorkerPool(
        settings.worker,
        RolloutMetrics(app.state.metrics),
        deps_factory or default_deps,
        settings.max_workers,
    )
    holder["pool"] = pool
    app.state.settings = settings
    app.state.pool = pool
    _install_routes(app, pool)
    return app
