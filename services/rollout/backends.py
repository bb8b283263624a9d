"""What the rollout loop talks to, as protocols. The real clients
(`AsyncInferenceClient`, `AsyncEnvironmentsClient`, `AsyncRewardClient`, the replay
clients and `AsyncStore`) satisfy them; tests and benches plug in simulated ones."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from services.common.wire import (
    GenerateResponse,
    PolicyPublication,
    SamplingParams,
    ScoreItem,
    ScoreResult,
    SessionCreate,
    SessionInfo,
    StepResult,
    ToolCall,
    Trajectory,
)
from services.replay.schemas import AdmitResponse

log = logging.getLogger(__name__)


class Generator(Protocol):
    async def generate(
        self,
        prompt_token_ids: list[int],
        sampling: SamplingParams | None = None,
        episode_id: str | None = None,
    ) -> GenerateResponse: ...


class EnvSessions(Protocol):
    async def create_session(self, request: SessionCreate) -> SessionInfo: ...
    async def step(self, session_id: str, call: ToolCall) -> StepResult: ...
    async def close_session(self, session_id: str) -> None: ...
    async def list_tasks(
        self, env: str, split: Any = "train", offset: int = 0, limit: int = 100,
        task_set: str | None = None,
    ) -> Any: ...


class RewardScorer(Protocol):
    async def score(self, items: Sequence[ScoreItem]) -> list[ScoreResult]: ...


class ReplayPort(Protocol):
    """The part of the replay contract a rollout worker uses."""

    async def put_many(self, trajs: Iterable[Trajectory]) -> None: ...
    async def admit(
        self, job_id: str, version: Any, max_staleness: int | None = None,
        batch_size: int | None = None, count: int = 1,
    ) -> AdmitResponse: ...
    async def release(self, job_id: str, count: int) -> AdmitResponse: ...
    async def latest_publication(self, job_id: str) -> PolicyPublication | None: ...


class EmbeddedScorer:
    """In-process verifiers (services.reward) for when no reward service is configured."""

    def __init__(self) -> None:
        from services.reward.scoring import Scorer
        from services.reward.settings import RewardSettings

        self._scorer = Scorer(RewardSettings())

    async def score(self, items: Sequence[ScoreItem]) -> list[ScoreResult]:
        return await self._scorer.score(items)

    async def aclose(self) -> None:
        await self._scorer.aclose()


class EnvRewardScorer:
    """Last-resort scorer: the environment's own reward (0 when it gave none)."""

    async def score(self, items: Sequence[ScoreItem]) -> list[ScoreResult]:
        return [
            ScoreResult(
                reward=item.env_reward or 0.0,
                verifier="env_reward",
                ok=item.env_reward is not None,
                error=None if item.env_reward is not None else "no env reward",
            )
            for item in items
        ]


def local_scorer() -> RewardScorer:
    """The in-process fallback: services.reward's verifiers when importable."""
    try:
        return EmbeddedScorer()
    except ImportError as exc:  # a slim install without the reward extras
        log.warning("embedded verifiers unavailable (%s); using env rewards", exc)
        return EnvRewardScorer()
