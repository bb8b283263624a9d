"""Where `/v1/jobs/{id}/trajectories` pages come from: the replay service's archive."""

from __future__ import annotations

from typing import Protocol

from services.replay.client import AsyncReplayClient
from services.replay.schemas import TrajectoryPage


class TrajectorySource(Protocol):
    async def page(self, job_id: str, offset: int, limit: int) -> TrajectoryPage: ...

    async def aclose(self) -> None: ...


class ReplayTrajectories:
    """Pages proxied from the replay service (`AsyncReplayClient.trajectories`)."""

    def __init__(self, base_url: str, timeout_s: float) -> None:
        self.client = AsyncReplayClient(base_url, timeout=timeout_s, retries=1)

    async def page(self, job_id: str, offset: int, limit: int) -> TrajectoryPage:
        return await self.client.trajectories(job_id, offset=offset, limit=limit)

    async def aclose(self) -> None:
        await self.client.aclose()
