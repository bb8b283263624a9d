"""Typed clients for the reward service."""

from __future__ import annotations

from collections.abc import Sequence

from services.common.client import AsyncServiceClient, ServiceClient
from services.common.wire import ScoreItem, ScoreRequest, ScoreResponse, ScoreResult
from services.reward.schemas import VerifierInfo, VerifierList


class RewardClient(ServiceClient):
    """Synchronous client for the reward service."""

    def score(self, items: Sequence[ScoreItem]) -> list[ScoreResult]:
        """One result per item, in order (failed items have ok=False)."""
        body = ScoreRequest(items=list(items))
        return self._post_model("/v1/score", body, ScoreResponse).results

    def verifiers(self) -> list[VerifierInfo]:
        return self._get_model("/v1/verifiers", VerifierList).verifiers


class AsyncRewardClient(AsyncServiceClient):
    """Asynchronous client for the reward service."""

    async def score(self, items: Sequence[ScoreItem]) -> list[ScoreResult]:
        """One result per item, in order (failed items have ok=False)."""
        body = ScoreRequest(items=list(items))
        return (await self._post_model("/v1/score", body, ScoreResponse)).results

    async def verifiers(self) -> list[VerifierInfo]:
        return (await self._get_model("/v1/verifiers", VerifierList)).verifiers
