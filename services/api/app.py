"""The api service's FastAPI app: job API, tokens, metrics history, dashboard, runner.

Start-up (lifespan): open the job store and run its migrations (`alembic upgrade head`),
register `admin_token` if set, write a bootstrap token if no token exists, then start
the job runner (which first fails jobs a previous process left running).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import text

from services.api.db import open_database
from services.api.errors import install_validation_handler
from services.api.launch import LocalLauncher
from services.api.replay import ReplayTrajectories
from services.api.routes import dashboard, events, jobs
from services.api.routes import metrics as metrics_routes
from services.api.runner import JobRunner
from services.api.settings import ApiSettings
from services.api.store import JobStore
from services.api.tokens import Scope, bootstrap_token, ensure_token
from services.common.app import base_app
from services.common.metrics import Metrics

log = logging.getLogger(__name__)


def _open(app: FastAPI, settings: ApiSettings) -> None:
    db = open_database(settings.resolved_database_url())
    app.state.db = db
    app.state.store = store = JobStore(db)
    if settings.admin_token:
        ensure_token(db, "admin", Scope.ADMIN, settings.admin_token.get_secret_value())
    token_file = settings.resolved_token_file()
    if settings.bootstrap_token and bootstrap_token(db, token_file):
        log.warning("no API token existed: wrote an admin token to %s (mode 0600)", token_file)
    runner = JobRunner(store, settings) if settings.runner_enabled else None
    # Without a runner, cancels still stop what runs on this machine.
    app.state.canceller = runner or JobRunner(store, settings, launcher=LocalLauncher())
    if runner is not None:
        runner.start()
    app.state.runner = runner


def _close(app: FastAPI) -> None:
    if app.state.runner is not None:
        app.state.runner.stop()
    app.state.db.dispose()


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: ApiSettings = app.state.settings
    await run_in_threadpool(_open, app, settings)
    app.state.trajectories = app.state.trajectory_source or ReplayTrajectories(
        settings.endpoints.replay, settings.replay_timeout_s
    )
    try:
        yield
    finally:
        await app.state.trajectories.aclose()
        await run_in_threadpool(_close, app)


def _readiness_check(app: FastAPI) -> dict[str, str]:
    with app.state.db.engine.connect() as connection:
        connection.execute(text("SELECT 1"))
    runner = app.state.runner
    runner_state = "ok" if runner is None or runner.alive() else "runner thread stopped"
    return {"database": "ok", "runner": runner_state}


def create_app(settings: ApiSettings | None = None, *, trajectory_source: Any = None) -> FastAPI:
    """The app; `trajectory_source` replaces the replay service (tests)."""
    settings = settings or ApiSettings()
    metrics = Metrics("api")

    def readiness() -> dict[str, str]:
        return _readiness_check(app)

    app = base_app("api", metrics=metrics, readiness=readiness, lifespan=_lifespan)
    app.state.settings = settings
    app.state.trajectory_source = trajectory_source
    app.state.runner = None
    app.state.metrics_jobs_submitted = metrics.counter("jobs_submitted_total", "Jobs submitted.")
    app.state.metrics_points = metrics.counter(
        "metric_points_total", "Metric points received from jobs."
    )
    install_validation_handler(app)
    for module in (jobs, metrics_routes, events, dashboard):
        app.include_router(module.router)
    return app
