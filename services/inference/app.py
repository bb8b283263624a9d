"""The inference service's FastAPI app."""

from __future__ import annotations

from fastapi import FastAPI

from services.common.app import base_app
from services.inference.settings import InferenceSettings


def create_app(settings: InferenceSettings | None = None) -> FastAPI:
    settings = settings or InferenceSettings()
    app = base_app("inference")
    app.state.settings = settings
    return app
