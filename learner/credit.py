"""Credit assignment: trajectories -> one advantage per token.

1. Episode advantages A^E_i from the configured estimator over the trajectory rewards,
   grouped by `group_id`.
2. Per model turn (`turn_spans`; one turn covering everything when absent):
   - GiGPO: A_{i,t} = A^E_i + omega * A^S_{i,t}, step groups keyed by
     (group_id, step_keys[t]); step returns are the discounted return-to-go of the turn
     rewards with the episode reward added at the last turn.
   - otherwise, where trajectories carry `turn_rewards`: A_{i,t} = A^E_i + A^T_{i,t}.
   - otherwise A_{i,t} = A^E_i.
3. Every token of turn t gets A_{i,t}; tokens outside every span get A^E_i. The loss
   mask decides which tokens are trained.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from learner.algorithms import EPISODE_ESTIMATORS
from learner.algorithms import advantages as adv
from services.common.wire import Trajectory


@dataclass(frozen=True)
class Turn:
    episode: int
    index: int
    start: int
    end: int


def _turns(trajectories: list[Trajectory]) -> list[Turn]:
    out = []
    for i, traj in enumerate(trajectories):
        spans = traj.turn_spans or []
        if not spans:
            out.append(Turn(i, 0, 0, len(traj.token_ids)))
        out.extend(Turn(i, k, s.start, s.end) for k, s in enumerate(spans))
    return out


def _turn_rewards(traj: Trajectory, num_turns: int) -> Tensor:
    rewards = torch.zeros(num_turns, dtype=torch.float64)
    given = traj.turn_rewards or []
    for k in range(min(num_turns, len(given))):
        rewards[k] = given[k]
    return rewards


def _step_returns(trajs: list[Trajectory], counts: list[int], gamma: float) -> Tensor:
    parts = []
    for traj, n in zip(trajs, counts, strict=True):
        rewards = _turn_rewards(traj, n)
        rewards[-1] += traj.reward
        parts.append(adv.discounted_returns(rewards, gamma))
    return torch.cat(parts)


def _turn_returns(trajs: list[Trajectory], counts: list[int], gamma: float) -> Tensor:
    return torch.cat(
        [
            adv.discounted_returns(_turn_rewards(t, n), gamma)
            for t, n in zip(trajs, counts, strict=True)
        ]
    )


def _step_keys(trajs: list[Trajectory], turns: list[Turn]) -> list[tuple[str, str]]:
    keys = []
    for turn in turns:
        traj = trajs[turn.episode]
        known = traj.step_keys or []
        key = (
            known[turn.index] if turn.index < len(known) else f"unique:{turn.episode}:{turn.index}"
        )
        keys.append((traj.group_id, key))
    return keys


def turn_advantages(
    trajs: list[Trajectory], estimator: str, gamma: float = 1.0, omega: float = 1.0
) -> tuple[list[Turn], Tensor, Tensor]:
    """(turns, per-turn advantages, episode advantages)."""
    rewards = torch.tensor([t.reward for t in trajs], dtype=torch.float64)
    groups = adv.group_index([t.group_id for t in trajs])
    weights = torch.tensor([max(t.num_model_tokens, 1) for t in trajs], dtype=torch.float64)
    episode = EPISODE_ESTIMATORS[estimator](rewards, groups, weights)
    turns = _turns(trajs)
    counts = [sum(1 for u in turns if u.episode == i) for i in range(len(trajs))]
    owner = torch.tensor([u.episode for u in turns], dtype=torch.long)
    per_turn = episode[owner].clone()
    if estimator == "gigpo":
        step_groups = adv.group_index(_step_keys(trajs, turns))
        returns = _step_returns(trajs, counts, gamma)
        per_turn += omega * adv.step_group_advantages(returns, step_groups)
    elif any(t.turn_rewards for t in trajs):
        per_turn += adv.turn_reward_advantages(_turn_returns(trajs, counts, gamma), groups[owner])
    return turns, per_turn, episode


def token_advantages(
    trajs: list[Trajectory], estimator: str, gamma: float = 1.0, omega: float = 1.0
) -> list[Tensor]:
    """One float32 tensor per trajectory, aligned with its `token_ids`."""
    turns, per_turn, episode = turn_advantages(trajs, estimator, gamma, omega)
    out = [torch.full((len(t.token_ids),), float(episode[i])) for i, t in enumerate(trajs)]
    for turn, value in zip(turns, per_turn.tolist(), strict=True):
        out[turn.episode][turn.start : turn.end] = value
    return out
