"""`/healthz`, `/readyz` and `/metrics` for every service."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Response
from pydantic import BaseModel, Field

from services.common.metrics import Metrics

ReadinessCheck = Callable[[], "Awaitable[dict[str, str]] | dict[str, str]"]


class Health(BaseModel):
    status: str = Field(description="'ok' when alive / ready, 'not_ready' otherwise.")
    service: str = Field(description="Which service answered.")
    checks: dict[str, str] = Field(default_factory=dict, description="Per-dependency state.")


async def _run_check(check: ReadinessCheck | None) -> dict[str, str]:
    if check is None:
        return {}
    result = check()
    if inspect.isawaitable(result):
        result = await result
    return dict(result)


def install_standard_routes(
    app: FastAPI, metrics: Metrics, readiness: ReadinessCheck | None = None
) -> None:
    """Liveness (process up), readiness (dependencies answer) and Prometheus metrics.

    `readiness` returns a map of dependency -> state; the service is ready when every
    state is 'ok'. It may raise: that counts as not ready with the error as the state.
    """
    metrics.instrument(app)
    service = metrics.service

    @app.get("/healthz", response_model=Health, tags=["ops"])
    async def healthz() -> Health:
        return Health(status="ok", service=service)

    @app.get("/readyz", response_model=Health, tags=["ops"])
    async def readyz(response: Response) -> Health:
        try:
            checks = await _run_check(readiness)
        except Exception as exc:  # a failing check is a state to report, not a 500
            checks = {"readiness": f"error: {exc}"}
        ready = all(state == "ok" for state in checks.values())
        if not ready:
            response.status_code = 503
        return Health(status="ok" if ready else "not_ready", service=service, checks=checks)

    @app.get("/metrics", tags=["ops"])
    async def prometheus_metrics() -> Response:
        return metrics.render()
