"""The inference service's FastAPI app.

Routes: the token route `/v1/generate` (what rollout workers use), `/v1/weights`,
`/v1/pause`, `/v1/resume`, `/v1/status`, the OpenAI-compatible ones (`openai_api.py`), and
the standard `/healthz`, `/readyz` (ready once the engine is up), `/metrics`.

Importing this module is cheap: the engine (torch, vllm, transformers) is built in the
lifespan, in the background, so `/healthz` answers while a model loads.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from fastapi import APIRouter, FastAPI, Request

from services.common.app import base_app
from services.common.metrics import Metrics
from services.common.wire import GenerateRequest, GenerateResponse, WeightUpdate, WeightUpdateResult
from services.inference.openai_api import router as openai_router
from services.inference.schemas import InferenceStatus, PauseResult
from services.inference.service import InferenceCore
from services.inference.settings import InferenceSettings

router = APIRouter(tags=["inference"])


def _core(request: Request) -> InferenceCore:
    return request.app.state.core  # type: ignore[no-any-return]


@router.post("/v1/generate", response_model=GenerateResponse)
async def generate(body: GenerateRequest, request: Request) -> GenerateResponse:
    """Token ids in; sampled ids, their logprobs and per-token policy versions out."""
    return await _core(request).generate(body)


@router.post("/v1/weights", response_model=WeightUpdateResult)
async def load_weights(body: WeightUpdate, request: Request) -> WeightUpdateResult:
    """Load policy `version` between decode steps; a failure keeps the old version."""
    return await _core(request).load_weights(body)


@router.get("/v1/weights", response_model=WeightUpdateResult)
async def current_weights(request: Request) -> WeightUpdateResult:
    core = _core(request)
    return WeightUpdateResult(
        version=core.version,
        loaded=core.last_load_error is None,
        load_seconds=core.last_load_seconds or 0.0,
        error=core.last_load_error,
    )


@router.post("/v1/pause", response_model=PauseResult)
async def pause(request: Request) -> PauseResult:
    core = _core(request)
    await core.pause()
    return PauseResult(paused=True, version=core.version)


@router.post("/v1/resume", response_model=PauseResult)
async def resume(request: Request) -> PauseResult:
    core = _core(request)
    await core.resume()
    return PauseResult(paused=False, version=core.version)


@router.get("/v1/status", response_model=InferenceStatus)
async def status(request: Request) -> InferenceStatus:
    return _core(request).status()


def create_app(settings: InferenceSettings | None = None) -> FastAPI:
    settings = settings or InferenceSettings()
    metrics = Metrics("inference")
    core = InferenceCore(settings, metrics)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        starting = asyncio.create_task(core.start(), name="engine-start")
        try:
            yield
        finally:
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            await core.shutdown()

    app = base_app(
        "inference", metrics=metrics, readiness=core.readiness, lifespan=lifespan
    )
    app.state.settings = settings
    app.state.core = core
    app.state.started_at = time.time()
    app.include_router(router)
    app.include_router(openai_router)
    return app
