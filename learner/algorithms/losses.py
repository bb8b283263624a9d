"""Per-token policy losses. Each returns `(loss, stats)`: `loss` is [B, T] (0 on masked
tokens), `stats` holds detached [B, T] tensors for metrics. Reduce with an aggregation
from `learner.algorithms.aggregation`.

Notation: logp = log pi_theta (current, with gradient), prox = log pi_prox (proximal
policy, recomputed by the learner at the start of the step), behav = log mu (behaviour
policy, recorded by the engine), A = advantages, m = loss mask. Log-ratios are masked
before `exp` so padding can never produce inf * 0 = NaN.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

Stats = dict[str, Tensor]


def _masked(x: Tensor, mask: Tensor) -> Tensor:
    return torch.where(mask.bool(), x, torch.zeros_like(x))


def truncated_ratio(log_ratio: Tensor, cap: float) -> tuple[Tensor, Tensor]:
    """(min(exp(log_ratio), cap), exp(log_ratio) > cap), computed in log space so huge
    ratios never overflow."""
    log_cap = math.log(cap)
    return torch.exp(log_ratio.clamp(max=log_cap)), log_ratio > log_cap


def _clipped_surrogate(
    ratio: Tensor, adv: Tensor, weight: Tensor, eps_low: float, eps_high: float
) -> tuple[Tensor, Tensor]:
    """(-weight * min(ratio * A, clip(ratio, 1 - eps_low, 1 + eps_high) * A), where the clip
    bound as a float mask)."""
    unclipped = ratio * adv
    clipped = ratio.clamp(1.0 - eps_low, 1.0 + eps_high) * adv
    return -weight * torch.minimum(unclipped, clipped), (clipped < unclipped).float()


def ppo_clip_decoupled_loss(
    logp: Tensor,
    prox: Tensor,
    behav: Tensor,
    adv: Tensor,
    mask: Tensor,
    eps_low: float,
    eps_high: float,
    behavior_cap: float,
) -> tuple[Tensor, Stats]:
    """Decoupled PPO-clip (AReaL): with r = pi_theta / pi_prox and
    w = min(pi_prox / mu, C) (no gradient),
    loss_t = -w * min(r * A, clip(r, 1 - eps_low, 1 + eps_high) * A)."""
    ratio = torch.exp(_masked(logp - prox, mask))
    weight, truncated = truncated_ratio(_masked(prox - behav, mask).detach(), behavior_cap)
    loss, clipped = _clipped_surrogate(ratio, adv, weight, eps_low, eps_high)
    stats = {
        "ratio": ratio.detach(),
        "clipped": clipped,
        "behavior_ratio": torch.exp(_masked(prox - behav, mask).detach()),
        "behavior_truncated": truncated.float(),
    }
    return _masked(loss, mask), stats


def tis_token_loss(
    logp: Tensor, behav: Tensor, adv: Tensor, mask: Tensor, cap: float
) -> tuple[Tensor, Stats]:
    """Token-level truncated importance sampling (off-policy policy gradient):
    rho_t = min(pi_theta(y_t) / mu(y_t), C) (no gradient), loss_t = -rho_t * A_t * logp_t."""
    return _tis_loss(logp, adv, mask, _masked(logp.detach() - behav, mask), cap)


def tis_sequence_loss(
    logp: Tensor, behav: Tensor, adv: Tensor, mask: Tensor, cap: float
) -> tuple[Tensor, Stats]:
    """Sequence-level truncated importance sampling:
    rho_i = min(prod_t pi_theta(y_t) / mu(y_t), C) = min(exp(sum_t m_t (logp_t - behav_t)), C)
    (no gradient), loss_{i,t} = -rho_i * A_{i,t} * logp_{i,t}."""
    seq_log_ratio = _masked(logp.detach() - behav, mask).sum(-1, keepdim=True)
    return _tis_loss(logp, adv, mask, seq_log_ratio, cap)


def _tis_loss(
    logp: Tensor, adv: Tensor, mask: Tensor, log_ratio: Tensor, cap: float
) -> tuple[Tensor, Stats]:
    """-min(exp(log_ratio), C) * A * logp; `log_ratio` is per token [B, T] or per sequence
    [B, 1] (its stats are broadcast to [B, T])."""
    rho, truncated = truncated_ratio(log_ratio, cap)
    loss = -rho * adv * logp
    shape = logp.shape
    stats = {
        "ratio": torch.ones_like(logp).detach(),
        "clipped": torch.zeros_like(logp).detach(),
        "behavior_ratio": torch.exp(log_ratio).expand(shape),
        "behavior_truncated": truncated.float().expand(shape),
    }
    return _masked(loss, mask), stats


def _sequence_mean(x: Tensor, mask: Tensor) -> Tensor:
    """(sum_t m_t x_t) / max(sum_t m_t, 1), shape [B, 1]."""
    return _masked(x, mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1)


def gspo_loss(
    logp: Tensor,
    prox: Tensor,
    behav: Tensor,
    adv: Tensor,
    mask: Tensor,
    eps_low: float,
    eps_high: float,
    behavior_cap: float,
) -> tuple[Tensor, Stats]:
    """GSPO (token form, equal to GSPO for sequence-level advantages): the sequence ratio
    s_i = exp(mean_t (logp - prox)) (geometric mean over the m_t = 1 tokens) carries the
    gradient as s_{i,t} = sg(s_i) * pi_theta(y_t) / sg(pi_theta(y_t));
    loss_{i,t} = -w_i * min(s_{i,t} A, clip(s_{i,t}, 1 - eps_low, 1 + eps_high) A), with the
    decoupled behaviour correction w_i = min(exp(mean_t (prox - behav)), C) (no gradient)."""
    seq_ratio = torch.exp(_sequence_mean(logp - prox, mask))
    token_ratio = seq_ratio.detach() * torch.exp(logp - logp.detach())
    log_w = _sequence_mean(prox - behav, mask).detach()
    weight, truncated = truncated_ratio(log_w, behavior_cap)
    loss, clipped = _clipped_surrogate(token_ratio, adv, weight, eps_low, eps_high)
    shape = logp.shape
    stats = {
        "ratio": seq_ratio.detach().expand(shape),
        "clipped": clipped,
        "behavior_ratio": torch.exp(log_w).expand(shape),
        "behavior_truncated": truncated.float().expand(shape),
    }
    return _masked(loss, mask), stats


def kl_k3(logp: Tensor, ref: Tensor, mask: Tensor) -> Tensor:
    """KL(pi_theta || pi_ref) per token, Schulman's k3 estimator (unbiased, >= 0):
    k3_t = exp(ref_t - logp_t) - (ref_t - logp_t) - 1."""
    delta = _masked(ref - logp, mask)
    return _masked(torch.exp(delta) - delta - 1.0, mask)


def entropy_from_logits(logits: Tensor) -> Tensor:
    """Entropy of the categorical over the last dim: H = logsumexp(z) - sum_v softmax(z)_v z_v."""
    probs = torch.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - (probs * logits).sum(-1)
