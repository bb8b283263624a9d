"""The staleness bound with the Redis store shared by several workers (real server)."""

from __future__ import annotations

import asyncio
import random
import uuid

import pytest

from services.common.jobspec import JobSpec
from services.replay.async_store import AsyncStore
from services.replay.settings import RedisBackend
from services.replay.store import make_store
from services.rollout.sim import run_pipeline


@pytest.mark.parametrize("max_staleness", [0, 1, 4])
def test_bound_holds_on_redis(max_staleness: int) -> None:
    store = make_store(RedisBackend(prefix=f"slipstream-test:{uuid.uuid4().hex[:8]}"))
    if not store.ping():
        pytest.skip("no Redis at 127.0.0.1:6379")
    spec = JobSpec.model_validate({
        "environments": [{"name": "sim"}], "group_size": 2, "batch_size": 4,
        "max_staleness": max_staleness, "budget": {"max_steps": 5},
        "resources": {"episodes_per_worker": 6},
    })
    rng = random.Random(max_staleness)
    duration = lambda: 0.2 if rng.random() < 0.15 else 0.005  # noqa: E731
    try:
        run = asyncio.run(asyncio.wait_for(
            run_pipeline(spec, AsyncStore(store, 0.005), "jr", duration, 0.01, workers=3),
            timeout=120,
        ))
        assert run.learner.steps == 5
        assert all(v - oldest <= max_staleness for v, oldest in run.learner.consumed)
        assert all(o.exit_code == 0 for o in run.outcomes)
    finally:
        store.delete_job("jr")
        store.close()
