"""The FastAPI scaffolding every service's `create_app(settings)` starts from."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from fastapi import FastAPI

from services.common.errors import install_error_handlers
from services.common.health import ReadinessCheck, install_standard_routes
from services.common.metrics import Metrics

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def base_app(
    service: str,
    *,
    metrics: Metrics | None = None,
    readiness: ReadinessCheck | None = None,
    lifespan: Lifespan | None = None,
    version: str = "0.1.0",
) -> FastAPI:
    """A FastAPI app with typed error rendering, request metrics, /healthz, /readyz and
    /metrics already wired. The Metrics object is kept on `app.state.metrics`."""
    metrics = metrics or Metrics(service)
    app = FastAPI(title=f"slipstream-{service}", version=version, lifespan=lifespan)
    app.state.metrics = metrics
    install_error_handlers(app)
    install_standard_routes(app, metrics, readiness)
    return app


