"""Explicit registries of advantage estimators, policy losses and loss aggregations,
keyed by the names `AlgorithmSpec` accepts (`advantage`, `loss`, `loss_aggregation`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch import Tensor

from learner.algorithms import advantages as adv
from learner.algorithms import aggregation as agg
from learner.algorithms import losses
from services.common.jobspec import AlgorithmSpec

# (rewards [N], group index [N], token counts [N]) -> episode advantages [N]
EpisodeEstimator = Callable[[Tensor, Tensor, Tensor], Tensor]

EPISODE_ESTIMATORS: dict[str, EpisodeEstimator] = {
    "grpo": lambda r, g, w: adv.grpo_advantages(r, g),
    "dr_grpo": lambda r, g, w: adv.dr_grpo_advantages(r, g),
    "rloo": lambda r, g, w: adv.rloo_advantages(r, g),
    "reinforce_pp": lambda r, g, w: adv.reinforce_pp_advantages(r, w),
    # GiGPO's episode-level term is GRPO's; its step-level term is added per turn.
    "gigpo": lambda r, g, w: adv.grpo_advantages(r, g),
}


@dataclass
class LossInputs:
    """Target-aligned [B, T] tensors of one micro-batch."""

    logp: Tensor
    prox: Tensor
    behav: Tensor
    adv: Tensor
    mask: Tensor


PolicyLoss = Callable[[LossInputs, AlgorithmSpec], tuple[Tensor, losses.Stats]]

POLICY_LOSSES: dict[str, PolicyLoss] = {
    "ppo_clip": lambda x, a: losses.ppo_clip_decoupled_loss(
        x.logp, x.prox, x.behav, x.adv, x.mask,
        a.clip_eps_low, a.clip_eps_high, a.behavior_ratio_cap,
    ),
    "gspo": lambda x, a: losses.gspo_loss(
        x.logp, x.prox, x.behav, x.adv, x.mask,
        a.clip_eps_low, a.clip_eps_high, a.behavior_ratio_cap,
    ),
    "tis_token": lambda x, a: losses.tis_token_loss(
        x.logp, x.behav, x.adv, x.mask, a.behavior_ratio_cap
    ),
    "tis_sequence": lambda x, a: losses.tis_sequence_loss(
        x.logp, x.behav, x.adv, x.mask, a.behavior_ratio_cap
    ),
}  # fmt: skip


@dataclass
class Normalizers:
    """Whole-batch totals (all micro-batches, all ranks) for exact accumulation."""

    num_tokens: float
    num_sequences: float
    max_tokens: int


Aggregation = Callable[[Tensor, Tensor, Normalizers], Tensor]

AGGREGATIONS: dict[str, Aggregation] = {
    "token_mean": lambda loss, m, n: agg.token_mean(loss, m, n.num_tokens),
    "sequence_mean": lambda loss, m, n: agg.sequence_mean(loss, m, n.num_sequences),
    "constant": lambda loss, m, n: agg.constant_normalizer(loss, m, n.max_tokens, n.num_sequences),
}


def check_algorithm(spec: AlgorithmSpec) -> None:
    """Fail early, naming the field, when a spec names something not registered."""
    for field, registry in (
        ("advantage", EPISODE_ESTIMATORS),
        ("loss", POLICY_LOSSES),
        ("loss_aggregation", AGGREGATIONS),
    ):
        name = getattr(spec, field)
        if name not in registry:
            known = ", ".join(sorted(registry))
            raise ValueError(f"algorithm.{field}: unknown '{name}' (known: {known})")
