"""`AsyncStore`: the async face of an in-process store, with the method names of
`AsyncReplayClient`, so the rollout worker can run embedded (memory store in the same
process) or against the replay service unchanged.

Calls run in worker threads (Redis I/O never blocks the event loop); a blocking take polls
instead of parking a thread for up to `wait_s`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from services.common.wire import PolicyPublication, Trajectory
from services.replay.schemas import (
    AdmitRequest,
    AdmitResponse,
    Batch,
    ReplayStats,
    TakeRequest,
    TrajectoryPage,
)
from services.replay.store import BaseStore, as_admit_request, as_take_request


class AsyncStore:
    def __init__(self, store: BaseStore, poll_interval_s: float = 0.05) -> None:
        self.store = store
        self.poll_interval_s = poll_interval_s

    async def put(self, traj: Trajectory) -> None:
        await asyncio.to_thread(self.store.put, traj)

    async def put_many(self, trajs: Iterable[Trajectory]) -> None:
        await asyncio.to_thread(self.store.put_many, list(trajs))

    async def admit(
        self,
        job_id: str,
        version: AdmitRequest | int,
        max_staleness: int | None = None,
        batch_size: int | None = None,
        count: int = 1,
    ) -> AdmitResponse:
        req = as_admit_request(version, max_staleness, batch_size, count)
        return await asyncio.to_thread(self.store.admit, job_id, req)

    async def try_admit(
        self, job_id: str, version: int, max_staleness: int, batch_size: int, count: int = 1
    ) -> AdmitResponse:
        return await self.admit(job_id, version, max_staleness, batch_size, count)

    async def release(self, job_id: str, count: int) -> AdmitResponse:
        return await asyncio.to_thread(self.store.release, job_id, count)

    async def take_batch(
        self,
        job_id: str,
        version: TakeRequest | int,
        max_staleness: int | None = None,
        num_groups: int | None = None,
        wait_s: float = 0.0,
    ) -> Batch | None:
        req = as_take_request(version, max_staleness, num_groups, wait_s)
        once = req.model_copy(update={"wait_s": 0.0})
        deadline = time.monotonic() + req.wait_s
        while True:
            batch = await asyncio.to_thread(self.store.take_batch, job_id, once)
            remaining = deadline - time.monotonic()
            if batch is not None or remaining <= 0:
                return batch
            await asyncio.sleep(min(self.poll_interval_s, remaining))

    async def ack(self, job_id: str, batch_id: str) -> bool:
        return await asyncio.to_thread(self.store.ack, job_id, batch_id)

    async def recover(self, job_id: str) -> int:
        return await asyncio.to_thread(self.store.recover, job_id)

    async def stats(self, job_id: str) -> ReplayStats:
        return await asyncio.to_thread(self.store.stats, job_id)

    async def trajectories(self, job_id: str, offset: int = 0, limit: int = 50) -> TrajectoryPage:
        return await asyncio.to_thread(self.store.archive, job_id, offset, limit)

    archive = trajectories

    async def publish(self, pub: PolicyPublication) -> None:
        await asyncio.to_thread(self.store.publish, pub)

    async def latest_publication(self, job_id: str) -> PolicyPublication | None:
        return await asyncio.to_thread(self.store.latest_publication, job_id)

    async def finish(self, job_id: str, reason: str = "finished") -> None:
        await asyncio.to_thread(self.store.finish, job_id, reason)

    async def delete_job(self, job_id: str) -> None:
        await asyncio.to_thread(self.store.delete_job, job_id)

    async def ping(self) -> bool:
        return await asyncio.to_thread(self.store.ping)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.store.close)
