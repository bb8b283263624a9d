"""Typed clients for the reward service.

`score(items)` returns one ScoreResult per item, in order; a failed item has ok=False and
`error` set (its reward is not real). Empty input gives an empty list; large inputs are
sent in requests of at most MAX_BATCH items.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from services.common.client import AsyncServiceClient, ServiceClient
from services.common.wire import ScoreItem, ScoreRequest, ScoreResponse, ScoreResult
from services.reward.schemas import VerifierInfo, VerifierList

MAX_BATCH = 1024  # ScoreRequest.items max_length


def _requests(items: Sequence[ScoreItem]) -> Iterator[ScoreRequest]:
    for start in range(0, len(items), MAX_BATCH):
        yield ScoreRequest(items=list(items[start : start + MAX_BATCH]))


class RewardClient(ServiceClient):
    """Synchronous client for the reward service."""

    def score(self, items: Sequence[ScoreItem]) -> list[ScoreResult]:
        results: list[ScoreResult] = []
        for body in _requests(items):
            results.extend(self._post_model("/v1/score", body, ScoreResponse).results)
        return results

    def verifiers(self) -> list[VerifierInfo]:
        return self._get_model("/v1/verifiers", VerifierList).verifiers


class AsyncRewardClient(AsyncServiceClient):
    """Asynchronous client for the reward service."""

    async def score(self, items: Sequence[ScoreItem]) -> list[ScoreResult]:
        results: list[ScoreResult] = []
        for body in _requests(items):
            results.extend((await self._post_model("/v1/score", body, ScoreResponse)).results)
        return results

    async def verifiers(self) -> list[VerifierInfo]:
        return (await self._get_model("/v1/verifiers", VerifierList)).verifiers
