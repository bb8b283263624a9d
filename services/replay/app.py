"""The replay service's FastAPI app."""

from __future__ import annotations

from fastapi import FastAPI

from services.common.app import base_app
from services.replay.settings import ReplaySettings


def create_app(settings: ReplaySettings | None = None) -> FastAPI:
    settings = settings or ReplaySettings()
    app = base_app("replay")
    app.state.settings = settings
    return app
