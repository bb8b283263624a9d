"""The api service's FastAPI app."""

from __future__ import annotations

from fastapi import FastAPI

from services.common.app import base_app
from services.api.settings import ApiSettings


def create_app(settings: ApiSettings | None = None) -> FastAPI:
    settings = settings or ApiSettings()
    app = base_app("api")
    app.state.settings = settings
    return app
