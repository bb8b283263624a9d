"""Accessors for what the app keeps on `app.state` (set up in the lifespan)."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from services.api.runner import JobRunner
from services.api.settings import ApiSettings
from services.api.store import JobStore


def store(request: Request) -> JobStore:
    return request.app.state.store


def runner(request: Request) -> JobRunner:
    return request.app.state.runner


def settings(request: Request) -> ApiSettings:
    return request.app.state.settings


def trajectories(request: Request) -> Any:
    return request.app.state.trajectories
