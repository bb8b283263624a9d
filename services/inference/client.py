"""Typed clients for the inference service (and its router, which speaks the same API)."""

from __future__ import annotations

import httpx

from services.common.client import AsyncServiceClient, ServiceClient
from services.common.wire import (
    GenerateRequest,
    GenerateResponse,
    SamplingParams,
    WeightUpdate,
    WeightUpdateResult,
)
from services.inference.schemas import InferenceStatus, PauseResult

# Generation can legitimately take minutes; connecting must not.
GENERATE_TIMEOUT = httpx.Timeout(600.0, connect=5.0)


def _request(prompt_token_ids: list[int], sampling: SamplingParams | None,
             episode_id: str | None) -> GenerateRequest:
    return GenerateRequest(
        prompt_token_ids=prompt_token_ids,
        sampling=sampling or SamplingParams(),
        episode_id=episode_id,
    )


class InferenceClient(ServiceClient):
    """Synchronous client for the inference service."""

    def generate(
        self,
        prompt_token_ids: list[int],
        sampling: SamplingParams | None = None,
        episode_id: str | None = None,
    ) -> GenerateResponse:
        body = _request(prompt_token_ids, sampling, episode_id)
        return self._post_model("/v1/generate", body, GenerateResponse, timeout=GENERATE_TIMEOUT)

    def load_weights(self, version: int, path: str, timeout_s: float = 300.0) -> WeightUpdateResult:
        body = WeightUpdate(version=version, path=path, timeout_s=timeout_s)
        return self._post_model("/v1/weights", body, WeightUpdateResult, timeout=timeout_s + 30)

    def pause(self) -> PauseResult:
        return self._post_model("/v1/pause", None, PauseResult)

    def resume(self) -> PauseResult:
        return self._post_model("/v1/resume", None, PauseResult)

    def status(self) -> InferenceStatus:
        return self._get_model("/v1/status", InferenceStatus)


class AsyncInferenceClient(AsyncServiceClient):
    """Asynchronous client for the inference service (the rollout loop uses this)."""

    async def generate(
        self,
        prompt_token_ids: list[int],
        sampling: SamplingParams | None = None,
        episode_id: str | None = None,
    ) -> GenerateResponse:
        body = _request(prompt_token_ids, sampling, episode_id)
        return await self._post_model(
            "/v1/generate", body, GenerateResponse, timeout=GENERATE_TIMEOUT
        )

    async def load_weights(
        self, version: int, path: str, timeout_s: float = 300.0
    ) -> WeightUpdateResult:
        body = WeightUpdate(version=version, path=path, timeout_s=timeout_s)
        return await self._post_model(
            "/v1/weights", body, WeightUpdateResult, timeout=timeout_s + 30
        )

    async def pause(self) -> PauseResult:
        return await self._post_model("/v1/pause", None, PauseResult)

    async def resume(self) -> PauseResult:
        return await self._post_model("/v1/resume", None, PauseResult)

    async def status(self) -> InferenceStatus:
        return await self._get_model("/v1/status", InferenceStatus)
