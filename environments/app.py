"""The environments service's FastAPI app: one server for every registered environment.

Routes: `POST /v1/sessions` (reset), `POST /v1/sessions/{id}/step`,
`DELETE /v1/sessions/{id}`, `GET /v1/tasks`, `GET /v1/environments`, and the MCP view
of the same tools at `/mcp` (see `environments.mcp_view`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator
from typing import Literal

from fastapi import APIRouter, FastAPI, Query, Request, Response

from environments.schemas import EnvironmentList, TaskList
from environments.sessions import EnvironmentHost
from environments.settings import EnvironmentsSettings
from services.common.app import base_app
from services.common.metrics import Metrics
from services.common.wire import SessionCreate, SessionInfo, StepRequest, StepResult

log = logging.getLogger(__name__)


def _host(request: Request) -> EnvironmentHost:
    return request.app.state.host


def build_router() -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["environments"])

    @router.post("/sessions", response_model=SessionInfo)
    async def create_session(body: SessionCreate, request: Request) -> SessionInfo:
        return await _host(request).create(body)

    @router.post("/sessions/{session_id}/step", response_model=StepResult)
    async def step(session_id: str, body: StepRequest, request: Request) -> StepResult:
        return await _host(request).step(session_id, body.tool_call)

    @router.delete("/sessions/{session_id}", status_code=204)
    async def close_session(session_id: str, request: Request) -> Response:
        await _host(request).close(session_id)
        return Response(status_code=204)

    @router.get("/tasks", response_model=TaskList)
    async def list_tasks(
        request: Request,
        env: str = Query(description="Environment name."),
        split: Literal["train", "eval"] = Query("train", description="Which split."),
        offset: int = Query(0, ge=0, description="Index of the first task returned."),
        limit: int = Query(100, ge=1, le=1000, description="Most tasks returned."),
        task_set: str | None = Query(None, description="Task set (default: the env's own)."),
    ) -> TaskList:
        host = _host(request)
        tasks = await host.tasks(env, split, offset, limit, task_set)
        name = task_set or (await host.loaded(env)).cls.task_set_names[0]
        return TaskList(env=env, task_set=name, split=split, offset=offset, tasks=tasks)

    @router.get("/environments", response_model=EnvironmentList)
    async def list_environments(request: Request) -> EnvironmentList:
        return EnvironmentList(environments=_host(request).describe())

    return router


def _include_env_routes(app: FastAPI, host: EnvironmentHost) -> None:
    """Mount the extra routes environments declare (`Environment.http_routes`)."""
    from environments.registry import get_environment

    for name in host.env_names:
        try:
            cls = get_environment(name)
        except Exception as exc:  # reported by /readyz when the env is loaded
            log.warning("environment %s: cannot import for its routes: %s", name, exc)
            continue

        async def shared(name: str = name) -> object:
            return (await host.loaded(name)).shared

        router = cls.http_routes(shared)
        if router is not None:
            app.include_router(router)


def create_app(settings: EnvironmentsSettings | None = None) -> FastAPI:
    settings = settings or EnvironmentsSettings()
    metrics = Metrics("environments")
    host = EnvironmentHost(settings, metrics)
    mcp_view = None
    if settings.mcp:
        from environments.mcp_view import McpView

        mcp_view = McpView(host)
        mcp_routes = mcp_view.http_app(settings.host).routes

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        previous_interval = sys.getswitchinterval()
        sys.setswitchinterval(settings.gil_switch_interval_s)
        preload = asyncio.create_task(asyncio.to_thread(host.preload)) if settings.preload else None
        sweeper = asyncio.create_task(host.sweep_forever())
        async with contextlib.AsyncExitStack() as stack:
            if mcp_view is not None:
                await stack.enter_async_context(mcp_view.running())
            try:
                yield
            finally:
                sweeper.cancel()
                if preload is not None and not preload.done():
                    log.info("shutting down while environments are still loading")
                host.shutdown()
                sys.setswitchinterval(previous_interval)

    app = base_app("environments", metrics=metrics, readiness=host.readiness, lifespan=lifespan)
    app.state.settings = settings
    app.state.host = host
    app.include_router(build_router())
    _include_env_routes(app, host)
    if mcp_view is not None:
        app.router.routes.extend(mcp_routes)
    return app
