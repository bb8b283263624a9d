"""Property: whatever the episode durations, the learner never consumes a sample older
than max_staleness versions. Real workers, real store (admission + staleness filter),
simulated episodes (tokens stamped with the engine version when sampled) and learner."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common.jobspec import JobSpec
from services.replay.async_store import AsyncStore
from services.replay.memory import MemoryStore
from services.rollout.sim import run_pipeline


def _spec(max_staleness: int, group_size: int, groups: int, concurrency: int) -> JobSpec:
    return JobSpec.model_validate(
        {
            "environments": [{"name": "sim"}],
            "group_size": group_size,
            "batch_size": group_size * groups,
            "max_staleness": max_staleness,
            "budget": {"max_steps": 4},
            "resources": {"episodes_per_worker": concurrency},
        }
    )


@pytest.mark.parametrize("max_staleness", [0, 1, 4])
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    durations=st.lists(st.floats(0.0, 0.03), min_size=1, max_size=40),
    group_size=st.sampled_from([1, 2, 3]),
    groups=st.integers(1, 2),
    concurrency=st.integers(1, 8),
    workers=st.integers(1, 2),
    turns=st.integers(1, 3),
    train_s=st.sampled_from([0.0, 0.005, 0.02]),
)
def test_no_consumed_sample_is_too_stale(
    max_staleness: int,
    durations: list[float],
    group_size: int,
    groups: int,
    concurrency: int,
    workers: int,
    turns: int,
    train_s: float,
) -> None:
    spec = _spec(max_staleness, group_size, groups, concurrency)
    cycle = itertools.cycle(durations)
    replay = AsyncStore(MemoryStore(), poll_interval_s=0.002)

    async def main():  # type: ignore[no-untyped-def]
        return await asyncio.wait_for(
            run_pipeline(spec, replay, "prop", lambda: next(cycle), train_s, workers, turns),
            timeout=60,
        )

    run = asyncio.run(main())
    log = run.learner
    assert log.steps == spec.budget.max_steps
    assert len(log.consumed) == spec.budget.max_steps * spec.batch_size
    for version, oldest in log.consumed:
        assert version - oldest <= max_staleness, (version, oldest)
    if max_staleness == 0:
        assert log.dropped == 0  # the synchronous baseline never wastes an episode
    assert all(o.exit_code == 0 for o in run.outcomes)
    stats = replay.store.stats("prop")
    assert stats.started >= stats.consumed - log.dropped
