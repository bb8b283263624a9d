"""The async faces (in-process AsyncStore and AsyncReplayClient) behave alike."""

from __future__ import annotations

import asyncio

import pytest
from replay_fixtures import make_group, serve_app

from services.common.wire import PolicyPublication
from services.replay.app import create_app
from services.replay.async_store import AsyncStore
from services.replay.client import AsyncReplayClient
from services.replay.memory import MemoryStore
from services.replay.settings import ReplaySettings


async def _exercise(store, job_id: str) -> None:  # type: ignore[no-untyped-def]
    assert await store.latest_publication(job_id) is None
    assert (await store.admit(job_id, 0, 0, 2, count=2)).admitted == 2
    waiter = asyncio.create_task(store.take_batch(job_id, 0, 0, 1, wait_s=10))
    await asyncio.sleep(0.2)
    await store.put_many(make_group(job_id, 2))
    batch = await waiter
    assert batch is not None and len(batch.trajectories) == 2
    assert await store.ack(job_id, batch.batch_id)
    await store.publish(PolicyPublication(job_id=job_id, version=1, checkpoint_path="/c"))
    assert (await store.latest_publication(job_id)).version == 1
    assert (await store.stats(job_id)).consumed == 2
    assert (await store.trajectories(job_id)).total == 2
    assert (await store.release(job_id, 1)).started == 1
    await store.delete_job(job_id)


@pytest.mark.parametrize("kind", ["in-process", "http"])
async def test_async_faces(kind: str) -> None:
    memory = MemoryStore()
    if kind == "in-process":
        await _exercise(AsyncStore(memory, poll_interval_s=0.01), "job-async")
        return
    with serve_app(create_app(ReplaySettings(), store=memory)) as url:
        async with AsyncReplayClient(url) as client:
            await _exercise(client, "job-async")
