"""The code-execution HTTP API: `POST /v1/run_code` and `GET /v1/sandbox`.

`build_router(get_pool)` is mounted by the environment server (the pool is the code
environment's shared state) and by the small standalone app `create_app()` here
(`python -m environments.code`), which refuses to start when the configured isolation
floor cannot be reached.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from fastapi import APIRouter, FastAPI, Request

from environments.code.models import Isolation
from environments.code.pool import SandboxPool
from environments.code.schemas import RunCodeRequest, RunCodeResponse, SandboxInfo
from environments.code.settings import SandboxSettings
from services.common.app import base_app
from services.common.errors import BadRequest
from services.common.metrics import Metrics

PoolGetter = Callable[[Request], Awaitable[SandboxPool]]


def readiness_checks(pool: SandboxPool) -> dict[str, str]:
    """The isolation level, reported as a /readyz check key (values must be 'ok')."""
    return {f"sandbox isolation={pool.sandbox.level.value}": "ok"}


def build_router(get_pool: PoolGetter) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["code"])

    @router.post("/run_code", response_model=RunCodeResponse)
    async def run_code(body: RunCodeRequest, request: Request) -> RunCodeResponse:
        pool = await get_pool(request)
        try:
            files = body.all_files()
            limits = body.limits.over(pool.sandbox.settings.default_limits)
            result = await pool.run(body.code, body.stdin, files, limits)
        except ValueError as exc:
            raise BadRequest(str(exc), field="files") from None
        return RunCodeResponse(**result.model_dump())

    @router.get("/sandbox", response_model=SandboxInfo)
    async def sandbox_info(request: Request) -> SandboxInfo:
        pool = await get_pool(request)
        settings = pool.sandbox.settings
        return SandboxInfo(
            isolation=pool.sandbox.level.value,
            details=pool.sandbox.describe(),
            default_limits=settings.default_limits,
            max_limits=settings.max_limits,
            concurrency=pool.concurrency,
            queue_size=pool.queue_size,
        )

    return router


def create_app(settings: SandboxSettings | None = None) -> FastAPI:
    """A standalone code-execution server. Building the Sandbox in the lifespan raises
    `IsolationUnavailable` below `settings.min_isolation`, so the server does not start."""
    from environments.code.sandbox import Sandbox

    settings = settings or SandboxSettings()
    metrics = Metrics("sandbox")
    state: dict[str, SandboxPool] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        state["pool"] = SandboxPool(Sandbox(settings), metrics)
        try:
            yield
        finally:
            state.pop("pool").shutdown()

    def readiness() -> dict[str, str]:
        pool = state.get("pool")
        return readiness_checks(pool) if pool else {"sandbox": "starting"}

    async def get_pool(_: Request) -> SandboxPool:
        return state["pool"]

    app = base_app("sandbox", metrics=metrics, readiness=readiness, lifespan=lifespan)
    app.include_router(build_router(get_pool))
    return app


__all__ = ["Isolation", "build_router", "create_app", "readiness_checks"]
