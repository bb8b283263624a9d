"""The rollout service's FastAPI app."""

from __future__ import annotations

from fastapi import FastAPI

from services.common.app import base_app
from services.rollout.settings import RolloutSettings


def create_app(settings: RolloutSettings | None = None) -> FastAPI:
    settings = settings or RolloutSettings()
    app = base_app("rollout")
    app.state.settings = settings
    return app
