"""Build a worker's dependencies from a JobRuntime: the real service clients, the
model's tokenizer, the scorer (reward service, or in-process verifiers when
`endpoints.reward` is None)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from services.common.jobspec import JobRuntime
from services.rollout.backends import ReplayPort, RewardScorer, local_scorer
from services.rollout.chat import ChatTokenizer
from services.rollout.episode import EpisodeLimits, EpisodeRunner
from services.rollout.settings import WorkerConfig
from services.rollout.worker import WorkerDeps


def resolve_model_path(name: str) -> str:
    """A prepared model name -> its local folder; a path or hub name passes through."""
    from services.inference.models import resolve_model

    return resolve_model(name)


def load_chat(runtime: JobRuntime) -> ChatTokenizer:
    return ChatTokenizer.from_pretrained(resolve_model_path(runtime.spec.model.name))


def limits_for(runtime: JobRuntime, config: WorkerConfig, temperature: float | None = None
               ) -> EpisodeLimits:
    return EpisodeLimits.from_spec(
        runtime.spec,
        temperature=temperature,
        generate_timeout_s=config.generate_timeout_s,
        env_timeout_s=config.env_timeout_s,
    )


@contextlib.asynccontextmanager
async def http_deps(
    runtime: JobRuntime,
    config: WorkerConfig,
    chat: ChatTokenizer | None = None,
    temperature: float | None = None,
) -> AsyncIterator[WorkerDeps]:
    """WorkerDeps over the job's services; closes the clients on exit. A `redis://` URL
    as `endpoints.replay` opens the Redis store in-process (as the learner does)."""
    from environments.client import AsyncEnvironmentsClient
    from services.inference.client import AsyncInferenceClient
    from services.replay.async_store import AsyncStore
    from services.replay.client import AsyncReplayClient
    from services.replay.redis_store import RedisStore
    from services.replay.settings import RedisBackend

    ep = runtime.endpoints
    chat = chat or load_chat(runtime)
    async with contextlib.AsyncExitStack() as stack:
        inference = await stack.enter_async_context(AsyncInferenceClient(ep.inference))
        envs = await stack.enter_async_context(
            AsyncEnvironmentsClient(ep.environments, timeout=config.env_timeout_s + 5)
        )
        replay: ReplayPort
        if ep.replay.startswith(("redis://", "rediss://")):  # the store in-process, no hop
            store = AsyncStore(RedisStore(RedisBackend(url=ep.replay)))  # type: ignore[call-arg]
            stack.push_async_callback(store.aclose)
            replay = store
        else:
            replay = await stack.enter_async_context(AsyncReplayClient(ep.replay))
        scorer: RewardScorer
        if ep.reward is None:
            scorer = local_scorer()
            if hasattr(scorer, "aclose"):
                stack.push_async_callback(scorer.aclose)
        else:
            from services.reward.client import AsyncRewardClient

            scorer = await stack.enter_async_context(
                AsyncRewardClient(ep.reward, timeout=config.score_timeout_s)
            )
        runner = EpisodeRunner(chat, inference, envs, limits_for(runtime, config, temperature))
        yield WorkerDeps(replay=replay, runner=runner, scorer=scorer, envs=envs)
