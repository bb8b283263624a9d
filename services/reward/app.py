"""The reward service's FastAPI app."""

from __future__ import annotations

from fastapi import FastAPI

from services.common.app import base_app
from services.reward.settings import RewardSettings


def create_app(settings: RewardSettings | None = None) -> FastAPI:
    settings = settings or RewardSettings()
    app = base_app("reward")
    app.state.settings = settings
    return app
