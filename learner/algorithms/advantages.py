"""Advantage estimators: small tensor functions, each with its formula.

Notation: `r` are scalar rewards (one per trajectory, or one per turn), `g` the integer
group index of each entry (entries with equal `g` belong to one group), `n_g` the size of
group g. Every estimator returns 0, never NaN, for a group whose rewards are all equal and
for a singleton group where the estimator needs more than one sample.
"""

from __future__ import annotations

import torch
from torch import Tensor

EPS = 1e-6


def group_index(keys: list[str] | list[tuple[str, ...]]) -> Tensor:
    """Map hashable keys to dense group indices 0..G-1, in order of first appearance."""
    seen: dict[object, int] = {}
    return torch.tensor([seen.setdefault(k, len(seen)) for k in keys], dtype=torch.long)


def _group_sum(values: Tensor, groups: Tensor) -> Tensor:
    """Per-entry sum of its group's values: S_{g(i)}."""
    num = int(groups.max().item()) + 1 if groups.numel() else 0
    sums = torch.zeros(num, dtype=values.dtype).index_add_(0, groups, values)
    return sums[groups]


def group_mean_std(values: Tensor, groups: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Per-entry (group mean, unbiased group std, group size); std is 0 for singletons."""
    values = values.double()
    count = _group_sum(torch.ones_like(values), groups)
    mean = _group_sum(values, groups) / count
    sq = _group_sum((values - mean) ** 2, groups)
    std = torch.where(count > 1, (sq / (count - 1).clamp(min=1)).sqrt(), torch.zeros_like(sq))
    return mean, std, count


def grpo_advantages(rewards: Tensor, groups: Tensor, eps: float = EPS) -> Tensor:
    """GRPO: A_i = (r_i - mean_g(r)) / (std_g(r) + eps), std unbiased; 0 for singletons."""
    mean, std, count = group_mean_std(rewards, groups)
    adv = (rewards.double() - mean) / (std + eps)
    return torch.where(count > 1, adv, torch.zeros_like(adv)).to(rewards.dtype)


def dr_grpo_advantages(rewards: Tensor, groups: Tensor) -> Tensor:
    """Dr.GRPO: A_i = r_i - mean_g(r) (no std normalisation; pair with `constant`
    aggregation for the length-unbiased objective)."""
    mean, _, _ = group_mean_std(rewards, groups)
    return (rewards.double() - mean).to(rewards.dtype)


def rloo_advantages(rewards: Tensor, groups: Tensor) -> Tensor:
    """RLOO: A_i = r_i - (S_g - r_i) / (n_g - 1), the leave-one-out baseline
    (= n_g / (n_g - 1) * (r_i - mean_g)); 0 for singletons."""
    r = rewards.double()
    total = _group_sum(r, groups)
    count = _group_sum(torch.ones_like(r), groups)
    adv = r - (total - r) / (count - 1).clamp(min=1)
    return torch.where(count > 1, adv, torch.zeros_like(adv)).to(rewards.dtype)


def reinforce_pp_advantages(
    rewards: Tensor, weights: Tensor | None = None, eps: float = EPS
) -> Tensor:
    """REINFORCE++ (global batch normalisation, no group baseline):
    A_i = (r_i - mu) / (sigma + eps), with mu, sigma the mean and (biased) std of the
    returns over every trained token of the batch, i.e. r_i weighted by w_i = its token
    count (`weights`; uniform when None)."""
    r = rewards.double()
    w = torch.ones_like(r) if weights is None else weights.double()
    total = w.sum().clamp(min=EPS)
    mu = (w * r).sum() / total
    sigma = ((w * (r - mu) ** 2).sum() / total).sqrt()
    return ((r - mu) / (sigma + eps)).to(rewards.dtype)


def discounted_returns(rewards: Tensor, gamma: float) -> Tensor:
    """Return-to-go of one episode's per-turn rewards: G_t = r_t + gamma * G_{t+1}."""
    out = torch.zeros_like(rewards, dtype=torch.float64)
    running = 0.0
    for t in range(rewards.numel() - 1, -1, -1):
        running = float(rewards[t]) + gamma * running
        out[t] = running
    return out.to(rewards.dtype)


def step_group_advantages(returns: Tensor, step_groups: Tensor, eps: float = EPS) -> Tensor:
    """GiGPO step-level term: A^S_{i,t} = (R_{i,t} - mean_s(R)) / (std_s(R) + eps), where
    s is the step group of turn t of episode i (turns of one task group that acted from
    the same environment state). Singleton step groups and equal returns give 0."""
    return grpo_advantages(returns, step_groups, eps)


def gigpo_advantages(
    episode_advantages: Tensor, step_advantages: Tensor, omega: float = 1.0
) -> Tensor:
    """GiGPO: A_{i,t} = A^E_i + omega * A^S_{i,t}; `episode_advantages` is already
    broadcast to the turns (one entry per (episode, turn), like `step_advantages`)."""
    return episode_advantages + omega * step_advantages


def turn_reward_advantages(turn_returns: Tensor, groups: Tensor, eps: float = EPS) -> Tensor:
    """Turn-level term for environments that give turn rewards: the return-to-go of the
    turn rewards, G_{i,t}, normalised over every turn of the task group g:
    A^T_{i,t} = (G_{i,t} - mean_g(G)) / (std_g(G) + eps); added to the episode advantage."""
    return grpo_advantages(turn_returns, groups, eps)
