"""The environments service's FastAPI app."""

from __future__ import annotations

from fastapi import FastAPI

from services.common.app import base_app
from environments.settings import EnvironmentsSettings


def create_app(settings: EnvironmentsSettings | None = None) -> FastAPI:
    settings = settings or EnvironmentsSettings()
    app = base_app("environments")
    app.state.settings = settings
    return app
