"""The reward service's FastAPI app: POST /v1/score, GET /v1/verifiers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request

from services.common.app import base_app
from services.common.metrics import Metrics
from services.common.wire import ScoreRequest, ScoreResponse
from services.reward.schemas import VerifierInfo, VerifierList
from services.reward.scoring import Scorer
from services.reward.settings import RewardSettings
from services.reward.verifiers.base import VerifierRegistry


def create_app(
    settings: RewardSettings | None = None, registry: VerifierRegistry | None = None
) -> FastAPI:
    """The app; `registry` replaces the default verifiers (tests, custom deployments)."""
    settings = settings or RewardSettings()
    metrics = Metrics("reward")
    scorer = Scorer(settings, registry, metrics)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await scorer.aclose()

    app = base_app(
        "reward",
        metrics=metrics,
        readiness=lambda: {"verifiers": "ok" if scorer.registry.names() else "none"},
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.scorer = scorer
    _install_routes(app)
    return app


def _install_routes(app: FastAPI) -> None:
    @app.post("/v1/score", response_model=ScoreResponse, tags=["reward"])
    async def score(body: ScoreRequest, request: Request) -> ScoreResponse:
        """Score a batch; results come back in the order of `items`. A failed item has
        ok=False and `error` set (its reward is not real)."""
        scorer: Scorer = request.app.state.scorer
        return ScoreResponse(results=await scorer.score(body.items))

    @app.get("/v1/verifiers", response_model=VerifierList, tags=["reward"])
    async def verifiers(request: Request) -> VerifierList:
        scorer: Scorer = request.app.state.scorer
        return VerifierList(
            verifiers=[
                VerifierInfo(
                    name=v.name,
                    description=v.description,
                    timeout_s=scorer.settings.timeout_for(v.name),
                )
                for v in scorer.registry
            ]
        )
