"""web (and any environment that grades itself): the reward the environment computed at
its graded finish, carried in `ScoreItem.env_reward`."""

from __future__ import annotations

import math

from services.common.wire import ScoreItem
from services.reward.verifiers.base import Verdict, Verifier, VerifierError


class EnvRewardVerifier(Verifier):
    """Passes the environment's own grade through, after checking it is a real number."""

    def __init__(self, name: str = "web", description: str | None = None) -> None:
        self.name = name
        self.description = description or (
            "Task success from the environment's graded finish (ScoreItem.env_reward); an "
            "item without one is a verifier failure, not a 0."
        )

    def score(self, item: ScoreItem) -> Verdict:
        if item.env_reward is None:
            raise VerifierError(
                f"{item.env} item {item.task_id} has no env_reward (episode never finished "
                "with a graded submission?)"
            )
        if not math.isfinite(item.env_reward):
            raise VerifierError(f"env_reward {item.env_reward!r} is not a finite number")
        return Verdict(float(item.env_reward), {"source": "env_reward"})
